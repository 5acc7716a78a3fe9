#include "codegen/printer.h"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "ir/op.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::codegen {

namespace {
Val bin(const Val& a, const char* op, const Val& b) { return {cat("(", a.s, " ", op, " ", b.s, ")")}; }
Cond cmp(const Val& a, const char* op, const Val& b) { return {cat("(", a.s, " ", op, " ", b.s, ")")}; }
}  // namespace

Val operator+(const Val& a, const Val& b) { return bin(a, "+", b); }
Val operator-(const Val& a, const Val& b) { return bin(a, "-", b); }
Val operator*(const Val& a, const Val& b) { return bin(a, "*", b); }
Val operator/(const Val& a, const Val& b) { return bin(a, "/", b); }
Val operator-(const Val& a) { return {cat("(-", a.s, ")")}; }
Cond operator<(const Val& a, const Val& b) { return cmp(a, "<", b); }
Cond operator<=(const Val& a, const Val& b) { return cmp(a, "<=", b); }
Cond operator>(const Val& a, const Val& b) { return cmp(a, ">", b); }
Cond operator>=(const Val& a, const Val& b) { return cmp(a, ">=", b); }
Cond operator==(const Val& a, const Val& b) { return cmp(a, "==", b); }
Cond operator!=(const Val& a, const Val& b) { return cmp(a, "!=", b); }
Cond operator&&(const Cond& a, const Cond& b) { return {cat("(", a.s, " && ", b.s, ")")}; }
Cond operator||(const Cond& a, const Cond& b) { return {cat("(", a.s, " || ", b.s, ")")}; }
Cond operator!=(const Cond& a, const Cond& b) { return {cat("(", a.s, " != ", b.s, ")")}; }
Cond operator!(const Cond& a) { return {cat("(!", a.s, ")")}; }

const char* fn_name(Fn f) {
  switch (f) {
    case Fn::abs: return "abs";
    case Fn::exp: return "exp";
    case Fn::expm1: return "expm1";
    case Fn::log: return "log";
    case Fn::log1p: return "log1p";
    case Fn::sqrt: return "sqrt";
    case Fn::sin: return "sin";
    case Fn::cos: return "cos";
    case Fn::atan: return "atan";
    case Fn::tanh: return "tanh";
    case Fn::erf: return "erf";
    case Fn::floor: return "floor";
    case Fn::ceil: return "ceil";
    case Fn::rint: return "rint";
    case Fn::fmod: return "fmod";
    case Fn::pow: return "pow";
    case Fn::wrap_add: return "wrap_add";
    case Fn::wrap_sub: return "wrap_sub";
    case Fn::wrap_mul: return "wrap_mul";
    case Fn::quot: return "quot";
    case Fn::rem: return "rem";
    case Fn::ipow: return "ipow";
  }
  return "?";
}

std::string Dialect::literal(double v, ValueClass cls) const {
  if (cls == ValueClass::integer) return cat(static_cast<long long>(v), "LL");
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.9g", static_cast<double>(static_cast<float>(v)));
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s + "f";
}

std::string Dialect::select(const std::string& c, const std::string& a, const std::string& b) const { return cat("(", c, " ? ", a, " : ", b, ")"); }

std::string Dialect::number(const std::string& c, ValueClass cls) const { return select(c, literal(1, cls), literal(0, cls)); }

std::string Dialect::is_nan(const std::string& a) const { return cat("(", a, " != ", a, ")"); }

Val Printer::undefined(Op op) const {
  throw Error(ErrorKind::unsupported, cat("codegen: ", ir::op_keyword(op), " has no ", cls_ == ValueClass::floating ? "float" : "integer",
                                          " definition to print for ", d_.name()));
}

Val Printer::call(Fn f, const std::vector<Val>& args) const {
  std::vector<std::string> s;
  for (const Val& a : args) s.push_back(a.s);
  return {d_.call(f, cls_, s)};
}

std::string print_scalar(const Dialect& d, ValueClass cls, Op op, const std::vector<std::string>& operands) {
  int n = arity(op);
  if (!is_elementwise(op) || op == Op::cast || n < 1 || n > 3)
    throw Error(ErrorKind::invalid_argument, cat("codegen: ", ir::op_keyword(op), " is not a scalar op"));
  if (static_cast<int>(operands.size()) != n)
    throw Error(ErrorKind::invalid_argument, cat("codegen: ", ir::op_keyword(op), " takes ", n, " operands, got ", operands.size()));
  Val a{operands[0]}, b{n > 1 ? operands[1] : operands[0]}, c{n > 2 ? operands[2] : operands[0]};
  Printer p(d, cls);
  return (cls == ValueClass::floating ? float_op(p, op, a, b, c) : int_op(p, op, a, b, c)).s;
}

}  // namespace rlx::codegen
