// Rotary embeddings for f32: the cos/sin table of every position is computed first, exactly as
// the definition does (frequencies and angles in f32), once per position rather than once per
// head; then one pass over x.
#include <cmath>

#include "backends/cpu/kernels.h"

namespace rlx::backends::cpu {

namespace {

using ir::Op;

HostKernel make_rope(const ir::Node& node, const ir::Graph&) {
  float theta = static_cast<float>(node.attrs.f("theta"));
  int64_t dims_attr = node.attrs.i("dims");
  bool inter = node.attrs.b("interleaved");
  return [=](const KernelArgs& a) {
    const HostView &x = a.in[0], &p = a.in[1], &y = a.out[0];
    size_t r = x.shape.size();
    int64_t D = x.shape[r - 1], S = x.shape[r - 2];
    int64_t dims = dims_attr ? dims_attr : D, half = dims / 2;
    std::vector<float> inv(static_cast<size_t>(half));
    for (int64_t i = 0; i < half; ++i) inv[static_cast<size_t>(i)] = 1.0f / std::pow(theta, static_cast<float>(2 * i) / static_cast<float>(dims));
    bool batched = p.shape.size() == 2;  // positions [B, S] (x is [B, H, S, D])
    int64_t rows = x.numel / D;
    int64_t H = batched ? x.shape[1] : 1;
    auto pos_at = [&](int64_t k) { return p.dtype == DType::i32 ? static_cast<int64_t>(p.as<int32_t>()[k]) : p.as<int64_t>()[k]; };
    const float* xs = x.as<float>();
    float* ys = y.as<float>();
    int64_t P = p.numel;
    thread_local std::vector<float> table;  // [P][cos half | sin half]
    if (table.size() < static_cast<size_t>(P * 2 * half)) table.resize(static_cast<size_t>(P * 2 * half));
    float* tab = table.data();
    rlx::parallel_for(P, std::max<int64_t>(1, 256 / std::max<int64_t>(1, half)), [&](int64_t lo, int64_t hi) {
      for (int64_t k = lo; k < hi; ++k) {
        float pos = static_cast<float>(pos_at(k));
        float* c = tab + k * 2 * half;
        for (int64_t i = 0; i < half; ++i) {
          float ang = pos * inv[static_cast<size_t>(i)];  // f32, as the definition
          c[i] = static_cast<float>(std::cos(static_cast<double>(ang)));
          c[half + i] = static_cast<float>(std::sin(static_cast<double>(ang)));
        }
      }
    });
    rlx::parallel_for(rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, D)), [&](int64_t lo, int64_t hi) {
      for (int64_t row = lo; row < hi; ++row) {
        int64_t si = row % S;
        int64_t pi = batched ? (row / (S * H)) * S + si : si;
        const float* c = tab + pi * 2 * half;
        const float* s = c + half;
        const float* xr = xs + row * D;
        float* yr = ys + row * D;
        if (inter) {
          for (int64_t i = 0; i < half; ++i) {
            float x0 = xr[2 * i], x1 = xr[2 * i + 1];
            yr[2 * i] = x0 * c[i] - x1 * s[i];
            yr[2 * i + 1] = x1 * c[i] + x0 * s[i];
          }
        } else {
          for (int64_t i = 0; i < half; ++i) {
            float x0 = xr[i], x1 = xr[i + half];
            yr[i] = x0 * c[i] - x1 * s[i];
            yr[i + half] = x1 * c[i] + x0 * s[i];
          }
        }
        for (int64_t i = dims; i < D; ++i) yr[i] = xr[i];
      }
    });
  };
}

// a rope with a norm weight (third input) is left to its decomposition: rms_norm, then rope
bool claims_rope(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>&, const ir::Attrs&) { return in.size() == 2 && in[0].dtype == DType::f32; }

}  // namespace

void register_rope(KernelTable& t) { t[static_cast<size_t>(Op::rope)] = {claims_rope, make_rope}; }

}  // namespace rlx::backends::cpu
