// Collectives: all_reduce and broadcast_from keep their input's type; all_gather multiplies one
// axis by the ranks, reduce_scatter divides it. Gradients: all_gather and reduce_scatter (sum,
// avg) are each other's transpose; all_reduce (sum, avg) sends the cotangents through itself.
#include "ops/builder.h"
#include "ops/infer_util.h"
#include "ops/rules.h"
#include "ops/vjp_util.h"

namespace rlx::ops {

namespace {

std::vector<Type> infer_all_reduce(Op op, const std::vector<Type>& in, const Attrs& a) {
  DType d = in[0].dtype;
  require_dtype(op, in[0], is_numeric(d) && !is_complex(d), "real numeric");
  if (a.s("op") == "avg") require_dtype(op, in[0], is_float(d), "floating-point (avg)");
  return {in[0]};
}

std::vector<Type> infer_all_gather(Op op, const std::vector<Type>& in, const Attrs& a) {
  if (is_complex(in[0].dtype)) type_error(op, cat("complex tensors are not communicated (", dtype_name(in[0].dtype), ")"));
  int64_t axis = normalize_axis(op, a.i("axis"), in[0].shape.size());
  int64_t ranks = a.i("ranks");
  if (ranks < 1) type_error(op, cat("ranks must be positive, got ", ranks));
  Shape s = in[0].shape;
  s[static_cast<size_t>(axis)] = s[static_cast<size_t>(axis)] * Dim(ranks);
  return {{in[0].dtype, s}};
}

std::vector<Type> infer_reduce_scatter(Op op, const std::vector<Type>& in, const Attrs& a) {
  infer_all_reduce(op, in, a);
  int64_t axis = normalize_axis(op, a.i("axis"), in[0].shape.size());
  int64_t ranks = a.i("ranks");
  if (ranks < 1) type_error(op, cat("ranks must be positive, got ", ranks));
  Shape s = in[0].shape;
  std::optional<Dim> part = s[static_cast<size_t>(axis)].exact_div(Dim(ranks));
  if (!part) type_error(op, cat("axis ", axis, " of ", shape_str(s), " does not split into ", ranks, " equal parts"));
  s[static_cast<size_t>(axis)] = *part;
  return {{in[0].dtype, s}};
}

std::vector<Type> infer_broadcast_from(Op op, const std::vector<Type>& in, const Attrs& a) {
  if (a.i("root") < 0) type_error(op, cat("root must be a rank, got ", a.i("root")));
  return {in[0]};
}

Attrs gather_attrs(const Attrs& a) { return Attrs{{"axis", a.i("axis")}, {"ranks", a.i("ranks")}}; }

// max / min: the summed cotangent goes to the ranks that hold the extreme value, shared equally
// among ties (x == y there), as a reduction's max does.
ValueId to_extremes(Builder& b, ValueId summed_cot, ValueId x, ValueId y) {
  ValueId mask = b.cast(b.binary(Op::eq, x, y), b.dtype(x));
  ValueId holders = b.emit1(Op::all_reduce, {mask}, Attrs{{"op", std::string("sum")}});
  return b.div(b.mul(summed_cot, mask), holders);
}

std::vector<ValueId> vjp_all_reduce(Builder& b, const VjpArgs& a) {
  const std::string op = a.attrs.s("op");
  ValueId g = b.emit1(Op::all_reduce, {a.cot[0]}, Attrs{{"op", op == "avg" ? op : std::string("sum")}});
  return {op == "sum" || op == "avg" ? g : to_extremes(b, g, a.in[0], a.out[0])};
}

std::vector<ValueId> vjp_all_gather(Builder& b, const VjpArgs& a) {
  Attrs r = gather_attrs(a.attrs);
  r.set("op", std::string("sum"));
  return {b.emit1(Op::reduce_scatter, {a.cot[0]}, r)};
}

std::vector<ValueId> vjp_reduce_scatter(Builder& b, const VjpArgs& a) {
  const std::string op = a.attrs.s("op");
  ValueId g = b.emit1(Op::all_gather, {a.cot[0]}, gather_attrs(a.attrs));  // every rank's slice of the cotangent
  if (op == "sum") return {g};
  if (op == "avg") return {b.div(g, b.scalar_like(g, static_cast<double>(a.attrs.i("ranks"))))};
  return {to_extremes(b, g, a.in[0], b.emit1(Op::all_gather, {a.out[0]}, gather_attrs(a.attrs)))};
}

}  // namespace

void register_replicated(RuleTable& t);

void register_collective(RuleTable& t) {
  t[static_cast<size_t>(Op::all_reduce)].infer = infer_all_reduce;
  t[static_cast<size_t>(Op::all_reduce)].vjp = vjp_all_reduce;
  t[static_cast<size_t>(Op::all_gather)].infer = infer_all_gather;
  t[static_cast<size_t>(Op::all_gather)].vjp = vjp_all_gather;
  t[static_cast<size_t>(Op::reduce_scatter)].infer = infer_reduce_scatter;
  t[static_cast<size_t>(Op::reduce_scatter)].vjp = vjp_reduce_scatter;
  t[static_cast<size_t>(Op::broadcast_from)].infer = infer_broadcast_from;
  register_replicated(t);
}

}  // namespace rlx::ops

namespace rlx::ops {

namespace {

std::vector<Type> infer_replicated(Op op, const std::vector<Type>& in, const Attrs&) {
  for (const Type& t : in)  // their gradients would be averaged across ranks: real ones only
    if (is_complex(t.dtype)) type_error(op, cat("complex tensors are not communicated (", dtype_name(t.dtype), ")"));
  return in;
}

std::vector<ValueId> decompose_replicated(Builder&, const std::vector<ValueId>& in, const Attrs&) { return in; }

// One all_reduce (avg) of every cotangent, flattened and concatenated (f32: what data-parallel
// training averages); outputs no gradient reaches contribute zeros, so every rank sends the same
// bucket layout.
std::vector<ValueId> vjp_replicated(Builder& b, const VjpArgs& a) {
  std::vector<ValueId> flat;
  std::vector<Shape> shapes;
  std::vector<DType> types;
  for (size_t i = 0; i < a.in.size(); ++i) {
    const Type& t = b.graph().type(a.in[i]);
    ValueId c = a.cot[i] == ir::kNoValue ? zeros_like(b, a.in[i]) : a.cot[i];
    Dim n = shape_numel(t.shape);
    if (!n.is_static()) type_error(Op::replicated, "a replicated value needs a static shape (its gradient joins a bucket)");
    flat.push_back(b.reshape(b.cast(c, DType::f32), {n}));
    shapes.push_back(t.shape);
    types.push_back(t.dtype);
  }
  ValueId bucket = flat.size() == 1 ? flat[0] : b.concat(flat, 0);
  ValueId avg = b.emit1(Op::all_reduce, {bucket}, Attrs{{"op", std::string("avg")}});
  std::vector<ValueId> grads;
  int64_t at = 0;
  for (size_t i = 0; i < flat.size(); ++i) {
    int64_t n = shape_numel(shapes[i]).value();
    ValueId part = flat.size() == 1 ? avg : b.slice_axis(avg, 0, Dim(at), Dim(at + n));
    grads.push_back(b.cast(b.reshape(part, shapes[i]), types[i]));
    at += n;
  }
  return grads;
}

}  // namespace

void register_replicated(RuleTable& t) {
  OpRule& r = t[static_cast<size_t>(Op::replicated)];
  r.infer = infer_replicated;
  r.decompose = decompose_replicated;
  r.vjp = vjp_replicated;
}

}  // namespace rlx::ops
