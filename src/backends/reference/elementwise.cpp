// Elementwise ops, casts and iota, computed per element in wide types.
#include <cmath>
#include <limits>

#include "backends/reference/kernels.h"

namespace rlx::backends::reference {

namespace {

using ir::Op;

double unary_real(Op op, double x) {
  switch (op) {
    case Op::neg: return -x;
    case Op::abs: return std::fabs(x);
    case Op::sign: return std::isnan(x) ? x : (x > 0) - (x < 0);
    case Op::exp: return std::exp(x);
    case Op::expm1: return std::expm1(x);
    case Op::log: return std::log(x);
    case Op::log1p: return std::log1p(x);
    case Op::sqrt: return std::sqrt(x);
    case Op::rsqrt: return 1.0 / std::sqrt(x);
    case Op::reciprocal: return 1.0 / x;
    case Op::sin: return std::sin(x);
    case Op::cos: return std::cos(x);
    case Op::atan: return std::atan(x);
    case Op::tanh: return std::tanh(x);
    case Op::sigmoid: return 1.0 / (1.0 + std::exp(-x));
    case Op::erf: return std::erf(x);
    case Op::floor: return std::floor(x);
    case Op::ceil: return std::ceil(x);
    case Op::round: return std::nearbyint(x);  // half to even (default rounding mode)
    default: return x;
  }
}

int64_t unary_int(Op op, int64_t x) {
  switch (op) {
    case Op::neg: return wrap_sub(0, x);
    case Op::abs: return x < 0 ? wrap_sub(0, x) : x;
    case Op::sign: return (x > 0) - (x < 0);
    case Op::logical_not: return x == 0;
    default: return x;
  }
}

c128 unary_complex(Op op, c128 x) {
  switch (op) {
    case Op::neg: return -x;
    case Op::abs: return std::abs(x);  // stored into a real tensor: the magnitude
    case Op::exp: return std::exp(x);
    case Op::log: return std::log(x);
    case Op::sqrt: return std::sqrt(x);
    case Op::reciprocal: return 1.0 / x;
    case Op::sin: return std::sin(x);
    case Op::cos: return std::cos(x);
    case Op::tanh: return std::tanh(x);
    default: return x;
  }
}

void unary(const KernelArgs& a) {
  const HostView &x = a.in[0], &y = a.out[0];
  Op op = a.node.op;
  DType d = x.dtype;
  for (int64_t i = 0; i < y.numel; ++i) {
    if (is_complex(d)) wc(y, i, unary_complex(op, rc(x, i)));
    else if (is_float(d)) wd(y, i, unary_real(op, rd(x, i)));
    else wi(y, i, unary_int(op, ri(x, i)));
  }
}

double binary_real(Op op, double a, double b) {
  switch (op) {
    case Op::add: return a + b;
    case Op::sub: return a - b;
    case Op::mul: return a * b;
    case Op::div: return a / b;
    case Op::rem: return std::fmod(a, b);
    case Op::pow: return std::pow(a, b);
    case Op::max: return (std::isnan(a) || std::isnan(b)) ? std::numeric_limits<double>::quiet_NaN() : std::max(a, b);
    case Op::min: return (std::isnan(a) || std::isnan(b)) ? std::numeric_limits<double>::quiet_NaN() : std::min(a, b);
    case Op::eq: return a == b;
    case Op::ne: return a != b;
    case Op::lt: return a < b;
    case Op::le: return a <= b;
    case Op::gt: return a > b;
    case Op::ge: return a >= b;
    default: return 0;
  }
}

int64_t int_pow(int64_t a, int64_t e) {
  if (e < 0) return a == 1 ? 1 : a == -1 ? (e % 2 ? -1 : 1) : 0;
  int64_t r = 1;
  while (e) {
    if (e & 1) r = wrap_mul(r, a);
    a = wrap_mul(a, a);
    e >>= 1;
  }
  return r;
}

// Integer division truncates toward zero; dividing by zero gives 0 (defined, unlike C).
int64_t binary_int(Op op, int64_t a, int64_t b) {
  switch (op) {
    case Op::add: return wrap_add(a, b);
    case Op::sub: return wrap_sub(a, b);
    case Op::mul: return wrap_mul(a, b);
    case Op::div: return b == 0 ? 0 : b == -1 ? wrap_sub(0, a) : a / b;
    case Op::rem: return (b == 0 || b == -1) ? 0 : a % b;
    case Op::pow: return int_pow(a, b);
    case Op::max: return std::max(a, b);
    case Op::min: return std::min(a, b);
    case Op::logical_and: return (a != 0) && (b != 0);
    case Op::logical_or: return (a != 0) || (b != 0);
    case Op::logical_xor: return (a != 0) != (b != 0);
    case Op::eq: return a == b;
    case Op::ne: return a != b;
    case Op::lt: return a < b;
    case Op::le: return a <= b;
    case Op::gt: return a > b;
    case Op::ge: return a >= b;
    default: return 0;
  }
}

void binary(const KernelArgs& a) {
  const HostView &x = a.in[0], &z = a.in[1], &y = a.out[0];
  Op op = a.node.op;
  DType d = x.dtype;
  std::vector<int64_t> ix = broadcast_index(y.shape, x.shape), iz = broadcast_index(y.shape, z.shape);
  for (int64_t i = 0; i < y.numel; ++i) {
    int64_t p = ix[static_cast<size_t>(i)], q = iz[static_cast<size_t>(i)];
    if (is_complex(d)) {
      c128 u = rc(x, p), v = rc(z, q);
      switch (op) {
        case Op::add: wc(y, i, u + v); break;
        case Op::sub: wc(y, i, u - v); break;
        case Op::mul: wc(y, i, u * v); break;
        case Op::div: wc(y, i, u / v); break;
        case Op::eq: wi(y, i, u == v); break;
        case Op::ne: wi(y, i, u != v); break;
        default: break;
      }
    } else if (is_float(d)) {
      double r = binary_real(op, rd(x, p), rd(z, q));
      if (y.dtype == DType::boolean) wi(y, i, r != 0);
      else wd(y, i, r);
    } else {
      wi(y, i, binary_int(op, ri(x, p), ri(z, q)));
    }
  }
}

void select(const KernelArgs& a) {
  const HostView &c = a.in[0], &t = a.in[1], &f = a.in[2], &y = a.out[0];
  std::vector<int64_t> ic = broadcast_index(y.shape, c.shape), it = broadcast_index(y.shape, t.shape), jf = broadcast_index(y.shape, f.shape);
  for (int64_t i = 0; i < y.numel; ++i) {
    size_t k = static_cast<size_t>(i);
    if (ri(c, ic[k])) copy_element(y, i, t, it[k]);
    else copy_element(y, i, f, jf[k]);
  }
}

void cast(const KernelArgs& a) {
  const HostView &x = a.in[0], &y = a.out[0];
  DType s = x.dtype, d = y.dtype;
  for (int64_t i = 0; i < y.numel; ++i) {
    if (is_complex(d)) {
      wc(y, i, rc(x, i));
    } else if (is_complex(s)) {
      c128 v = rc(x, i);
      if (d == DType::boolean) wi(y, i, v != c128(0, 0));
      else wd(y, i, v.real());
    } else if (d == DType::boolean) {
      wi(y, i, is_float(s) ? rd(x, i) != 0 : ri(x, i) != 0);
    } else if (is_float(s)) {
      wd(y, i, rd(x, i));
    } else if (is_float(d)) {
      wd(y, i, static_cast<double>(ri(x, i)));
    } else {
      wi(y, i, ri(x, i));
    }
  }
}

void iota(const KernelArgs& a) {
  const HostView& y = a.out[0];
  int64_t axis = norm_axis(a.node.attrs.i("axis"), y.shape.size());
  std::vector<int64_t> coord;
  for (int64_t i = 0; i < y.numel; ++i) {
    unravel(i, y.shape, coord);
    wi(y, i, coord[static_cast<size_t>(axis)]);
  }
}

}  // namespace

void register_elementwise(KernelTable& t) {
  for (Op op : {Op::neg, Op::abs, Op::sign, Op::exp, Op::expm1, Op::log, Op::log1p, Op::sqrt, Op::rsqrt, Op::reciprocal, Op::sin,
                Op::cos, Op::atan, Op::tanh, Op::sigmoid, Op::erf, Op::floor, Op::ceil, Op::round, Op::logical_not})
    t[static_cast<size_t>(op)] = unary;
  for (Op op : {Op::add, Op::sub, Op::mul, Op::div, Op::rem, Op::pow, Op::max, Op::min, Op::logical_and, Op::logical_or,
                Op::logical_xor, Op::eq, Op::ne, Op::lt, Op::le, Op::gt, Op::ge})
    t[static_cast<size_t>(op)] = binary;
  t[static_cast<size_t>(Op::select)] = select;
  t[static_cast<size_t>(Op::cast)] = cast;
  t[static_cast<size_t>(Op::iota)] = iota;
}

}  // namespace rlx::backends::reference
