// dot_general on the cuda device (gemm.h); conv as a direct kernel.
#include "backends/cuda/gemm.h"
#include "backends/cuda/kernels.h"

namespace rlx::backends::cuda {

namespace {

using ir::Op;

bool int_dtype(DType d) { return is_one_of(d, {DType::i8, DType::u8, DType::i16, DType::i32, DType::i64}); }

bool claims_dot(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs& attrs) {
  DType d = in[0].dtype, o = out[0].dtype;
  if (in[1].dtype != d) return false;
  // compute=T narrower than the inputs: the rewrite into casts to T runs it (casts fuse and fold)
  if (const ir::AttrValue* c = attrs.find("compute"); c && std::get<DType>(*c) != d) return false;
  if (is_one_of(d, {DType::f32, DType::f64, DType::c64, DType::c128})) return o == d;
  if (is_one_of(d, {DType::f16, DType::bf16})) return o == d || o == DType::f32;
  return int_dtype(d) && int_dtype(o);
}

Kernel make_dot(const ir::Node& n, const ir::Graph& g) {
  auto plan = std::make_shared<GemmPlan>(static_shape(g, n.inputs[0]), static_shape(g, n.inputs[1]), n.attrs.intss("batch"),
                                         n.attrs.intss("contract"), in_type(g, n, 0).dtype, out_type(g, n, 0).dtype);
  return {[plan](const LaunchArgs& a) { plan->run(a.in[0].data, a.in[1].data, a.out[0].data, nullptr, nullptr, a.scratch, a.stream); },
          plan->scratch(), plan->describe()};
}

bool claims_conv(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs&) {
  DType d = in[0].dtype;
  return in[1].dtype == d && out[0].dtype == d && in[0].shape.size() >= 3 && in[0].shape.size() <= 5 && (is_float(d) || int_dtype(d));
}

Kernel make_conv(const ir::Node& n, const ir::Graph& g) {
  std::vector<int64_t> x = static_shape(g, n.inputs[0]), w = static_shape(g, n.inputs[1]), y = static_shape(g, n.outputs[0]);
  ConvSpec c{};
  c.sp = static_cast<int>(x.size()) - 2;
  c.N = x[0];
  c.C = x[1];
  c.O = w[0];
  c.groups = n.attrs.i("groups");
  const auto& strides = n.attrs.ints("strides");
  const auto& padding = n.attrs.intss("padding");
  const auto& dil = n.attrs.ints("dilation");
  for (int s = 0; s < c.sp; ++s) {
    size_t k = static_cast<size_t>(s);
    c.in[s] = x[2 + k];
    c.out[s] = y[2 + k];
    c.k[s] = w[2 + k];
    c.stride[s] = strides[k];
    c.pad[s] = padding[k][0];
    c.dil[s] = dil[k];
  }
  Dt dt = to_dt(in_type(g, n, 0).dtype);
  return {[=](const LaunchArgs& a) { launch_conv(dt, a.in[0].data, a.in[1].data, a.out[0].data, c, a.stream); }};
}

}  // namespace

void register_matmul(KernelTable& t) {
  t[static_cast<size_t>(Op::dot_general)] = {claims_dot, make_dot};
  t[static_cast<size_t>(Op::conv)] = {claims_conv, make_conv};
}

}  // namespace rlx::backends::cuda
