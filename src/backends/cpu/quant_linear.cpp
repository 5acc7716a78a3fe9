// quantize_linear of f32 values to int8 with one scale and zero point per tensor or per row
// (a PTQ graph's input), and quantize_rows (the dynamic int8 precision's activations, each row
// by its own max): one vectorized pass, where the decomposition is a region, a reduction and a
// separate saturating cast. The same arithmetic as the op's meaning: x / scale (a division, not
// a reciprocal), rounded half to even, plus the zero point, clamped to [−128, 127]; NaN becomes 0
// as the cast makes it. And requantize, the integer layers' epilogue, in 64-bit integers where
// its decomposition is a dozen i64 passes.
#include <algorithm>
#include <cmath>
#include <optional>

#include "backends/cpu/kernels.h"
#include "backends/cpu/simd.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::backends::cpu {

namespace {

using ir::Op;

// Whether v (of shape s) is one value for the whole x, or one per row of x (x's shape, last dim 1).
bool per_tensor(const Shape& s) {
  for (const Dim& d : s)
    if (d != Dim(1)) return false;
  return true;
}
bool per_row(const Shape& s, const Shape& x) {
  if (s.size() != x.size() || s.empty() || s.back() != Dim(1)) return false;
  for (size_t i = 0; i + 1 < s.size(); ++i)
    if (s[i] != x[i]) return false;
  return true;
}

bool claims_quantize_linear(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>&, const ir::Attrs&) {
  if (in[0].dtype != DType::f32 || in[1].dtype != DType::f32 || in[2].dtype != DType::i8 || in[0].shape.empty()) return false;
  auto ok = [&](const Shape& s) { return per_tensor(s) || per_row(s, in[0].shape); };
  return ok(in[1].shape) && ok(in[2].shape);
}

HostKernel make_quantize_linear(const ir::Node& n, const ir::Graph& g) {
  const bool row_scale = !per_tensor(g.type(n.inputs[1]).shape), row_zp = !per_tensor(g.type(n.inputs[2]).shape);
  return [=](const KernelArgs& a) {
    const float* x = a.in[0].as<float>();
    const float* s = a.in[1].as<float>();
    const int8_t* z = a.in[2].as<int8_t>();
    int8_t* y = a.out[0].as<int8_t>();
    const int64_t cols = a.in[0].shape.back(), rows = cols ? a.in[0].numel / cols : 0;
    rlx::parallel_for(rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(cols, 1)), [&](int64_t lo, int64_t hi) {
      for (int64_t r = lo; r < hi; ++r) {
        const float sc = s[row_scale ? r : 0], zp = static_cast<float>(z[row_zp ? r : 0]);
        simd::quantize_i8(x + r * cols, cols, sc, zp, y + r * cols);
      }
    });
  };
}

bool claims_quantize_rows(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>&, const ir::Attrs&) {
  return in[0].dtype == DType::f32 && !in[0].shape.empty();
}

// Each row once from memory: its max |x| (in cache after this), then the row quantized by it.
HostKernel make_quantize_rows(const ir::Node&, const ir::Graph&) {
  return [](const KernelArgs& a) {
    const float* x = a.in[0].as<float>();
    int8_t* q = a.out[0].as<int8_t>();
    float* s = a.out[1].as<float>();
    const int64_t cols = a.in[0].shape.back(), rows = cols ? a.in[0].numel / cols : 0;
    rlx::parallel_for(rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(cols, 1)), [&](int64_t lo, int64_t hi) {
      for (int64_t r = lo; r < hi; ++r) {
        const float m = simd::abs_max(x + r * cols, cols);
        const float sc = m == 0.0f ? 1.0f : m / 127.0f;  // the decomposition's select and division
        s[r] = sc;
        simd::quantize_i8(x + r * cols, cols, sc, 0.0f, q + r * cols);
      }
    });
  };
}

