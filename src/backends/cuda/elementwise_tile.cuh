// Elementwise ops' per-element work for any schedule: elementwise.cu's kernels run it over a
// grid-stride loop, the decode megakernel (megakernel.cu) over its blocks' tiles.
#pragma once
#include "backends/cuda/common.cuh"
#include "codegen/cuda_math.cuh"

namespace rlx::backends::cuda {

template <class T>
struct Math {  // the compute class of a storage type
  using F = float;
  static constexpr bool kInt = false;
};
template <>
struct Math<double> {
  using F = double;
  static constexpr bool kInt = false;
};
#define RLX_INT_MATH(T)                  \
  template <>                            \
  struct Math<T> {                       \
    using F = int64_t;                   \
    static constexpr bool kInt = true;   \
  };
RLX_INT_MATH(int8_t)
RLX_INT_MATH(uint8_t)
RLX_INT_MATH(int16_t)
RLX_INT_MATH(int32_t)
RLX_INT_MATH(int64_t)
#undef RLX_INT_MATH

template <class T>
__device__ __forceinline__ typename Math<T>::F widen(T x) {
  if constexpr (Math<T>::kInt) return static_cast<int64_t>(x);
  else if constexpr (sizeof(T) == 2) return to_f32(x);
  else return x;
}
template <class T>
__device__ __forceinline__ T narrow(typename Math<T>::F x) {
  if constexpr (Math<T>::kInt) return static_cast<T>(x);
  else if constexpr (sizeof(T) == 2) return from_f32<T>(x);
  else return x;
}

// The value of op in T's compute class.
template <class T>
__device__ __forceinline__ typename Math<T>::F apply(Op op, typename Math<T>::F a, typename Math<T>::F b) {
  if constexpr (Math<T>::kInt) return codegen::int_op(codegen::DeviceInt{}, op, a, b, b);
  else return codegen::float_op(codegen::DeviceFloat<typename Math<T>::F>{}, op, a, b, b);
}

// Element i of a broadcast space: its offsets in the two operands.
__device__ __forceinline__ void operand_offsets(const Space& sp, const Strides& sa, const Strides& sb, int64_t i, int64_t& ia, int64_t& ib) {
  int64_t r = i;
  ia = ib = 0;
  for (int d = sp.rank - 1; d > 0; --d) {
    int64_t c = coord_step(r, sp.shape[d]);
    ia += c * sa.s[d];
    ib += c * sb.s[d];
  }
  if (sp.rank > 0) ia += r * sa.s[0], ib += r * sb.s[0];
}

// Elements i = start, start + stride, … of a binary op over its broadcast space.
template <class T>
__device__ __forceinline__ void binary_elems(Op op, const T* a, const T* b, void* y, bool to_bool, const Space& sp, const Strides& sa, const Strides& sb, int64_t n,
                                             int64_t start, int64_t stride) {
  for (int64_t i = start; i < n; i += stride) {
    int64_t ia, ib;
    operand_offsets(sp, sa, sb, i, ia, ib);
    typename Math<T>::F w = apply<T>(op, widen(a[ia]), widen(b[ib]));
    if (to_bool) static_cast<uint8_t*>(y)[i] = w != 0;
    else static_cast<T*>(y)[i] = narrow<T>(w);
  }
}

}  // namespace rlx::backends::cuda
