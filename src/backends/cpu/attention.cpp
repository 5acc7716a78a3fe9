// Fused attention for f32: per (batch, head) — scores by one GEMM, scale / softcap / bias /
// causal or sliding-window mask and a row softmax in place, then one GEMM with V. Heads run in
// parallel; the S×S score block of one head never leaves the cache-resident scratch.
#include <cblas.h>

#include <cmath>
#include <limits>

#include "backends/cpu/kernels.h"
#include "backends/cpu/vmath.h"

namespace rlx::backends::cpu {

namespace {

using ir::Op;

HostKernel make_attention(const ir::Node& node, const ir::Graph&) {
  std::string mask = node.attrs.s("mask");
  double scale_attr = node.attrs.f("scale"), cap = node.attrs.f("softcap");
  int64_t window = node.attrs.i("window");
  bool bshd = node.attrs.s("layout") == "bshd";
  return [=](const KernelArgs& a) {
    const HostView &q = a.in[0], &k = a.in[1], &v = a.in[2], &y = a.out[0];
    int64_t B = q.shape[0], H = q.shape[bshd ? 2 : 1], Sq = q.shape[bshd ? 1 : 2], D = q.shape[3];
    int64_t Hk = k.shape[bshd ? 2 : 1], Sk = k.shape[bshd ? 1 : 2], Dv = v.shape[3];
    // bshd: heads interleave within a position, so rows of one head are H·D apart
    int64_t ldq = bshd ? H * D : D, ldk = bshd ? Hk * D : D, ldv = bshd ? Hk * Dv : Dv, ldy = bshd ? H * Dv : Dv;
    int64_t group = H / Hk;
    float scale = static_cast<float>(scale_attr != 0 ? scale_attr : 1.0 / std::sqrt(static_cast<double>(D)));
    bool causal = mask == "causal" || mask == "sliding_window";
    const HostView* bias = a.in.size() > 3 ? &a.in[3] : nullptr;
    // bias strides over [B, H, Sq, Sk] (0 where broadcast)
    int64_t bst[4] = {0, 0, 0, 0};
    if (bias) {
      std::vector<int64_t> cs = contiguous_strides(bias->shape);
      size_t off = 4 - bias->shape.size();
      for (size_t d = 0; d < bias->shape.size(); ++d) bst[off + d] = bias->shape[d] == 1 ? 0 : cs[d];
    }
    rlx::parallel_for(B * H, 1, [&](int64_t lo, int64_t hi) {
      std::vector<float> s(static_cast<size_t>(Sq * Sk));
      for (int64_t bh = lo; bh < hi; ++bh) {
        int64_t b = bh / H, h = bh % H, hk = h / group;
        const float* qp = q.as<float>() + (bshd ? b * Sq * H * D + h * D : (b * H + h) * Sq * D);
        const float* kp = k.as<float>() + (bshd ? b * Sk * Hk * D + hk * D : (b * Hk + hk) * Sk * D);
        const float* vp = v.as<float>() + (bshd ? b * Sk * Hk * Dv + hk * Dv : (b * Hk + hk) * Sk * Dv);
        float* yp = y.as<float>() + (bshd ? b * Sq * H * Dv + h * Dv : (b * H + h) * Sq * Dv);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(Sq), static_cast<int>(Sk), static_cast<int>(D), scale, qp,
                    static_cast<int>(ldq), kp, static_cast<int>(ldk), 0.0f, s.data(), static_cast<int>(Sk));
        for (int64_t i = 0; i < Sq; ++i) {
          float* row = s.data() + i * Sk;
          int64_t pos = i + Sk - Sq;  // the query's position among the keys (KV cache aligned)
          int64_t end = causal ? std::min(Sk, pos + 1) : Sk;
          int64_t begin = mask == "sliding_window" ? std::max<int64_t>(0, pos - window + 1) : 0;
          if (cap > 0)
            for (int64_t j = begin; j < end; ++j) row[j] = static_cast<float>(cap * std::tanh(row[j] / cap));
          if (bias) {
            const float* bp = bias->as<float>() + b * bst[0] + h * bst[1] + i * bst[2];
            for (int64_t j = begin; j < end; ++j) row[j] += bp[j * bst[3]];
          }
          float m = -std::numeric_limits<float>::infinity();
          for (int64_t j = begin; j < end; ++j) m = std::max(m, row[j]);
          float sum = 0;
          for (int64_t j = begin; j < end; ++j) row[j] = vm::exp(row[j] - m);
          for (int64_t j = begin; j < end; ++j) sum += row[j];
          // Masked keys (and a fully masked row, whose result is NaN like the definition's).
          float inv = (end > begin && m > -std::numeric_limits<float>::infinity()) ? 1.0f / sum : std::numeric_limits<float>::quiet_NaN();
          for (int64_t j = 0; j < begin; ++j) row[j] = 0;
          for (int64_t j = begin; j < end; ++j) row[j] *= inv;
          for (int64_t j = end; j < Sk; ++j) row[j] = 0;
          if (end <= begin) std::fill(row, row + Sk, std::numeric_limits<float>::quiet_NaN());
        }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(Sq), static_cast<int>(Dv), static_cast<int>(Sk), 1.0f, s.data(),
                    static_cast<int>(Sk), vp, static_cast<int>(ldv), 0.0f, yp, static_cast<int>(ldy));
      }
    });
  };
}

bool claims_attention(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>&, const ir::Attrs&) {
  for (const auto& t : in)
    if (t.dtype != DType::f32) return false;
  return true;
}

}  // namespace

void register_attention(KernelTable& t) { t[static_cast<size_t>(Op::attention)] = {claims_attention, make_attention}; }

}  // namespace rlx::backends::cpu
