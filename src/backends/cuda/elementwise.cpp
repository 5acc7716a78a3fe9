// Elementwise ops on the cuda device: unary, binary (broadcast by strides), select, cast, iota
// and the HIR activations, for every dtype but c64 and i4.
#include "backends/cuda/kernels.h"

namespace rlx::backends::cuda {

using ir::Op;

bool ew_of(Op op, Ew& out) {
  switch (op) {
#define RLX_EW(name) \
  case Op::name: out = Ew::name; return true;
    RLX_EW(neg) RLX_EW(abs) RLX_EW(sign) RLX_EW(exp) RLX_EW(expm1) RLX_EW(log) RLX_EW(log1p) RLX_EW(sqrt) RLX_EW(rsqrt)
    RLX_EW(reciprocal) RLX_EW(sin) RLX_EW(cos) RLX_EW(tanh) RLX_EW(sigmoid) RLX_EW(erf) RLX_EW(floor) RLX_EW(ceil) RLX_EW(round)
    RLX_EW(logical_not) RLX_EW(gelu) RLX_EW(gelu_tanh) RLX_EW(silu) RLX_EW(relu) RLX_EW(add) RLX_EW(sub) RLX_EW(mul) RLX_EW(div)
    RLX_EW(rem) RLX_EW(pow) RLX_EW(max) RLX_EW(min) RLX_EW(logical_and) RLX_EW(logical_or) RLX_EW(logical_xor) RLX_EW(eq) RLX_EW(ne)
    RLX_EW(lt) RLX_EW(le) RLX_EW(gt) RLX_EW(ge) RLX_EW(select) RLX_EW(cast)
#undef RLX_EW
    default: return false;
  }
}

namespace {

// Every dtype with whole-byte elements and real values.
bool real_dtype(DType d) { return d != DType::c64 && d != DType::i4; }

bool claims_real(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs&) {
  for (const auto& t : in)
    if (!real_dtype(t.dtype)) return false;
  for (const auto& t : out)
    if (!real_dtype(t.dtype)) return false;
  return true;
}

bool claims_activation(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>&, const ir::Attrs&) {
  return is_float(in[0].dtype);
}

bool claims_select(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>&, const ir::Attrs&) {
  return in[1].dtype != DType::i4;  // moves elements by size: c64 too
}

Kernel make_unary(const ir::Node& n, const ir::Graph&) {
  Ew op{};
  ew_of(n.op, op);
  return {[op](const LaunchArgs& a) { launch_unary(op, to_dt(a.in[0].dtype), a.in[0].data, a.out[0].data, a.out[0].numel, a.stream); }};
}

Kernel make_binary(const ir::Node& n, const ir::Graph& g) {
  Ew op{};
  ew_of(n.op, op);
  std::vector<int64_t> shape = static_shape(g, n.outputs[0]);
  std::vector<int64_t> sa = broadcast_strides(shape, static_shape(g, n.inputs[0])), sb = broadcast_strides(shape, static_shape(g, n.inputs[1]));
  collapse(shape, {&sa, &sb}, ir::op_name(n.op));
  Space sp = make_space(shape);
  Strides ta = make_strides(sa), tb = make_strides(sb);
  Dt dt = to_dt(in_type(g, n, 0).dtype), od = to_dt(out_type(g, n, 0).dtype);
  return {[=](const LaunchArgs& a) { launch_binary(op, dt, od, a.in[0].data, a.in[1].data, a.out[0].data, sp, ta, tb, a.stream); }};
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
  for (Op op : {Op::neg, Op::abs, Op::sign, Op::exp, Op::expm1, Op::log, Op::log1p, Op::sqrt, Op::rsqrt, Op::reciprocal, Op::sin, Op::cos,
                Op::tanh, Op::sigmoid, Op::erf, Op::floor, Op::ceil, Op::round, Op::logical_not})
    t[static_cast<size_t>(op)] = {claims_real, make_unary};
  for (Op op : {Op::gelu, Op::gelu_tanh, Op::silu, Op::relu}) t[static_cast<size_t>(op)] = {claims_activation, make_unary};
  for (Op op : {Op::add, Op::sub, Op::mul, Op::div, Op::rem, Op::pow, Op::max, Op::min, Op::logical_and, Op::logical_or, Op::logical_xor,
                Op::eq, Op::ne, Op::lt, Op::le, Op::gt, Op::ge})
    t[static_cast<size_t>(op)] = {claims_real, make_binary};
  t[static_cast<size_t>(Op::select)] = {claims_select, make_select};
  t[static_cast<size_t>(Op::cast)] = {claims_real, make_cast};
  t[static_cast<size_t>(Op::iota)] = {claims_real, make_iota};
}

}  // namespace rlx::backends::cuda
