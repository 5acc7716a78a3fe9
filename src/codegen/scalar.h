// The arithmetic of every elementwise op, written once. Each definition is a template over a
// scalar machine M, and each consumer instantiates it with its own machine: the cpu evaluates
// it (host_math.h), cuda kernels evaluate it on the device (cuda_math.cuh), printers turn it
// into source for a dialect (printer.h: CUDA C for NVRTC, C, and later GLSL, OpenCL C, WGSL,
// MSL, HLSL). Backends choose schedules — tiling, threads, vector width — never these meanings.
// The reference backend does not use this file: it stays an independent oracle.
//
// A machine M provides
//   V, B                     a value and a truth value
//   lit(x)                   the constant x in V's class
//   V + - * / V, -V          arithmetic (float class only: the int class uses wrap_* and quot)
//   V < <= > >= == != V      comparisons → B; B && || B, !B
//   sel(c, a, b)             a where c else b (both already computed: no side effects)
//   num(c)                   1 or 0; nonzero(v) is v != 0
//   float class: nan abs exp expm1 log log1p sqrt sin cos atan tanh erf floor ceil rint fmod pow
//   int class:   wrap_add wrap_sub wrap_mul, quot and rem (truncating; never given 0 or −1 as
//                the divisor), ipow (wrapping a^e, e ≥ 0 by square and multiply; see ipow_wrapping)
//   undefined(op)            the op has no definition in this class (a probe records it)
#pragma once
#include "util/host_device.h"
#include "ir/op_enum.h"

