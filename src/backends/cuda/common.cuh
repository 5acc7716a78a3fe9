// Device-side helpers shared by the .cu files: element loads and stores in the reference's wide
// classes (util/scalar.h is the definition: float→int truncates and saturates, NaN → 0,
// int→int wraps, anything→bool is ≠ 0), launch geometry and the error word.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <utility>

#include "backends/cuda/launch.h"

namespace rlx::backends::cuda {

constexpr int kThreads = 256;

inline unsigned grid_for(int64_t n, int threads = kThreads) {
  int64_t b = (n + threads - 1) / threads;
  if (b < 1) b = 1;
  if (b > (int64_t{1} << 20)) b = int64_t{1} << 20;  // grid-stride loops cover the rest
  return static_cast<unsigned>(b);
}

#define RLX_GRID_STRIDE(i, n) \
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); i += static_cast<int64_t>(gridDim.x) * blockDim.x)

// ---- programmatic dependent launch (sm_90): a kernel started with launch_after() may become
// resident while the kernel ahead of it in the stream is still running. It calls
// wait_for_producers() before it reads anything an earlier kernel wrote or writes anything one
// reads; what comes before (index math, loads of constant weights) overlaps the producer's tail
// and the launch latency. allow_consumers() lets the next kernel start the same way; it changes
// nothing for a kernel launched plainly.
__device__ __forceinline__ void wait_for_producers() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void allow_consumers() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
#define RLX_AFTER_PRODUCERS() \
  allow_consumers();          \
  wait_for_producers()

// Launches a kernel that begins with RLX_AFTER_PRODUCERS() (or waits before touching memory) as
// a programmatic dependent of the stream's previous kernel where the GPU and RLX_CUDA_PDL allow.
template <class... P, class... A>
void launch_after(void (*kernel)(P...), dim3 grid, dim3 block, size_t smem, cudaStream_t s, A&&... args) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = s;
  cudaLaunchAttribute attr[1];
  dependent_launch(cfg, attr);
  cudaLaunchKernelEx(&cfg, kernel, std::forward<A>(args)...);
}

// ---- f32 views of the storage types the fast kernels template on
__device__ __forceinline__ float to_f32(float x) { return x; }
__device__ __forceinline__ float to_f32(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_f32(__nv_bfloat16 x) { return __bfloat162float(x); }
template <class T>
__device__ __forceinline__ T from_f32(float x);
template <>
__device__ __forceinline__ float from_f32<float>(float x) { return x; }
template <>
__device__ __forceinline__ __half from_f32<__half>(float x) { return __float2half_rn(x); }
template <>
__device__ __forceinline__ __nv_bfloat16 from_f32<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }

// Element i of an output of T stored as `as` instead (an op whose result a cast to a half type
// followed: the value rounded to T, then to `as`, exactly as the cast would). `base` is typed T
// only for the caller's convenience; the element size is `as`'s.
template <class T>
__device__ __forceinline__ void store_as(T* base, int64_t i, float v, Dt as) {
  if (as == Dt::f16) reinterpret_cast<__half*>(base)[i] = __float2half_rn(to_f32(from_f32<T>(v)));
  else if (as == Dt::bf16) reinterpret_cast<__nv_bfloat16*>(base)[i] = __float2bfloat16_rn(to_f32(from_f32<T>(v)));
  else base[i] = from_f32<T>(v);
}

__device__ __forceinline__ float round_bf16(float x) { return __bfloat162float(__float2bfloat16_rn(x)); }
__device__ __forceinline__ float round_f16(float x) { return __half2float(__float2half_rn(x)); }

// ---- wide loads and stores of any dtype (cast, iota, pad value, reductions)
template <class I>
struct IntRange;
template <>
struct IntRange<int8_t> { static constexpr int64_t lo = -128, hi = 127; };
template <>
struct IntRange<uint8_t> { static constexpr int64_t lo = 0, hi = 255; };
template <>
struct IntRange<int16_t> { static constexpr int64_t lo = -32768, hi = 32767; };
template <>
struct IntRange<int32_t> { static constexpr int64_t lo = -2147483648LL, hi = 2147483647LL; };
template <>
struct IntRange<int64_t> { static constexpr int64_t lo = INT64_MIN, hi = INT64_MAX; };

template <class I>
__device__ __forceinline__ I saturate_to(double v) {
  if (v != v) return 0;
  double t = trunc(v);
  if (t <= static_cast<double>(IntRange<I>::lo)) return static_cast<I>(IntRange<I>::lo);
  if (t >= static_cast<double>(IntRange<I>::hi)) return static_cast<I>(IntRange<I>::hi);
  return static_cast<I>(t);
}

__device__ __forceinline__ bool is_float_dt(Dt t) { return t == Dt::f32 || t == Dt::f16 || t == Dt::bf16 || t == Dt::f64; }

__device__ inline double load_f64(const void* p, Dt t, int64_t i) {
  switch (t) {
    case Dt::f32: return static_cast<const float*>(p)[i];
    case Dt::f64: return static_cast<const double*>(p)[i];
    case Dt::f16: return __half2float(static_cast<const __half*>(p)[i]);
    case Dt::bf16: return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
    case Dt::i8: return static_cast<const int8_t*>(p)[i];
    case Dt::u8: return static_cast<const uint8_t*>(p)[i];
    case Dt::i16: return static_cast<const int16_t*>(p)[i];
    case Dt::i32: return static_cast<const int32_t*>(p)[i];
    case Dt::i64: return static_cast<double>(static_cast<const int64_t*>(p)[i]);
    case Dt::boolean: return static_cast<const uint8_t*>(p)[i] != 0;
    default: return 0;
  }
}

