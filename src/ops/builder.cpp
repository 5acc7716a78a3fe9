#include "ops/builder.h"

#include "ir/verify.h"
#include "ops/rules.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::ops {

std::vector<ValueId> Builder::emit(Op op, std::vector<ValueId> inputs, Attrs attrs) {
  const ir::OpInfo& info = ir::op_info(op);
  int nin = static_cast<int>(inputs.size());
  auto where = [&] { return name_.empty() ? std::string() : cat(" (node \"", name_, "\")"); };
  if (nin < info.min_inputs || (info.max_inputs >= 0 && nin > info.max_inputs))
    throw Error(ErrorKind::invalid_graph, cat(ir::op_keyword(op), where(), ": takes ", info.min_inputs,
                                              info.max_inputs < 0 ? "+" : info.max_inputs == info.min_inputs ? "" : cat("-", info.max_inputs),
                                              " inputs, got ", nin));
  std::vector<Type> in_types;
  in_types.reserve(inputs.size());
  for (ValueId v : inputs) in_types.push_back(g_.type(v));
  std::vector<Type> out;
  try {
    ir::normalize_attrs(op, attrs);
    out = infer_types(op, in_types, attrs);
  } catch (const Error& e) {
    std::string msg = e.what();
    std::string in_desc;
    for (size_t i = 0; i < in_types.size(); ++i) in_desc += (i ? ", " : "") + ir::type_str(in_types[i]);
    throw Error(e.kind(), cat(msg, where(), " [inputs: ", in_desc, "]"));
  }
  return g_.add_node(op, std::move(inputs), std::move(attrs), std::move(out), name_, origin_);
}

ValueId Builder::constant(const Tensor& t) { return emit1(Op::constant, {}, Attrs{{"value", t.contiguous()}}); }

ValueId Builder::scalar(DType dtype, double v) { return constant(Tensor::scalar(dtype, v)); }

ValueId Builder::iota(const Shape& shape, DType dtype, int64_t axis) {
  return emit1(Op::iota, {}, Attrs{{"shape", shape}, {"dtype", dtype}, {"axis", axis}});
}

ValueId Builder::cast(ValueId x, DType to) {
  if (dtype(x) == to) return x;
  return emit1(Op::cast, {x}, Attrs{{"to", to}});
}

ValueId Builder::reduce(ValueId x, const std::string& kind, Ints axes, bool keepdims) {
  return emit1(Op::reduce, {x}, Attrs{{"kind", kind}, {"axes", std::move(axes)}, {"keepdims", keepdims}});
}

ValueId Builder::reshape(ValueId x, const Shape& s) {
  if (shape(x) == s) return x;
  return emit1(Op::reshape, {x}, Attrs{{"shape", s}});
}

ValueId Builder::transpose(ValueId x, Ints perm) {
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == static_cast<int64_t>(i);
  if (identity && perm.size() == rank(x)) return x;
  return emit1(Op::transpose, {x}, Attrs{{"perm", std::move(perm)}});
}

ValueId Builder::broadcast(ValueId x, const Shape& s) {
  if (shape(x) == s) return x;
  return emit1(Op::broadcast, {x}, Attrs{{"shape", s}});
}

ValueId Builder::slice(ValueId x, const Shape& start, const Shape& limit, Ints stride) {
  return emit1(Op::slice, {x}, Attrs{{"start", start}, {"limit", limit}, {"stride", std::move(stride)}});
}

ValueId Builder::slice_axis(ValueId x, int64_t axis, const Dim& start, const Dim& limit, int64_t stride) {
  const Shape& s = shape(x);
  if (axis < 0) axis += static_cast<int64_t>(s.size());
  if (start == Dim(0) && limit == s[static_cast<size_t>(axis)] && stride == 1) return x;
  Shape st(s.size(), Dim(0)), lim = s;
  Ints strides(s.size(), 1);
  st[static_cast<size_t>(axis)] = start;
  lim[static_cast<size_t>(axis)] = limit;
  strides[static_cast<size_t>(axis)] = stride;
  return slice(x, st, lim, strides);
}

ValueId Builder::concat(std::vector<ValueId> xs, int64_t axis) {
  if (xs.size() == 1) return xs[0];
  return emit1(Op::concat, std::move(xs), Attrs{{"axis", axis}});
}

ValueId Builder::gather(ValueId x, ValueId idx, int64_t axis) { return emit1(Op::gather, {x, idx}, Attrs{{"axis", axis}}); }

ValueId Builder::dot_general(ValueId a, ValueId b, Intss batch, Intss contract) {
  return emit1(Op::dot_general, {a, b}, Attrs{{"batch", std::move(batch)}, {"contract", std::move(contract)}});
}

}  // namespace rlx::ops
