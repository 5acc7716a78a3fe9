// Elementwise ONNX operators: unary math (the trigonometric family MIR lacks composed from sin,
// cos, atan, exp, log),
// arithmetic with numpy broadcasting (and the pre-opset-7 broadcast attribute), comparisons,
// logic, variadic Max/Min/Sum/Mean, Where, Clip, Cast/CastLike, IsNaN/IsInf.
#include "frontends/onnx/ops_util.h"
#include "frontends/onnx/proto.h"
#include "rlx/error.h"

namespace rlx::frontends::onnx {

namespace {

std::vector<ValueId> one(ValueId v) { return {v}; }

template <Op op>
std::vector<ValueId> unary(NodeCtx& c) {
  return one(c.b.unary(op, c.in(0)));
}

std::vector<IValue> identity(NodeCtx& c) { return {c.value_in(0)}; }

std::vector<ValueId> relu(NodeCtx& c) { return one(c.b.emit1(Op::relu, {c.in(0)})); }

std::vector<ValueId> logical_not(NodeCtx& c) { return one(c.b.unary(Op::logical_not, c.in(0))); }

ValueId atan_of(FoldingBuilder& b, ValueId x) { return b.unary(Op::atan, x); }

ValueId asin_of(FoldingBuilder& b, ValueId x) {
  ValueId root = b.unary(Op::sqrt, b.sub(like(b, x, 1.0), b.mul(x, x)));
  return atan_of(b, b.div(x, root));
}

std::vector<ValueId> atan(NodeCtx& c) { return one(atan_of(c.b, c.in(0))); }
std::vector<ValueId> asin(NodeCtx& c) { return one(asin_of(c.b, c.in(0))); }
std::vector<ValueId> acos(NodeCtx& c) {
  ValueId x = c.in(0);
  return one(c.b.sub(like(c.b, x, M_PI_2), asin_of(c.b, x)));
}
std::vector<ValueId> tan(NodeCtx& c) {
  ValueId x = c.in(0);
  return one(c.b.div(c.b.unary(Op::sin, x), c.b.unary(Op::cos, x)));
}
std::vector<ValueId> sinh(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0);
  return one(b.mul(b.sub(b.unary(Op::exp, x), b.unary(Op::exp, b.unary(Op::neg, x))), like(b, x, 0.5)));
}
std::vector<ValueId> cosh(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0);
  return one(b.mul(b.add(b.unary(Op::exp, x), b.unary(Op::exp, b.unary(Op::neg, x))), like(b, x, 0.5)));
}
std::vector<ValueId> asinh(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0);
  ValueId a = b.unary(Op::abs, x);
  ValueId r = b.unary(Op::log, b.add(a, b.unary(Op::sqrt, b.add(b.mul(a, a), like(b, x, 1.0)))));
  return one(b.mul(b.unary(Op::sign, x), r));
}
std::vector<ValueId> acosh(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0);
  return one(b.unary(Op::log, b.add(x, b.unary(Op::sqrt, b.sub(b.mul(x, x), like(b, x, 1.0))))));
}
std::vector<ValueId> atanh(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0);
  ValueId q = b.div(b.add(like(b, x, 1.0), x), b.sub(like(b, x, 1.0), x));
  return one(b.mul(b.unary(Op::log, q), like(b, x, 0.5)));
}

// Before opset 7, binary ops broadcast only with broadcast=1, aligning B at `axis` of A.
ValueId legacy_broadcast(NodeCtx& c, ValueId a, ValueId bv) {
  if (c.opset >= 7 || c.attr_i("broadcast", 0) == 0) return bv;
  if (!c.has_attr("axis")) return bv;
  int64_t ra = c.rank(a), rb = c.rank(bv);
  int64_t axis = c.axis(c.attr_i("axis", 0), ra);
  Shape s = c.shape(bv);
  for (int64_t i = axis + rb; i < ra; ++i) s.push_back(Dim(1));
  return c.b.reshape(bv, s);
}

template <Op op>
std::vector<ValueId> binary(NodeCtx& c) {
  ValueId a = c.in(0), bv = legacy_broadcast(c, c.in(0), c.in(1));
  return one(c.b.binary(op, a, bv));
}

// Integer division truncates toward zero (C, ONNX Runtime); floats divide exactly.
std::vector<ValueId> div(NodeCtx& c) { return binary<Op::div>(c); }

