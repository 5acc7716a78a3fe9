// Elementwise ops on the cuda device: every unary and binary op of src/codegen/scalar.h (the
// HIR activations among them; binary ones broadcast by strides), select, cast and iota, for
// every dtype but c64 and i4.
#include "backends/cuda/kernels.h"
#include "backends/cuda/megakernel.h"
#include "codegen/elementwise.h"

namespace rlx::backends::cuda {

using ir::Op;

namespace {

// Every dtype with whole-byte elements and real values.
bool real_dtype(DType d) { return !is_complex(d) && d != DType::i4; }

bool claims_real(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs&) {
  for (const auto& t : in)
    if (!real_dtype(t.dtype)) return false;
  for (const auto& t : out)
    if (!real_dtype(t.dtype)) return false;
  return true;
}

// Every op of scalar.h, in its class: floats (f16/bf16 computed in f32) and integers (booleans as
// 0/1), for the dtypes the op's type rules admit.
bool claims_scalar(Op op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs& attrs) {
  if (!claims_real(op, in, out, attrs)) return false;
  return codegen::defines(is_float(in[0].dtype) ? codegen::ValueClass::floating : codegen::ValueClass::integer, op);
}

bool claims_select(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>&, const ir::Attrs&) {
  return in[1].dtype != DType::i4;  // moves elements by size: c64 and c128 too
}

Kernel make_unary(const ir::Node& n, const ir::Graph&) {
  Op op = n.op;
  return {[op](const LaunchArgs& a) { launch_unary(op, to_dt(a.in[0].dtype), a.in[0].data, a.out[0].data, a.out[0].numel, a.stream); }};
}

Kernel make_binary(const ir::Node& n, const ir::Graph& g) {
  Op op = n.op;
  std::vector<int64_t> shape = static_shape(g, n.outputs[0]);
  std::vector<int64_t> sa = broadcast_strides(shape, static_shape(g, n.inputs[0])), sb = broadcast_strides(shape, static_shape(g, n.inputs[1]));
  collapse(shape, {&sa, &sb}, ir::op_name(n.op));
  Space sp = make_space(shape);
  Strides ta = make_strides(sa), tb = make_strides(sb);
  Dt dt = to_dt(in_type(g, n, 0).dtype), od = to_dt(out_type(g, n, 0).dtype);
  Kernel k{[=](const LaunchArgs& a) { launch_binary(op, dt, od, a.in[0].data, a.in[1].data, a.out[0].data, sp, ta, tb, a.stream); }};
  if (dt == Dt::f32 || dt == Dt::bf16 || dt == Dt::f16)
    k.mega = [=](const LaunchArgs& a, MegaOp& m) {
      MegaBinary& e = m.binary;
      m.kind = MegaKind::binary;
      e.a = a.in[0].data;
      e.b = a.in[1].data;
      e.y = a.out[0].data;
      e.n = a.out[0].numel;
      e.op = op;
      e.dt = dt;
      e.to_bool = od == Dt::boolean;
      e.sp = sp;
      e.sa = ta;
      e.sb = tb;
      m.tiles = (e.n + kMegaThreads - 1) / kMegaThreads;
      return true;
    };
  return k;
}

Kernel make_select(const ir::Node& n, const ir::Graph& g) {
  std::vector<int64_t> shape = static_shape(g, n.outputs[0]);
  std::vector<int64_t> sc = broadcast_strides(shape, static_shape(g, n.inputs[0])), sa = broadcast_strides(shape, static_shape(g, n.inputs[1])),
                       sb = broadcast_strides(shape, static_shape(g, n.inputs[2]));
  collapse(shape, {&sc, &sa, &sb}, "mir.select");
  Space sp = make_space(shape);
  Strides tc = make_strides(sc), ta = make_strides(sa), tb = make_strides(sb);
  Dt dt = to_dt(out_type(g, n, 0).dtype);
  return {[=](const LaunchArgs& a) { launch_select(dt, a.in[0].data, a.in[1].data, a.in[2].data, a.out[0].data, sp, tc, ta, tb, a.stream); }};
}

Kernel make_cast(const ir::Node& n, const ir::Graph& g) {
  Dt from = to_dt(in_type(g, n, 0).dtype), to = to_dt(out_type(g, n, 0).dtype);
  return {[=](const LaunchArgs& a) { launch_cast(from, to, a.in[0].data, a.out[0].data, a.out[0].numel, a.stream); }};
}

Kernel make_iota(const ir::Node& n, const ir::Graph& g) {
  std::vector<int64_t> shape = static_shape(g, n.outputs[0]);
  int64_t axis = norm_axis(n.attrs.i("axis"), shape.size()), inner = 1;
  for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
  int64_t len = shape[static_cast<size_t>(axis)];
  Dt dt = to_dt(out_type(g, n, 0).dtype);
  return {[=](const LaunchArgs& a) { launch_iota(dt, a.out[0].data, a.out[0].numel, len, inner, a.stream); }};
}

}  // namespace

void register_elementwise(KernelTable& t) {
  codegen::for_each_scalar_op<1>([&](auto op) { t[static_cast<size_t>(decltype(op)::value)] = {claims_scalar, make_unary}; });
  codegen::for_each_scalar_op<2>([&](auto op) { t[static_cast<size_t>(decltype(op)::value)] = {claims_scalar, make_binary}; });
  t[static_cast<size_t>(Op::select)] = {claims_select, make_select};
  t[static_cast<size_t>(Op::cast)] = {claims_real, make_cast};
  t[static_cast<size_t>(Op::iota)] = {claims_real, make_iota};
}

}  // namespace rlx::backends::cuda
