// Elementwise primitives, casts and sources: dtype rules and broadcasting.
#include "ops/infer_util.h"
#include "ops/rules.h"

namespace rlx::ops {

namespace {

using ir::Type;

// Which dtypes an elementwise op accepts.
bool unary_accepts(Op op, DType t) {
  switch (op) {
    case Op::neg: return is_numeric(t);
    case Op::abs: return is_numeric(t);
    case Op::sign: return is_numeric(t) && !is_complex(t);
    case Op::exp:
    case Op::log:
    case Op::sqrt:
    case Op::reciprocal:
    case Op::sin:
    case Op::cos:
    case Op::tanh: return is_float(t) || is_complex(t);
    case Op::logical_not: return is_bool(t);
    default: return is_float(t);  // expm1 log1p rsqrt sigmoid erf floor ceil round, and any other
  }
}

bool binary_accepts(Op op, DType t) {
  switch (op) {
    case Op::add:
    case Op::sub:
    case Op::mul:
    case Op::div: return is_numeric(t);
    case Op::rem:
    case Op::pow:
    case Op::lt:
    case Op::le:
    case Op::gt:
    case Op::ge: return is_numeric(t) && !is_complex(t);
    case Op::max:
    case Op::min: return (is_numeric(t) && !is_complex(t)) || is_bool(t);
    case Op::logical_and:
    case Op::logical_or:
    case Op::logical_xor: return is_bool(t);
    case Op::eq:
    case Op::ne: return t != DType::i4;
    default: return false;
  }
}

bool is_comparison(Op op) {
  return op == Op::eq || op == Op::ne || op == Op::lt || op == Op::le || op == Op::gt || op == Op::ge;
}

std::vector<Type> infer_unary(Op op, const std::vector<Type>& in, const Attrs&) {
  if (!unary_accepts(op, in[0].dtype)) type_error(op, cat("does not accept dtype ", dtype_name(in[0].dtype)));
  if (op == Op::abs) return {{real_part_dtype(in[0].dtype), in[0].shape}};  // a complex number's magnitude is real
  return {in[0]};
}

std::vector<Type> infer_binary(Op op, const std::vector<Type>& in, const Attrs&) {
  require_same_dtype(op, in, 0, 1);
  if (!binary_accepts(op, in[0].dtype)) type_error(op, cat("does not accept dtype ", dtype_name(in[0].dtype)));
  Shape s = broadcast_shapes(op, in[0].shape, in[1].shape);
  return {{is_comparison(op) ? DType::boolean : in[0].dtype, s}};
}

std::vector<Type> infer_select(Op op, const std::vector<Type>& in, const Attrs&) {
  require_dtype(op, in[0], is_bool(in[0].dtype), "bool", "condition");
  require_same_dtype(op, in, 1, 2);
  if (in[1].dtype == DType::i4) type_error(op, "i4 is storage only");
  Shape s = broadcast_shapes(op, broadcast_shapes(op, in[0].shape, in[1].shape), in[2].shape);
  return {{in[1].dtype, s}};
}

std::vector<Type> infer_cast(Op, const std::vector<Type>& in, const Attrs& a) { return {{a.dtype("to"), in[0].shape}}; }

std::vector<Type> infer_constant(Op, const std::vector<Type>&, const Attrs& a) {
  const Tensor& t = a.tensor("value");
  return {{t.dtype(), shape_of(t.shape())}};
}

std::vector<Type> infer_iota(Op op, const std::vector<Type>&, const Attrs& a) {
  const Shape& s = a.dims("shape");
  DType d = a.dtype("dtype");
  if (!is_numeric(d) || is_complex(d)) type_error(op, cat("dtype must be real numeric, got ", dtype_name(d)));
  normalize_axis(op, a.i("axis"), s.size());
  return {{d, s}};
}

}  // namespace

void register_elementwise(RuleTable& t) {
  auto set = [&](Op op, InferFn f) { t[static_cast<size_t>(op)].infer = f; };
  // every elementwise primitive of the op table, by its arity
  for (int i = 0; i < ir::kNumOps; ++i) {
    Op op = static_cast<Op>(i);
    const ir::OpInfo& info = ir::op_info(op);
    if (info.level != ir::Level::MIR || !ir::has_trait(op, ir::kElementwise) || op == Op::cast) continue;
    if (info.max_inputs == 1) set(op, infer_unary);
    if (info.max_inputs == 2) set(op, infer_binary);
  }
  set(Op::select, infer_select);
  set(Op::cast, infer_cast);
  set(Op::constant, infer_constant);
  set(Op::iota, infer_iota);
}

}  // namespace rlx::ops