std::vector<ValueId> logical(NodeCtx& c, Op op) {
  ValueId a = c.in(0), bv = legacy_broadcast(c, c.in(0), c.in(1));
  return one(c.b.binary(op, a, bv));
}
std::vector<ValueId> and_(NodeCtx& c) { return logical(c, Op::logical_and); }
std::vector<ValueId> or_(NodeCtx& c) { return logical(c, Op::logical_or); }
std::vector<ValueId> xor_(NodeCtx& c) { return logical(c, Op::logical_xor); }

template <Op op>
std::vector<ValueId> compare(NodeCtx& c) {
  ValueId a = c.in(0), bv = legacy_broadcast(c, c.in(0), c.in(1));
  if (c.dtype(a) == DType::boolean && (op == Op::lt || op == Op::gt || op == Op::le || op == Op::ge)) {
    a = c.b.cast(a, DType::i32);
    bv = c.b.cast(bv, DType::i32);
  }
  return one(c.b.binary(op, a, bv));
}

// Pow: the exponent may have another type; integer bases compute in f64 (exact below 2^53).
std::vector<ValueId> pow(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0), y = c.in(1);
  DType d = c.dtype(x);
  if (is_float(d)) return one(b.binary(Op::pow, x, b.cast(y, d)));
  ValueId r = b.binary(Op::pow, b.cast(x, DType::f64), b.cast(y, DType::f64));
  return one(b.cast(r, d));
}

// Mod: fmod=1 is C's fmod (sign of the dividend); fmod=0 is Python's % (sign of the divisor).
std::vector<ValueId> mod(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0), y = c.in(1);
  ValueId r = b.binary(Op::rem, x, y);
  if (c.attr_i("fmod", 0) == 1) return one(r);
  if (is_float(c.dtype(x))) c.invalid("fmod=0 is only defined for integers");
  ValueId zero = like(b, r, 0.0);
  ValueId fix = b.binary(Op::logical_and, b.binary(Op::ne, r, zero), b.binary(Op::ne, b.binary(Op::lt, r, zero), b.binary(Op::lt, y, like(b, y, 0.0))));
  return one(b.select(fix, b.add(r, y), r));
}

// BitShift on unsigned integers: ×2^s or ÷2^s (floor), wrapping at the type's width.
std::vector<ValueId> bitshift(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0), y = c.in(1);
  DType d = c.dtype(x);
  std::string dir = c.attr_s("direction", "");
  ValueId p = b.cast(b.binary(Op::pow, b.scalar(DType::f64, 2.0), b.cast(y, DType::f64)), DType::i64);
  ValueId xi = b.cast(x, DType::i64);
  ValueId r;
  if (dir == "LEFT") r = b.mul(xi, p);
  else if (dir == "RIGHT") r = b.div(xi, p);
  else c.invalid(cat("direction must be LEFT or RIGHT, got '", dir, "'"));
  return one(b.cast(r, d));  // int→int casts wrap
}

std::vector<ValueId> variadic(NodeCtx& c, Op op) {
  ValueId acc = c.in(0);
  for (size_t i = 1; i < c.num_inputs(); ++i) acc = c.b.binary(op, acc, c.in(i));
  return one(acc);
}
std::vector<ValueId> max_(NodeCtx& c) {
  if (c.dtype(c.in(0)) == DType::boolean) return variadic(c, Op::logical_or);
  return variadic(c, Op::max);
}
std::vector<ValueId> min_(NodeCtx& c) {
  if (c.dtype(c.in(0)) == DType::boolean) return variadic(c, Op::logical_and);
  return variadic(c, Op::min);
}
std::vector<ValueId> sum(NodeCtx& c) { return variadic(c, Op::add); }
std::vector<ValueId> mean(NodeCtx& c) {
  ValueId s = variadic(c, Op::add)[0];
  return one(c.b.div(s, like(c.b, s, static_cast<double>(c.num_inputs()))));
}

std::vector<ValueId> where(NodeCtx& c) { return one(c.b.select(c.in(0), c.in(1), c.in(2))); }

std::vector<ValueId> clip(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0);
  if (c.opset < 11) {
    if (c.has_attr("min")) x = b.max(x, like(b, x, c.attr_f("min", 0)));
    if (c.has_attr("max")) x = b.min(x, like(b, x, c.attr_f("max", 0)));
    return one(x);
  }
  if (c.has(1)) x = b.max(x, c.in(1));
  if (c.has(2)) x = b.min(x, c.in(2));
  return one(x);
}

DType onnx_to(NodeCtx& c, int64_t t) {
  auto d = dtype_from_onnx(static_cast<int32_t>(t));
  if (!d) c.fail(cat("casts to ", onnx_type_name(static_cast<int32_t>(t)), ", which RLX does not support"));
  return *d;
}

