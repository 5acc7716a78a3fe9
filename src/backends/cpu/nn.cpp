// Native f32 kernels for the hot HIR ops: softmax, layer/RMS norm. Rows are independent, so
// they split across threads. (The activations are elementwise.cpp's, from scalar.h.)
#include <cmath>

#include "backends/cpu/kernels.h"
#include "codegen/vmath.h"

namespace rlx::backends::cpu {

namespace {

using ir::Op;

// Rows of the last `inner` elements (softmax over the last axis, norms over trailing dims).
template <class F>
void rows(const HostView& x, int64_t inner, F f) {
  int64_t n = inner ? x.numel / inner : 0;
  parallel_items(n, 16, [&](int64_t r) { f(r * inner); });
}

HostKernel make_softmax(const ir::Node& n, const ir::Graph&) {
  bool log = n.op == Op::log_softmax;
  return [log](const KernelArgs& a) {
    int64_t inner = a.in[0].shape.back();
    const float* x = a.in[0].as<float>();
    float* y = a.out[0].as<float>();
    rows(a.in[0], inner, [&](int64_t base) {
      float m = -INFINITY;
#pragma omp simd reduction(max : m)
      for (int64_t k = 0; k < inner; ++k) m = m > x[base + k] ? m : x[base + k];
      double s = 0;
      // exp once into y, then scale (or shift, for log-softmax)
      float* yr = y + base;
      for (int64_t k = 0; k < inner; ++k) yr[k] = vm::exp(x[base + k] - m);
      float sf = 0;
#pragma omp simd reduction(+ : sf)
      for (int64_t k = 0; k < inner; ++k) sf += yr[k];
      s = sf;
      float ls = static_cast<float>(std::log(s)), inv = static_cast<float>(1.0 / s);
      if (log)
        for (int64_t k = 0; k < inner; ++k) yr[k] = x[base + k] - m - ls;
      else
        for (int64_t k = 0; k < inner; ++k) yr[k] *= inv;
    });
  };
}

HostKernel make_norm(const ir::Node& n, const ir::Graph&) {
  bool rms = n.op == Op::rms_norm;
  int64_t axis_attr = n.attrs.i("axis");
  double eps = n.attrs.f("eps");
  return [=](const KernelArgs& a) {
    const auto& s = a.in[0].shape;
    int64_t axis = normalize_axis(axis_attr, s.size());
    int64_t inner = 1;
    for (size_t d = static_cast<size_t>(axis); d < s.size(); ++d) inner *= s[d];
    const float* x = a.in[0].as<float>();
    const float* g = a.in.size() > 1 ? a.in[1].as<float>() : nullptr;
    const float* b = a.in.size() > 2 ? a.in[2].as<float>() : nullptr;
    float* y = a.out[0].as<float>();
    rows(a.in[0], inner, [&](int64_t base) {
      // f32 sums in 16 lanes (vectorized), finished in f64: accurate for rows of any length
      const float* xr = x + base;
      float mean_f = 0, sq_f = 0;
      if (!rms) {
#pragma omp simd reduction(+ : mean_f)
        for (int64_t k = 0; k < inner; ++k) mean_f += xr[k];
      }
      double mean = rms ? 0.0 : static_cast<double>(mean_f) / static_cast<double>(inner);
      float mf = static_cast<float>(mean);
#pragma omp simd reduction(+ : sq_f)
      for (int64_t k = 0; k < inner; ++k) {
        float c = xr[k] - mf;
        sq_f += c * c;
      }
      double sq = sq_f;
      float inv = static_cast<float>(1.0 / std::sqrt(sq / static_cast<double>(inner) + eps));
      for (int64_t k = 0; k < inner; ++k) {
        float v = (x[base + k] - mf) * inv;
        if (g) v *= g[k];
        if (b) v += b[k];
        y[base + k] = v;
      }
    });
  };
}

bool claims_f32(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>&, const ir::Attrs&) { return in[0].dtype == DType::f32; }

// norms stored in another type (out=) are left to their decomposition: the norm, then a cast
bool claims_norm(Op op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs& a) {
  return claims_f32(op, in, out, a) && out[0].dtype == DType::f32;
}

bool claims_softmax(Op op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs& a) {
  // The kernel works on the last axis; other axes decompose.
  int64_t axis = a.i("axis");
  return claims_f32(op, in, out, a) && (axis == -1 || axis == static_cast<int64_t>(in[0].shape.size()) - 1);
}

}  // namespace

void register_nn(KernelTable& t) {
  t[static_cast<size_t>(Op::softmax)] = {claims_softmax, make_softmax};
  t[static_cast<size_t>(Op::log_softmax)] = {claims_softmax, make_softmax};
  t[static_cast<size_t>(Op::layer_norm)] = {claims_norm, make_norm};
  t[static_cast<size_t>(Op::rms_norm)] = {claims_norm, make_norm};
}

}  // namespace rlx::backends::cpu