// requantize's multiplier and shift: one value, or one per channel along a single axis of the
// accumulator. The stride of that axis in elements (inner) and its length; nullopt otherwise.
std::optional<std::pair<int64_t, int64_t>> channel_axis(const Shape& p, const Shape& acc) {
  if (per_tensor(p)) return std::pair<int64_t, int64_t>{1, 1};
  if (p.size() > acc.size()) return std::nullopt;
  const size_t lead = acc.size() - p.size();  // p broadcasts from the right
  int axis = -1;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] == Dim(1)) continue;
    if (axis >= 0 || p[i] != acc[lead + i] || !p[i].is_static()) return std::nullopt;
    axis = static_cast<int>(lead + i);
  }
  int64_t inner = 1;
  for (size_t i = static_cast<size_t>(axis) + 1; i < acc.size(); ++i) {
    if (!acc[i].is_static()) return std::nullopt;
    inner *= acc[i].value();
  }
  return std::pair<int64_t, int64_t>{inner, acc[static_cast<size_t>(axis)].value()};
}

// The channel axis multiplier and shift share (inner stride, length): {1, 1} when both are one
// value; nullopt when they run along different axes (the decomposition takes those).
std::optional<std::pair<int64_t, int64_t>> requantize_axis(const std::vector<ir::Type>& in) {
  auto m = channel_axis(in[1].shape, in[0].shape), s = channel_axis(in[2].shape, in[0].shape);
  if (!m || !s) return std::nullopt;
  if (m->second == 1) return s;
  if (s->second == 1 || *s == *m) return m;
  return std::nullopt;
}

bool claims_requantize(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs&) {
  if (in[0].dtype != DType::i32 || in[1].dtype != DType::i32 || in[2].dtype != DType::i32) return false;
  if (out[0].dtype != DType::i8 && out[0].dtype != DType::u8) return false;
  return requantize_axis(in).has_value();
}

// The op's meaning in 64-bit integers: ⌊(acc·m + 2^(s−1)) / 2^s⌋ is an arithmetic shift right;
// runs of `inner` elements share one multiplier and shift, a tight loop each.
HostKernel make_requantize(const ir::Node& n, const ir::Graph& g) {
  std::vector<ir::Type> in;
  for (ir::ValueId v : n.inputs) in.push_back(g.type(v));
  const auto axis = *requantize_axis(in);
  const int64_t inner = axis.first, len = axis.second;
  const bool m_channels = !per_tensor(in[1].shape), s_channels = !per_tensor(in[2].shape);
  const int64_t zp = n.attrs.i("zero_point"), lo = n.attrs.i("lo"), hi = n.attrs.i("hi");
  return [=](const KernelArgs& a) {
    const int32_t* x = a.in[0].as<int32_t>();
    const int32_t* m = a.in[1].as<int32_t>();
    const int32_t* sh = a.in[2].as<int32_t>();
    for (int64_t c = 0; c < (s_channels ? len : 1); ++c)
      if (sh[c] < 0 || sh[c] > 62) throw Error(ErrorKind::invalid_argument, cat("requantize: shift ", sh[c], " is outside [0, 62]"));
    uint8_t* y = a.out[0].as<uint8_t>();
    const int64_t run = len == 1 ? a.in[0].numel : inner, runs = run ? a.in[0].numel / run : 0;
    rlx::parallel_for(runs, std::max<int64_t>(1, 16384 / std::max<int64_t>(run, 1)), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const int64_t c = r % len, mul = m[m_channels ? c : 0];
        const int s = sh[s_channels ? c : 0];
        const int64_t half = s > 0 ? int64_t{1} << (s - 1) : 0;
        const int32_t* xr = x + r * run;
        uint8_t* yr = y + r * run;
        for (int64_t j = 0; j < run; ++j) yr[j] = static_cast<uint8_t>(std::clamp<int64_t>(zp + ((xr[j] * mul + half) >> s), lo, hi));  // the i8/u8 byte
      }
    });
  };
}

}  // namespace

void register_quant_linear(KernelTable& t) {
  t[static_cast<size_t>(Op::quantize_linear)] = {claims_quantize_linear, make_quantize_linear};
  t[static_cast<size_t>(Op::quantize_rows)] = {claims_quantize_rows, make_quantize_rows};
  t[static_cast<size_t>(Op::requantize)] = {claims_requantize, make_requantize};
}

}  // namespace rlx::backends::cpu
