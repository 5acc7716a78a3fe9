// hir.attention on the cuda device: one fused kernel (attention.cu) for every mask kind, GQA,
// softcap, both layouts and compute=bf16 (operands rounded to bf16, f32 accumulation).
#include <cmath>

#include "backends/cuda/device.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/megakernel.h"
#include "util/strings.h"

namespace rlx::backends::cuda {

namespace {

using ir::Op;

bool claims_attention(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>&, const ir::Attrs& a) {
  DType d = in[0].dtype;
  if (!is_half_or_f32(d) || in[1].dtype != d || in[2].dtype != d) return false;
  for (size_t k = 0; k < 3; ++k)
    if (in[k].shape.size() != 4) return false;
  if (in.size() > 3 && (!is_float(in[3].dtype) || in[3].shape.size() > 4)) return false;
  const Dim &D = in[0].shape[3], &Dv = in[2].shape[3];
  if (!D.is_static() || !Dv.is_static() || D.value() > kMaxHeadDim || Dv.value() > kMaxHeadDim) return false;
  if (!storable_out(d, a)) return false;
  if (const ir::AttrValue* c = a.find("compute")) {
    DType cd = std::get<DType>(*c);
    if (cd != d && cd != DType::bf16 && !(cd == DType::f16 && d == DType::f32)) return false;
  }
  return true;
}

Kernel make_attention(const ir::Node& n, const ir::Graph& g) {
  std::vector<int64_t> q = static_shape(g, n.inputs[0]), k = static_shape(g, n.inputs[1]), v = static_shape(g, n.inputs[2]);
  bool bshd = n.attrs.s("layout") == "bshd";
  AttentionSpec s{};
  s.B = q[0];
  s.H = q[bshd ? 2 : 1];
  s.Sq = q[bshd ? 1 : 2];
  s.D = q[3];
  s.Hk = k[bshd ? 2 : 1];
  s.Sk = k[bshd ? 1 : 2];
  s.Dv = v[3];
  auto strides = [&](int64_t H, int64_t S, int64_t F, int64_t& sb, int64_t& sh, int64_t& ss) {
    sb = H * S * F;
    sh = bshd ? F : S * F;
    ss = bshd ? H * F : F;
  };
  strides(s.H, s.Sq, s.D, s.q_b, s.q_h, s.q_s);
  strides(s.Hk, s.Sk, s.D, s.k_b, s.k_h, s.k_s);
  strides(s.Hk, s.Sk, s.Dv, s.v_b, s.v_h, s.v_s);
  strides(s.H, s.Sq, s.Dv, s.y_b, s.y_h, s.y_s);
  Dt bias_dt = Dt::f32;
  if (n.inputs.size() > 3) {
    std::vector<int64_t> bs = broadcast_strides({s.B, s.H, s.Sq, s.Sk}, static_shape(g, n.inputs[3]));
    for (size_t d = 0; d < 4; ++d) s.bias_s[d] = bs[d];
    bias_dt = to_dt(in_type(g, n, 3).dtype);
  }
  double scale = n.attrs.f("scale");
  s.scale = static_cast<float>(scale != 0 ? scale : 1.0 / std::sqrt(static_cast<double>(s.D)));
  s.softcap = static_cast<float>(n.attrs.f("softcap"));
  const std::string& mask = n.attrs.s("mask");
  s.mask = mask == "none" ? 0 : mask == "causal" ? 1 : mask == "sliding_window" ? 2 : 3;
  s.window = n.attrs.i("window");
  s.y_dt = to_dt(out_type(g, n, 0).dtype);
  s.round_bf16 = n.attrs.has("compute") && n.attrs.dtype("compute") == DType::bf16;
  s.round_f16 = n.attrs.has("compute") && n.attrs.dtype("compute") == DType::f16 && in_type(g, n, 0).dtype == DType::f32;
  Dt dt = to_dt(in_type(g, n, 0).dtype);
  s.splits = 1;
  if (!attention_uses_decode(s) && attention_uses_mma(dt, s)) s.splits = attention_mma_splits(dt, s, gpu_info().sm_count);
  s.cluster = attention_uses_decode(s) ? attention_decode_cluster(s, gpu_info().major) : 1;
  Kernel kernel{[=](const LaunchArgs& a) {
            launch_attention(dt, a.in[0].data, a.in[1].data, a.in[2].data, a.in.size() > 3 ? a.in[3].data : nullptr, bias_dt, a.out[0].data, s,
                             a.scratch, a.stream);
          },
          s.splits > 1 ? attention_mma_scratch(s) : 0,
          attention_uses_decode(s) ? (s.cluster > 1 ? cat("decode, keys split over a cluster of ", s.cluster, " blocks") : std::string("decode, keys split over warps"))
          : attention_uses_mma(dt, s) ? (s.splits > 1 ? cat("tensor cores, keys split ", s.splits, " ways") : std::string("tensor cores"))
                                      : "f32 cores"};
  if (attention_uses_decode(s) && megakernel_takes_attention(s))
    kernel.mega = [=](const LaunchArgs& a, MegaOp& op) {
      MegaAttention& m = op.attention;
      op.kind = MegaKind::attention;
      m.q = a.in[0].data;
      m.k = a.in[1].data;
      m.v = a.in[2].data;
      m.bias = a.in.size() > 3 ? a.in[3].data : nullptr;
      m.y = a.out[0].data;
      m.dt = dt;
      m.bias_dt = bias_dt;
      m.a = s;
      op.workspace_bytes = megakernel_attention_share(m, megakernel_grid());
      op.tiles = s.Sq * s.H * s.B * m.splits;
      return true;
    };
  return kernel;
}

}  // namespace

void register_attention(KernelTable& t) { t[static_cast<size_t>(Op::attention)] = {claims_attention, make_attention}; }

}  // namespace rlx::backends::cuda
