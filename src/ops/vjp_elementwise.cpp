// Reverse-mode rules of the elementwise ops. Broadcast operands get their gradient summed back
// to their own shape.
#include <cmath>

#include "ops/vjp_util.h"

namespace rlx::ops {

namespace {

using V = std::vector<ValueId>;
constexpr ValueId kNone = ir::kNoValue;

ValueId c(Builder& b, ValueId like, double v) { return b.scalar_like(like, v); }
ValueId cj(Builder& b, ValueId v) { return conj_if_complex(b, v); }

// Unary ops: d/dx in terms of x, y = f(x) and the cotangent g.
V unary(Builder& b, const VjpArgs& a) {
  ValueId x = a.in[0], y = a.out[0], g = a.cot[0];
  ValueId d = kNone;
  switch (b.graph().node(b.graph().value(y).node).op) {
    case Op::neg: return {b.unary(Op::neg, g)};
    case Op::abs:
      if (is_complex(b.dtype(x))) return {complex_abs_vjp(b, x, y, g)};
      d = b.unary(Op::sign, x);
      break;
    case Op::exp: d = y; break;
    case Op::expm1: d = b.add(y, c(b, y, 1)); break;
    case Op::log: return {b.div(g, cj(b, x))};
    case Op::log1p: return {b.div(g, b.add(x, c(b, x, 1)))};
    case Op::sqrt: return {b.div(b.mul(g, c(b, y, 0.5)), cj(b, y))};
    case Op::rsqrt: d = b.div(b.mul(y, c(b, y, -0.5)), x); break;
    case Op::reciprocal: d = b.unary(Op::neg, b.mul(y, y)); break;
    case Op::sin: d = b.unary(Op::cos, x); break;
    case Op::cos: d = b.unary(Op::neg, b.unary(Op::sin, x)); break;
    case Op::atan: d = b.unary(Op::reciprocal, b.add(b.mul(x, x), b.scalar_like(x, 1.0))); break;
    case Op::tanh: d = b.sub(c(b, y, 1), b.mul(y, y)); break;
    case Op::sigmoid: d = b.mul(y, b.sub(c(b, y, 1), y)); break;
    case Op::erf: d = b.mul(c(b, x, 2.0 / std::sqrt(M_PI)), b.unary(Op::exp, b.unary(Op::neg, b.mul(x, x)))); break;
    default: return {kNone};
  }
  return {b.mul(g, cj(b, d))};
}

V binary(Builder& b, const VjpArgs& a) {
  ValueId x = a.in[0], z = a.in[1], y = a.out[0], g = a.cot[0];
  Shape xs = b.shape(x), zs = b.shape(z);
  auto pair = [&](ValueId gx, ValueId gz) {
    return V{gx == kNone ? kNone : unbroadcast(b, gx, xs), gz == kNone ? kNone : unbroadcast(b, gz, zs)};
  };
  switch (b.graph().node(b.graph().value(y).node).op) {
    case Op::add: return pair(g, g);
    case Op::sub: return pair(g, b.unary(Op::neg, g));
    case Op::mul: return pair(b.mul(g, cj(b, z)), b.mul(g, cj(b, x)));
    case Op::div: return pair(b.div(g, cj(b, z)), b.unary(Op::neg, b.div(b.mul(g, cj(b, y)), cj(b, z))));
    case Op::pow: {
      ValueId gx = b.mul(g, b.mul(z, b.binary(Op::pow, x, b.sub(z, c(b, z, 1)))));
      // d/dz x^z = x^z·log x; where x = 0 the term is 0 (it is multiplied by 0^z).
      ValueId logx = b.select(b.binary(Op::gt, x, c(b, x, 0)), b.unary(Op::log, x), c(b, x, 0));
      return pair(gx, b.mul(g, b.mul(y, logx)));
    }
    case Op::max:
    case Op::min: {
      // Ties send the gradient to the first operand.
      ValueId first = b.binary(Op::eq, b.broadcast(x, b.shape(y)), y);
      ValueId zero = c(b, g, 0);
      return pair(b.select(first, g, zero), b.select(first, zero, g));
    }
    case Op::rem: {
      // fmod(x, z) = x − trunc(x/z)·z
      ValueId q = b.div(x, z);
      ValueId t = b.select(b.binary(Op::ge, q, c(b, q, 0)), b.unary(Op::floor, q), b.unary(Op::ceil, q));
      return pair(g, b.unary(Op::neg, b.mul(g, t)));
    }
    default: return {kNone, kNone};
  }
}

V select(Builder& b, const VjpArgs& a) {
  ValueId g = a.cot[0];
  ValueId zero = c(b, g, 0);
  return {kNone, unbroadcast(b, b.select(a.in[0], g, zero), b.shape(a.in[1])), unbroadcast(b, b.select(a.in[0], zero, g), b.shape(a.in[2]))};
}

V cast(Builder& b, const VjpArgs& a) {
  DType from = b.dtype(a.in[0]);
  DType to = b.dtype(a.out[0]);
  if (!(is_float(from) || is_complex(from)) || !(is_float(to) || is_complex(to))) return {kNone};
  // complex → real keeps the real part: its gradient is (ḡ, 0); real → complex drops ḡ's imaginary part
  return {b.cast(a.cot[0], from)};
}

}  // namespace

void register_vjp_elementwise(RuleTable& t) {
  for (Op op : {Op::neg, Op::abs, Op::exp, Op::expm1, Op::log, Op::log1p, Op::sqrt, Op::rsqrt, Op::reciprocal, Op::sin, Op::cos, Op::atan,
                Op::tanh, Op::sigmoid, Op::erf})
    t[static_cast<size_t>(op)].vjp = unary;
  for (Op op : {Op::add, Op::sub, Op::mul, Op::div, Op::pow, Op::max, Op::min, Op::rem}) t[static_cast<size_t>(op)].vjp = binary;
  t[static_cast<size_t>(Op::select)].vjp = select;
  t[static_cast<size_t>(Op::cast)].vjp = cast;
  for (Op op : {Op::sign, Op::floor, Op::ceil, Op::round, Op::logical_not, Op::logical_and, Op::logical_or, Op::logical_xor, Op::eq,
                Op::ne, Op::lt, Op::le, Op::gt, Op::ge, Op::iota, Op::constant})
    t[static_cast<size_t>(op)].no_gradient = true;
}

}  // namespace rlx::ops
