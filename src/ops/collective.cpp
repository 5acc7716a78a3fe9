// Collectives: all_reduce keeps its input's type; all_gather multiplies one axis by the ranks.
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
  int64_t axis = normalize_axis(op, a.i("axis"), in[0].shape.size());
  int64_t ranks = a.i("ranks");
  if (ranks < 1) type_error(op, cat("ranks must be positive, got ", ranks));
  Shape s = in[0].shape;
  s[static_cast<size_t>(axis)] = s[static_cast<size_t>(axis)] * Dim(ranks);
  return {{in[0].dtype, s}};
}

}  // namespace

void register_replicated(RuleTable& t);

void register_collective(RuleTable& t) {
  t[static_cast<size_t>(Op::all_reduce)].infer = infer_all_reduce;
  t[static_cast<size_t>(Op::all_gather)].infer = infer_all_gather;
  register_replicated(t);
}

}  // namespace rlx::ops

namespace rlx::ops {

namespace {

std::vector<Type> infer_replicated(Op, const std::vector<Type>& in, const Attrs&) { return in; }

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
