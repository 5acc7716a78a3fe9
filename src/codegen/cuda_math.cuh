// The scalar machines that evaluate scalar.h inside compiled CUDA kernels: floats in F (f32
// for f16/bf16/f32 storage, f64 for f64) through CUDA's math library, integers in wrapping
// int64 like the reference. The NVRTC path prints the same definitions (dialect_cuda.h).
#pragma once
#include <cstdint>

#include "codegen/scalar.h"

namespace rlx::codegen {

template <class F>
struct DeviceFloat {
  using V = F;
  using B = bool;

  __device__ __forceinline__ V lit(double x) const { return static_cast<F>(x); }
  __device__ __forceinline__ V sel(bool c, V a, V b) const { return c ? a : b; }
  __device__ __forceinline__ V num(bool c) const { return c ? F(1) : F(0); }
  __device__ __forceinline__ bool nonzero(V a) const { return a != F(0); }
  __device__ __forceinline__ bool nan(V a) const { return a != a; }
  __device__ __forceinline__ V undefined(Op) const { return F(0); }

  __device__ __forceinline__ V abs(V a) const { return ::fabs(a); }
  __device__ __forceinline__ V exp(V a) const { return ::exp(a); }
  __device__ __forceinline__ V expm1(V a) const { return ::expm1(a); }
  __device__ __forceinline__ V log(V a) const { return ::log(a); }
  __device__ __forceinline__ V log1p(V a) const { return ::log1p(a); }
  __device__ __forceinline__ V sqrt(V a) const { return ::sqrt(a); }
  __device__ __forceinline__ V sin(V a) const { return ::sin(a); }
  __device__ __forceinline__ V cos(V a) const { return ::cos(a); }
  __device__ __forceinline__ V atan(V a) const { return ::atan(a); }
  __device__ __forceinline__ V tanh(V a) const { return ::tanh(a); }
  __device__ __forceinline__ V erf(V a) const { return ::erf(a); }
  __device__ __forceinline__ V floor(V a) const { return ::floor(a); }
  __device__ __forceinline__ V ceil(V a) const { return ::ceil(a); }
  __device__ __forceinline__ V rint(V a) const { return ::rint(a); }  // half to even
  __device__ __forceinline__ V fmod(V a, V b) const { return ::fmod(a, b); }
  __device__ __forceinline__ V pow(V a, V b) const { return ::pow(a, b); }
};

struct DeviceInt {
  using V = int64_t;
  using B = bool;
  using U = unsigned long long;

  __device__ __forceinline__ V lit(double x) const { return static_cast<V>(x); }
  __device__ __forceinline__ V sel(bool c, V a, V b) const { return c ? a : b; }
  __device__ __forceinline__ V num(bool c) const { return c ? 1 : 0; }
  __device__ __forceinline__ bool nonzero(V a) const { return a != 0; }
  __device__ __forceinline__ bool nan(V) const { return false; }
  __device__ __forceinline__ V undefined(Op) const { return 0; }

  __device__ __forceinline__ V wrap_add(V a, V b) const { return static_cast<V>(static_cast<U>(a) + static_cast<U>(b)); }
  __device__ __forceinline__ V wrap_sub(V a, V b) const { return static_cast<V>(static_cast<U>(a) - static_cast<U>(b)); }
  __device__ __forceinline__ V wrap_mul(V a, V b) const { return static_cast<V>(static_cast<U>(a) * static_cast<U>(b)); }
  __device__ __forceinline__ V quot(V a, V b) const { return a / b; }
  __device__ __forceinline__ V rem(V a, V b) const { return a % b; }
  __device__ __forceinline__ V ipow(V a, V e) const { return ipow_wrapping<V, U>(a, e); }
};

}  // namespace rlx::codegen