namespace rlx::codegen {

using ir::Op;

// Two classes of arithmetic: floats (f16/bf16/f32 computed in f32, f64 in f64; booleans as 0/1
// in float registers) and integers (two's-complement, wrapping; booleans as 0/1).
enum class ValueClass : uint8_t { floating, integer };

// Comparisons, logic and select: alike in both classes (truth values are 1 and 0 either way).
RLX_EXEC_CHECK_DISABLE
template <class M>
RLX_HD typename M::V logic_op(const M& m, Op op, typename M::V a, typename M::V b, typename M::V c) {
  switch (op) {
    case Op::logical_not: return m.num(!m.nonzero(a));
    case Op::logical_and: return m.num(m.nonzero(a) && m.nonzero(b));
    case Op::logical_or: return m.num(m.nonzero(a) || m.nonzero(b));
    case Op::logical_xor: return m.num(m.nonzero(a) != m.nonzero(b));
    case Op::eq: return m.num(a == b);
    case Op::ne: return m.num(a != b);
    case Op::lt: return m.num(a < b);
    case Op::le: return m.num(a <= b);
    case Op::gt: return m.num(a > b);
    case Op::ge: return m.num(a >= b);
    case Op::select: return m.sel(m.nonzero(a), b, c);
    default: return m.undefined(op);
  }
}

// The float class: IEEE arithmetic, NaN propagating through max/min/sign/relu.
RLX_EXEC_CHECK_DISABLE
template <class M>
RLX_HD typename M::V float_op(const M& m, Op op, typename M::V a, typename M::V b, typename M::V c) {
  using V = typename M::V;
  const V zero = m.lit(0), one = m.lit(1);
  switch (op) {
    case Op::neg: return -a;
    case Op::abs: return m.abs(a);
    case Op::sign: return m.sel(m.nan(a), a, m.num(a > zero) - m.num(a < zero));
    case Op::exp: return m.exp(a);
    case Op::expm1: return m.expm1(a);
    case Op::log: return m.log(a);
    case Op::log1p: return m.log1p(a);
    case Op::sqrt: return m.sqrt(a);
    case Op::rsqrt: return one / m.sqrt(a);
    case Op::reciprocal: return one / a;
    case Op::sin: return m.sin(a);
    case Op::cos: return m.cos(a);
    case Op::atan: return m.atan(a);
    case Op::tanh: return m.tanh(a);
    case Op::sigmoid: return one / (one + m.exp(-a));
    case Op::erf: return m.erf(a);
    case Op::floor: return m.floor(a);
    case Op::ceil: return m.ceil(a);
    case Op::round: return m.rint(a);  // half to even
    case Op::gelu: return m.lit(0.5) * a * (one + m.erf(a * m.lit(0.70710678118654752440)));
    case Op::gelu_tanh: return m.lit(0.5) * a * (one + m.tanh(m.lit(0.79788456080286535588) * (a + m.lit(0.044715) * a * a * a)));
    case Op::silu: return a / (one + m.exp(-a));
    case Op::relu: return m.sel(m.nan(a), a, m.sel(a > zero, a, zero));
    case Op::add: return a + b;
    case Op::sub: return a - b;
    case Op::mul: return a * b;
    case Op::div: return a / b;
    case Op::rem: return m.fmod(a, b);
    case Op::pow: return m.pow(a, b);
    case Op::max: return m.sel(m.nan(a), a, m.sel(m.nan(b), b, m.sel(a > b, a, b)));
    case Op::min: return m.sel(m.nan(a), a, m.sel(m.nan(b), b, m.sel(a < b, a, b)));
    default: return logic_op(m, op, a, b, c);
  }
}

// The integer class: two's-complement and wrapping; dividing by zero gives 0 and by −1 negates
// (no trap, no overflow), truncating toward zero like C.
RLX_EXEC_CHECK_DISABLE
template <class M>
RLX_HD typename M::V int_op(const M& m, Op op, typename M::V a, typename M::V b, typename M::V c) {
  using V = typename M::V;
  const V zero = m.lit(0), one = m.lit(1), minus_one = m.lit(-1);
  switch (op) {
    case Op::neg: return m.wrap_sub(zero, a);
    case Op::abs: return m.sel(a < zero, m.wrap_sub(zero, a), a);
    case Op::sign: return m.wrap_sub(m.num(a > zero), m.num(a < zero));
    case Op::relu: return m.sel(a > zero, a, zero);
    case Op::add: return m.wrap_add(a, b);
    case Op::sub: return m.wrap_sub(a, b);
    case Op::mul: return m.wrap_mul(a, b);
    case Op::div: return m.sel(b == zero, zero, m.sel(b == minus_one, m.wrap_sub(zero, a), m.quot(a, m.sel(b == zero || b == minus_one, one, b))));
    case Op::rem: return m.sel(b == zero || b == minus_one, zero, m.rem(a, m.sel(b == zero || b == minus_one, one, b)));
    case Op::pow: return m.ipow(a, b);
    case Op::max: return m.sel(a < b, b, a);
    case Op::min: return m.sel(b < a, b, a);
    default: return logic_op(m, op, a, b, c);
  }
}

// Integer powers wrap like repeated multiplication; a negative exponent gives 0 except for
// bases ±1 (the reciprocal truncated). Machines that evaluate (host and device) call this for
// ipow; printers emit it as a helper of their dialect.
template <class T, class U>
RLX_HD T ipow_wrapping(T a, T e) {
  if (e < 0) return a == T(1) ? T(1) : a == T(-1) ? ((e % 2) ? T(-1) : T(1)) : T(0);
  U r = 1, base = static_cast<U>(a);
  for (U k = static_cast<U>(e); k; k >>= 1) {
    if (k & 1) r *= base;
    base *= base;
  }
  return static_cast<T>(r);
}

// Which ops each class defines (probed once from the definitions above), and the arity of the
// elementwise ops as the op table gives it. Host only.
bool defines(ValueClass cls, Op op);
RLX_HD_CONSTEXPR int arity(Op op) { return ir::op_max_inputs(op); }
RLX_HD_CONSTEXPR bool is_elementwise(Op op) { return (ir::op_traits(op) & ir::kElementwise) != 0; }

}  // namespace rlx::codegen
