// Emits typed nodes into a graph. Decompositions, importers, model builders and the public
// graph API all build through it; the rewrite driver subclasses it to resolve emitted nodes.
#pragma once
#include <string>
#include <vector>

#include "ir/graph.h"
#include "rlx/tensor.h"

namespace rlx::ops {

using ir::Attrs;
using ir::Graph;
using ir::Ints;
using ir::Intss;
using ir::Op;
using ir::Type;
using ir::ValueId;

class Builder {
 public:
  explicit Builder(Graph& g) : g_(g) {}
  virtual ~Builder() = default;

  // Infers the output types, normalizes attributes, appends the node. Errors name the op and
  // the node context (set_context) and say what is wrong.
  virtual std::vector<ValueId> emit(Op op, std::vector<ValueId> inputs, Attrs attrs = {});
  ValueId emit1(Op op, std::vector<ValueId> inputs, Attrs attrs = {}) { return emit(op, std::move(inputs), std::move(attrs))[0]; }

  Graph& graph() { return g_; }
  // By value: emitting nodes may move the graph's value storage.
  Type type(ValueId v) const { return g_.type(v); }
  DType dtype(ValueId v) const { return g_.type(v).dtype; }
  Shape shape(ValueId v) const { return g_.type(v).shape; }
  size_t rank(ValueId v) const { return g_.type(v).shape.size(); }

  // Emitted nodes carry this name and origin (the model-level node they implement).
  void set_context(std::string name, std::string origin) {
    name_ = std::move(name);
    origin_ = std::move(origin);
  }
  const std::string& context_name() const { return name_; }
  const std::string& context_origin() const { return origin_; }

  // ---- sources
  ValueId constant(const Tensor& t);
  ValueId scalar(DType dtype, double v);  // rank-0 constant
  ValueId scalar_like(ValueId like, double v) { return scalar(dtype(like), v); }
  ValueId iota(const Shape& shape, DType dtype, int64_t axis);
  // ---- elementwise
  ValueId unary(Op op, ValueId x) { return emit1(op, {x}); }
  ValueId binary(Op op, ValueId a, ValueId b) { return emit1(op, {a, b}); }
  ValueId add(ValueId a, ValueId b) { return binary(Op::add, a, b); }
  ValueId sub(ValueId a, ValueId b) { return binary(Op::sub, a, b); }
  ValueId mul(ValueId a, ValueId b) { return binary(Op::mul, a, b); }
  ValueId div(ValueId a, ValueId b) { return binary(Op::div, a, b); }
  ValueId max(ValueId a, ValueId b) { return binary(Op::max, a, b); }
  ValueId min(ValueId a, ValueId b) { return binary(Op::min, a, b); }
  ValueId select(ValueId c, ValueId a, ValueId b) { return emit1(Op::select, {c, a, b}); }
  ValueId cast(ValueId x, DType to);  // no node when x already has that dtype
  // ---- reductions
  ValueId reduce(ValueId x, const std::string& kind, Ints axes, bool keepdims);
  // ---- movement
  ValueId reshape(ValueId x, const Shape& shape);  // no node when the shape is unchanged
  ValueId transpose(ValueId x, Ints perm);
  ValueId broadcast(ValueId x, const Shape& shape);  // no node when already that shape
  ValueId slice(ValueId x, const Shape& start, const Shape& limit, Ints stride);
  // Slice of one axis [start, limit) with the others whole.
  ValueId slice_axis(ValueId x, int64_t axis, const Dim& start, const Dim& limit, int64_t stride = 1);
  ValueId concat(std::vector<ValueId> xs, int64_t axis);
  ValueId gather(ValueId x, ValueId idx, int64_t axis);
  // ---- contractions
  ValueId dot_general(ValueId a, ValueId b, Intss batch, Intss contract);

 protected:
  Graph& g_;
  std::string name_, origin_;
};

}  // namespace rlx::ops