std::vector<ValueId> cast(NodeCtx& c) {
  // Opset 1-5 named the type as a string ("FLOAT").
  const auto* a = c.attr("to");
  if (!a) c.invalid("attribute 'to' is missing");
  int64_t to = a->type() == ::onnx::AttributeProto::STRING ? int64_t{::onnx::TensorProto::UNDEFINED} : a->i();
  if (a->type() == ::onnx::AttributeProto::STRING) {
    ::onnx::TensorProto::DataType t;
    if (!::onnx::TensorProto::DataType_Parse(a->s(), &t)) c.invalid(cat("unknown type '", a->s(), "'"));
    to = t;
  }
  DType d = onnx_to(c, to);
  ValueId x = c.in(0);
  // f16/bf16 targets round from f32: go through it from wider types.
  if ((d == DType::f16 || d == DType::bf16) && c.dtype(x) == DType::f64) x = c.b.cast(x, DType::f32);
  return one(c.b.cast(x, d));
}

std::vector<ValueId> castlike(NodeCtx& c) { return one(c.b.cast(c.in(0), c.dtype(c.in(1)))); }

std::vector<ValueId> isnan(NodeCtx& c) { return one(c.b.binary(Op::ne, c.in(0), c.in(0))); }

std::vector<ValueId> isinf(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0);
  bool pos = c.attr_i("detect_positive", 1) != 0, neg = c.attr_i("detect_negative", 1) != 0;
  ValueId p = b.binary(Op::eq, x, like(b, x, INFINITY));
  ValueId n = b.binary(Op::eq, x, like(b, x, -INFINITY));
  if (pos && neg) return one(b.binary(Op::logical_or, p, n));
  if (pos) return one(p);
  if (neg) return one(n);
  return one(b.broadcast(b.scalar(DType::boolean, 0), b.shape(x)));
}

}  // namespace

void register_elementwise(OpTable& t) {
  t.insert(t.end(), {
                        {"", "Abs", 1, unary<Op::abs>},
                        {"", "Neg", 1, unary<Op::neg>},
                        {"", "Exp", 1, unary<Op::exp>},
                        {"", "Log", 1, unary<Op::log>},
                        {"", "Sqrt", 1, unary<Op::sqrt>},
                        {"", "Reciprocal", 1, unary<Op::reciprocal>},
                        {"", "Sin", 1, unary<Op::sin>},
                        {"", "Cos", 1, unary<Op::cos>},
                        {"", "Tan", 1, tan},
                        {"", "Tanh", 1, unary<Op::tanh>},
                        {"", "Sigmoid", 1, unary<Op::sigmoid>},
                        {"", "Erf", 1, unary<Op::erf>},
                        {"", "Floor", 1, unary<Op::floor>},
                        {"", "Ceil", 1, unary<Op::ceil>},
                        {"", "Round", 1, unary<Op::round>},
                        {"", "Sign", 1, unary<Op::sign>},
                        {"", "Not", 1, logical_not},
                        {"", "Relu", 1, relu},
                        {"", "Identity", 1, nullptr, identity},
                        {"", "Asin", 1, asin},
                        {"", "Acos", 1, acos},
                        {"", "Atan", 1, atan},
                        {"", "Sinh", 1, sinh},
                        {"", "Cosh", 1, cosh},
                        {"", "Asinh", 1, asinh},
                        {"", "Acosh", 1, acosh},
                        {"", "Atanh", 1, atanh},
                        {"", "Add", 1, binary<Op::add>},
                        {"", "Sub", 1, binary<Op::sub>},
                        {"", "Mul", 1, binary<Op::mul>},
                        {"", "Div", 1, div},
                        {"", "Pow", 1, pow},
                        {"", "Mod", 10, mod},
                        {"", "BitShift", 11, bitshift},
                        {"", "And", 1, and_},
                        {"", "Or", 1, or_},
                        {"", "Xor", 1, xor_},
                        {"", "Equal", 1, compare<Op::eq>},
                        {"", "Less", 1, compare<Op::lt>},
                        {"", "LessOrEqual", 12, compare<Op::le>},
                        {"", "Greater", 1, compare<Op::gt>},
                        {"", "GreaterOrEqual", 12, compare<Op::ge>},
                        {"", "Max", 1, max_},
                        {"", "Min", 1, min_},
                        {"", "Sum", 1, sum},
                        {"", "Mean", 1, mean},
                        {"", "Where", 9, where},
                        {"", "Clip", 1, clip},
                        {"", "Cast", 1, cast},
                        {"", "CastLike", 15, castlike},
                        {"", "IsNaN", 9, isnan},
                        {"", "IsInf", 10, isinf},
                    });
}

}  // namespace rlx::frontends::onnx