__device__ inline int64_t load_i64(const void* p, Dt t, int64_t i) {
  switch (t) {
    case Dt::f32:
    case Dt::f64:
    case Dt::f16:
    case Dt::bf16: return saturate_to<int64_t>(load_f64(p, t, i));
    case Dt::i8: return static_cast<const int8_t*>(p)[i];
    case Dt::u8: return static_cast<const uint8_t*>(p)[i];
    case Dt::i16: return static_cast<const int16_t*>(p)[i];
    case Dt::i32: return static_cast<const int32_t*>(p)[i];
    case Dt::i64: return static_cast<const int64_t*>(p)[i];
    case Dt::boolean: return static_cast<const uint8_t*>(p)[i] != 0;
    default: return 0;
  }
}

__device__ inline void store_i64(void* p, Dt t, int64_t i, int64_t v) {
  switch (t) {
    case Dt::f32: static_cast<float*>(p)[i] = static_cast<float>(v); return;
    case Dt::f64: static_cast<double*>(p)[i] = static_cast<double>(v); return;
    case Dt::f16: static_cast<__half*>(p)[i] = __float2half_rn(static_cast<float>(v)); return;
    case Dt::bf16: static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16_rn(static_cast<float>(v)); return;
    case Dt::i8: static_cast<int8_t*>(p)[i] = static_cast<int8_t>(v); return;
    case Dt::u8: static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(v); return;
    case Dt::i16: static_cast<int16_t*>(p)[i] = static_cast<int16_t>(v); return;
    case Dt::i32: static_cast<int32_t*>(p)[i] = static_cast<int32_t>(v); return;
    case Dt::i64: static_cast<int64_t*>(p)[i] = v; return;
    case Dt::boolean: static_cast<uint8_t*>(p)[i] = v != 0; return;
    default: return;
  }
}

__device__ inline void store_f64(void* p, Dt t, int64_t i, double v) {
  switch (t) {
    case Dt::f32: static_cast<float*>(p)[i] = static_cast<float>(v); return;
    case Dt::f64: static_cast<double*>(p)[i] = v; return;
    // f64 → f32 → f16/bf16, rounding twice exactly as the reference does
    case Dt::f16: static_cast<__half*>(p)[i] = __float2half_rn(static_cast<float>(v)); return;
    case Dt::bf16: static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16_rn(static_cast<float>(v)); return;
    case Dt::boolean: static_cast<uint8_t*>(p)[i] = v != 0; return;
    case Dt::i8: static_cast<int8_t*>(p)[i] = saturate_to<int8_t>(v); return;
    case Dt::u8: static_cast<uint8_t*>(p)[i] = saturate_to<uint8_t>(v); return;
    case Dt::i16: static_cast<int16_t*>(p)[i] = saturate_to<int16_t>(v); return;
    case Dt::i32: static_cast<int32_t*>(p)[i] = saturate_to<int32_t>(v); return;
    case Dt::i64: static_cast<int64_t*>(p)[i] = saturate_to<int64_t>(v); return;
    default: return;
  }
}

// One step of unravelling a row-major index: returns r % n and leaves r / n in r, with 32-bit
// division while r fits (64-bit division costs several times more).
__device__ __forceinline__ int64_t coord_step(int64_t& r, int64_t n) {
  if (r <= 0x7fffffff && n <= 0x7fffffff) {
    uint32_t q = static_cast<uint32_t>(r) / static_cast<uint32_t>(n);
    int64_t c = r - static_cast<int64_t>(q) * n;
    r = q;
    return c;
  }
  int64_t q = r / n, c = r - q * n;
  r = q;
  return c;
}

// Offset of flat index i of a row-major space in an operand with the given strides. The
// outermost coordinate needs no division (i is inside the space).
__device__ __forceinline__ int64_t offset_of(int64_t i, const Space& sp, const Strides& st) {
  int64_t off = 0;
  for (int d = sp.rank - 1; d > 0; --d) off += coord_step(i, sp.shape[d]) * st.s[d];
  return sp.rank > 0 ? off + i * st.s[0] : 0;
}

// Records the first failure; later ones keep the first.
__device__ inline void report_index_error(ErrorWord* err, int node, int64_t value, int64_t bound) {
  if (atomicCAS(&err->code, 0, 1) == 0) {
    err->node = node;
    err->value = value;
    err->bound = bound;
  }
}

// Two's-complement arithmetic on int64 without undefined behaviour.
__device__ __forceinline__ int64_t wrap_add(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)); }
__device__ __forceinline__ int64_t wrap_sub(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b)); }
__device__ __forceinline__ int64_t wrap_mul(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)); }

// ---- warp and block reductions (blockDim.x a multiple of 32, ≤ 1024)
__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
// Every thread of the block gets the result; `scratch` holds 32 floats.
template <bool kMax>
__device__ inline float block_reduce(float v, float* scratch) {
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = (blockDim.x + 31) >> 5;
  v = kMax ? warp_max(v) : warp_sum(v);
  __syncthreads();  // scratch may still be read by a previous call
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < warps ? scratch[lane] : (kMax ? -INFINITY : 0.0f);
  v = kMax ? warp_max(v) : warp_sum(v);
  return v;
}

}  // namespace rlx::backends::cuda
