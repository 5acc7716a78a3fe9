// Products: the cpu device's oneDNN matmul and convolution, without the BLAS and loop fallbacks
// the cpu device has — on oneapi a product oneDNN cannot run well is not claimed (and reported).
// fused_dot's epilogue becomes the matmul's post-op chain, as on the cpu device.
#include "backends/cpu/onednn_conv.h"
#include "backends/cpu/onednn_matmul.h"
#include "backends/onednn/oneapi.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::backends::onednn {

namespace {

using ir::Op;

bool claims_dot(Op op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs& attrs) {
  DType a = in[0].dtype, c = out[0].dtype;
  if (in[1].dtype != a) return false;
  DType compute = attrs.has("compute") ? attrs.dtype("compute") : a;
  bool f32 = a == DType::f32 && c == DType::f32 && (compute == DType::f32 || compute == DType::bf16);
  bool bf16 = a == DType::bf16 && (c == DType::f32 || c == DType::bf16) && compute == DType::bf16;
  bool int8 = a == DType::i8 && c == DType::i32 && compute == DType::i8;
  if (!(f32 || bf16 || int8)) return false;
  if (!shape_is_static(in[0].shape) || !shape_is_static(in[1].shape)) return true;
  auto shape = cpu::onednn_shape(shape_values(in[0].shape), shape_values(in[1].shape), attrs);
  if (!shape) return false;
  cpu::MatmulShape s = *shape;
  s.a_dtype = s.b_dtype = a;
  s.c_dtype = c;
  s.compute = compute;
  (void)op;
  return cpu::onednn_matmul_buildable(s);
}

// A product oneDNN was asked about at claim time but cannot build now: an error naming it.
HostKernel or_unsupported(HostKernel k, const ir::Node& n, const ir::Graph& g, const char* what, const char* sign) {
  if (!k)
    throw Error(ErrorKind::unsupported, cat("oneapi: oneDNN has no ", what, " for ", ir::op_keyword(n.op), " ", shape_str(g.type(n.inputs[0]).shape), sign,
                                            shape_str(g.type(n.inputs[1]).shape), " here"));
  return k;
}

HostKernel make_dot(const ir::Node& n, const ir::Graph& g) { return or_unsupported(cpu::onednn_dot_kernel(n, g), n, g, "matmul", " · "); }

bool claims_conv(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs& attrs) {
  DType a = in[0].dtype, c = out[0].dtype;
  bool ok = (a == DType::f32 && c == DType::f32) || (a == DType::bf16 && c == DType::bf16) || (a == DType::i8 && c == DType::i32);
  if (!ok || in[1].dtype != a || in[0].shape.size() < 3 || in[0].shape.size() > 5) return false;
  for (const auto& p : attrs.intss("padding"))
    if (p[0] < 0 || p[1] < 0) return false;  // crops
  return true;
}

HostKernel make_conv(const ir::Node& n, const ir::Graph& g) { return or_unsupported(cpu::onednn_conv_kernel(n, g), n, g, "convolution", " * "); }

}  // namespace

void register_matmul(KernelTable& t) {
  t[static_cast<size_t>(Op::dot_general)] = {claims_dot, make_dot};
  t[static_cast<size_t>(Op::fused_dot)] = {cpu::claims_onednn_fused_dot, cpu::make_onednn_fused_dot};
  t[static_cast<size_t>(Op::conv)] = {claims_conv, make_conv};
}

}  // namespace rlx::backends::onednn
