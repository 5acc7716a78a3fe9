// Complex tensors (c64, c128) on the cuda device: elementwise arithmetic with broadcasting, parts
// and magnitudes, casts to and from every real dtype, and sum/prod reductions. As on the cpu,
// register_complex runs after the real families and routes a node to these kernels when one of
// its tensors is complex, to the real kernel it replaced otherwise.
#include "backends/complex_routing.h"
#include "backends/cuda/kernels.h"

namespace rlx::backends::cuda {

namespace {

using ir::Op;

Kernel make_binary(const ir::Node& n, const ir::Graph& g) {
  Op op = n.op;
  std::vector<int64_t> shape = static_shape(g, n.outputs[0]);
  std::vector<int64_t> sa = broadcast_strides(shape, static_shape(g, n.inputs[0])), sb = broadcast_strides(shape, static_shape(g, n.inputs[1]));
  collapse(shape, {&sa, &sb}, ir::op_name(op));
  Space sp = make_space(shape);
  Strides ta = make_strides(sa), tb = make_strides(sb);
  bool wide = in_type(g, n, 0).dtype == DType::c128;
  return {[=](const LaunchArgs& a) { launch_complex_binary(op, wide, a.in[0].data, a.in[1].data, a.out[0].data, sp, ta, tb, a.stream); }};
}

Kernel make_reduce(const ir::Node& n, const ir::Graph& g) {
  std::vector<int64_t> x = static_shape(g, n.inputs[0]);
  std::vector<bool> reduced(x.size(), false);
  for (int64_t ax : n.attrs.ints("axes")) reduced[static_cast<size_t>(norm_axis(ax, x.size()))] = true;
  ReduceSpaces sp = reduce_spaces(x, reduced, "mir.reduce");
  bool prod = n.attrs.s("kind") == "prod", wide = in_type(g, n, 0).dtype == DType::c128;
  return {[=](const LaunchArgs& a) { launch_complex_reduce(prod, wide, a.in[0].data, a.out[0].data, sp.kept, sp.ks, sp.red, sp.rs, a.stream); }};
}

Kernel complex_kernel(const ir::Node& n, const ir::Graph& g) {
  Op op = n.op;
  switch (op) {
    case Op::add:
    case Op::sub:
    case Op::mul:
    case Op::div:
    case Op::eq:
    case Op::ne: return make_binary(n, g);
    case Op::reduce: return make_reduce(n, g);
    case Op::complex: {
      bool wide = out_type(g, n, 0).dtype == DType::c128;
      return {[=](const LaunchArgs& a) { launch_make_complex(wide, a.in[0].data, a.in[1].data, a.out[0].data, a.out[0].numel, a.stream); }};
    }
    case Op::cast: {
      Dt from = to_dt(in_type(g, n, 0).dtype), to = to_dt(out_type(g, n, 0).dtype);
      return {[=](const LaunchArgs& a) { launch_complex_cast(from, to, a.in[0].data, a.out[0].data, a.out[0].numel, a.stream); }};
    }
    default: {
      bool wide = in_type(g, n, 0).dtype == DType::c128;
      return {[=](const LaunchArgs& a) { launch_complex_unary(op, wide, a.in[0].data, a.out[0].data, a.out[0].numel, a.stream); }};
    }
  }
}

}  // namespace

void register_complex(KernelTable& t) { route_complex<complex_kernel>(t); }

}  // namespace rlx::backends::cuda
