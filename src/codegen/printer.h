// Printing scalar.h as source: the definitions run over a machine whose values are expressions
// (Val, Cond), and a Dialect says how each primitive is spelled — function names, literals,
// selects, integer helpers. A new GPU language is a Dialect of a few dozen lines plus the
// kernel skeletons (schedules) its device needs; the arithmetic is never written again.
#pragma once
#include <string>
#include <vector>

#include "codegen/scalar.h"

namespace rlx::codegen {

// An expression of the value class, and a truth-valued one.
struct Val {
  std::string s;
};
struct Cond {
  std::string s;
};

Val operator+(const Val& a, const Val& b);
Val operator-(const Val& a, const Val& b);
Val operator*(const Val& a, const Val& b);
Val operator/(const Val& a, const Val& b);
Val operator-(const Val& a);
Cond operator<(const Val& a, const Val& b);
Cond operator<=(const Val& a, const Val& b);
Cond operator>(const Val& a, const Val& b);
Cond operator>=(const Val& a, const Val& b);
Cond operator==(const Val& a, const Val& b);
Cond operator!=(const Val& a, const Val& b);
Cond operator&&(const Cond& a, const Cond& b);
Cond operator||(const Cond& a, const Cond& b);
Cond operator!=(const Cond& a, const Cond& b);  // exclusive or
Cond operator!(const Cond& a);

// The primitives a machine needs beyond operators (scalar.h's header lists them).
enum class Fn : uint8_t {
  abs, exp, expm1, log, log1p, sqrt, sin, cos, atan, tanh, erf, floor, ceil, rint, fmod, pow,  // float class
  wrap_add, wrap_sub, wrap_mul, quot, rem, ipow,                                               // int class
};
const char* fn_name(Fn f);  // "exp", "wrap_add", …

// How a language spells the primitives. The defaults are C's; a dialect overrides what differs.
class Dialect {
 public:
  virtual ~Dialect() = default;
  virtual const char* name() const = 0;
  // The scalar type of a class's registers ("float", "long long").
  virtual std::string type(ValueClass cls) const = 0;
  // A call of a primitive on already printed operands.
  virtual std::string call(Fn f, ValueClass cls, const std::vector<std::string>& args) const = 0;
  // A constant of the class; f32 constants print with the digits that read back exactly.
  virtual std::string literal(double v, ValueClass cls) const;
  virtual std::string select(const std::string& c, const std::string& a, const std::string& b) const;
  virtual std::string number(const std::string& c, ValueClass cls) const;  // 1 or 0 from a truth value
  virtual std::string is_nan(const std::string& a) const;
  // Helper functions the printed expressions may call (integer wrapping, ipow), once per source.
  virtual std::string prelude() const { return {}; }
};

// The machine scalar.h's definitions print through.
class Printer {
 public:
  using V = Val;
  using B = Cond;
  Printer(const Dialect& d, ValueClass cls) : d_(d), cls_(cls) {}

  Val lit(double x) const { return {d_.literal(x, cls_)}; }
  Val sel(const Cond& c, const Val& a, const Val& b) const { return {d_.select(c.s, a.s, b.s)}; }
  Val num(const Cond& c) const { return {d_.number(c.s, cls_)}; }
  Cond nonzero(const Val& a) const { return a != lit(0); }
  Cond nan(const Val& a) const { return {d_.is_nan(a.s)}; }
  Val undefined(Op op) const;  // throws: the printer was asked for an op its class lacks

  Val abs(const Val& a) const { return call(Fn::abs, {a}); }
  Val exp(const Val& a) const { return call(Fn::exp, {a}); }
  Val expm1(const Val& a) const { return call(Fn::expm1, {a}); }
  Val log(const Val& a) const { return call(Fn::log, {a}); }
  Val log1p(const Val& a) const { return call(Fn::log1p, {a}); }
  Val sqrt(const Val& a) const { return call(Fn::sqrt, {a}); }
  Val sin(const Val& a) const { return call(Fn::sin, {a}); }
  Val cos(const Val& a) const { return call(Fn::cos, {a}); }
  Val atan(const Val& a) const { return call(Fn::atan, {a}); }
  Val tanh(const Val& a) const { return call(Fn::tanh, {a}); }
  Val erf(const Val& a) const { return call(Fn::erf, {a}); }
  Val floor(const Val& a) const { return call(Fn::floor, {a}); }
  Val ceil(const Val& a) const { return call(Fn::ceil, {a}); }
  Val rint(const Val& a) const { return call(Fn::rint, {a}); }
  Val fmod(const Val& a, const Val& b) const { return call(Fn::fmod, {a, b}); }
  Val pow(const Val& a, const Val& b) const { return call(Fn::pow, {a, b}); }
  Val wrap_add(const Val& a, const Val& b) const { return call(Fn::wrap_add, {a, b}); }
  Val wrap_sub(const Val& a, const Val& b) const { return call(Fn::wrap_sub, {a, b}); }
  Val wrap_mul(const Val& a, const Val& b) const { return call(Fn::wrap_mul, {a, b}); }
  Val quot(const Val& a, const Val& b) const { return call(Fn::quot, {a, b}); }
  Val rem(const Val& a, const Val& b) const { return call(Fn::rem, {a, b}); }
  Val ipow(const Val& a, const Val& b) const { return call(Fn::ipow, {a, b}); }

 private:
  Val call(Fn f, const std::vector<Val>& args) const;
  const Dialect& d_;
  ValueClass cls_;
};

// The expression of `op` over operand expressions (as many as its arity; cast is not a scalar
// op — its rounding belongs to the caller's load and store). Throws rlx::Error(unsupported)
// when the class does not define the op.
std::string print_scalar(const Dialect& d, ValueClass cls, Op op, const std::vector<std::string>& operands);

}  // namespace rlx::codegen
