// The scalar meaning of every elementwise op on the device, in the reference's classes:
// floats in f32 (f64 for f64 storage), integers in wrapping int64. Shared by the elementwise
// kernels and the region interpreter, so a fused op computes exactly what the unfused one does.
#pragma once
#include "backends/cuda/common.cuh"

namespace rlx::backends::cuda {

template <class F>
__device__ __forceinline__ F ew_unary(Ew op, F x) {
  switch (op) {
    case Ew::neg: return -x;
    case Ew::abs: return fabs(x);
    case Ew::sign: return x != x ? x : static_cast<F>((x > F(0)) - (x < F(0)));
    case Ew::exp: return exp(x);
    case Ew::expm1: return expm1(x);
    case Ew::log: return log(x);
    case Ew::log1p: return log1p(x);
    case Ew::sqrt: return sqrt(x);
    case Ew::rsqrt: return F(1) / sqrt(x);
    case Ew::reciprocal: return F(1) / x;
    case Ew::sin: return sin(x);
    case Ew::cos: return cos(x);
    case Ew::tanh: return tanh(x);
    case Ew::sigmoid: return F(1) / (F(1) + exp(-x));
    case Ew::erf: return erf(x);
    case Ew::floor: return floor(x);
    case Ew::ceil: return ceil(x);
    case Ew::round: return rint(x);  // half to even
    case Ew::logical_not: return x == F(0) ? F(1) : F(0);
    case Ew::gelu: return F(0.5) * x * (F(1) + erf(x * F(0.70710678118654752440)));
    case Ew::gelu_tanh: return F(0.5) * x * (F(1) + tanh(F(0.79788456080286535588) * (x + F(0.044715) * x * x * x)));
    case Ew::silu: return x / (F(1) + exp(-x));
    case Ew::relu: return x != x ? x : (x > F(0) ? x : F(0));
    default: return x;
  }
}

template <class F>
__device__ __forceinline__ F ew_binary(Ew op, F a, F b) {
  switch (op) {
    case Ew::add: return a + b;
    case Ew::sub: return a - b;
    case Ew::mul: return a * b;
    case Ew::div: return a / b;
    case Ew::rem: return fmod(a, b);
    case Ew::pow: return pow(a, b);
    case Ew::max: return (a != a || b != b) ? (a + b) : (a > b ? a : b);  // NaN propagates
    case Ew::min: return (a != a || b != b) ? (a + b) : (a < b ? a : b);
    case Ew::logical_and: return (a != F(0) && b != F(0)) ? F(1) : F(0);
    case Ew::logical_or: return (a != F(0) || b != F(0)) ? F(1) : F(0);
    case Ew::logical_xor: return ((a != F(0)) != (b != F(0))) ? F(1) : F(0);
    case Ew::eq: return a == b ? F(1) : F(0);
    case Ew::ne: return a != b ? F(1) : F(0);
    case Ew::lt: return a < b ? F(1) : F(0);
    case Ew::le: return a <= b ? F(1) : F(0);
    case Ew::gt: return a > b ? F(1) : F(0);
    case Ew::ge: return a >= b ? F(1) : F(0);
    default: return a;
  }
}

__device__ __forceinline__ int64_t ew_unary_int(Ew op, int64_t x) {
  switch (op) {
    case Ew::neg: return wrap_sub(0, x);
    case Ew::abs: return x < 0 ? wrap_sub(0, x) : x;
    case Ew::sign: return (x > 0) - (x < 0);
    case Ew::logical_not: return x == 0;
    case Ew::relu: return x > 0 ? x : 0;
    default: return x;
  }
}

__device__ __forceinline__ int64_t int_pow(int64_t a, int64_t e) {
  if (e < 0) return a == 1 ? 1 : a == -1 ? ((e % 2) ? -1 : 1) : 0;
  int64_t r = 1;
  while (e) {
    if (e & 1) r = wrap_mul(r, a);
    a = wrap_mul(a, a);
    e >>= 1;
  }
  return r;
}

// Integer division truncates toward zero; dividing by zero gives 0 (the reference's rule).
__device__ __forceinline__ int64_t ew_binary_int(Ew op, int64_t a, int64_t b) {
  switch (op) {
    case Ew::add: return wrap_add(a, b);
    case Ew::sub: return wrap_sub(a, b);
    case Ew::mul: return wrap_mul(a, b);
    case Ew::div: return b == 0 ? 0 : b == -1 ? wrap_sub(0, a) : a / b;
    case Ew::rem: return (b == 0 || b == -1) ? 0 : a % b;
    case Ew::pow: return int_pow(a, b);
    case Ew::max: return a > b ? a : b;
    case Ew::min: return a < b ? a : b;
    case Ew::logical_and: return (a != 0) && (b != 0);
    case Ew::logical_or: return (a != 0) || (b != 0);
    case Ew::logical_xor: return (a != 0) != (b != 0);
    case Ew::eq: return a == b;
    case Ew::ne: return a != b;
    case Ew::lt: return a < b;
    case Ew::le: return a <= b;
    case Ew::gt: return a > b;
    case Ew::ge: return a >= b;
    default: return 0;
  }
}

}  // namespace rlx::backends::cuda
