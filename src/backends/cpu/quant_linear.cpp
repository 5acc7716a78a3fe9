// quantize_linear of f32 values to int8 with one scale and zero point per tensor or per row
// (a PTQ graph's input), and quantize_rows (the dynamic int8 precision's activations, each row
// by its own max): one vectorized pass, where the decomposition is a region, a reduction and a
// separate saturating cast. The same arithmetic as the
// op's meaning: x / scale (a division, not a reciprocal), rounded half to even, plus the zero
// point, clamped to [−128, 127]; NaN becomes 0 as the cast makes it.
#include <cmath>

#include "backends/cpu/kernels.h"
#include "backends/cpu/simd.h"

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

}  // namespace

void register_quant_linear(KernelTable& t) {
  t[static_cast<size_t>(Op::quantize_linear)] = {claims_quantize_linear, make_quantize_linear};
  t[static_cast<size_t>(Op::quantize_rows)] = {claims_quantize_rows, make_quantize_rows};
}

}  // namespace rlx::backends::cpu
