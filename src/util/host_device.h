// Qualifiers for code that compiles both for the host and, under nvcc, for the device.
#pragma once

#if defined(__CUDACC__)
#define RLX_HD __host__ __device__ __forceinline__
#define RLX_HD_CONSTEXPR __host__ __device__ constexpr inline
#define RLX_HD_FN __host__ __device__ inline  // left to the compiler to inline
// The scalar definitions are templates over a machine; instantiated with a device-only machine
// they run on the device only, which nvcc would otherwise warn about for the host side.
#define RLX_EXEC_CHECK_DISABLE _Pragma("nv_exec_check_disable")
#else
#define RLX_HD inline __attribute__((always_inline))
#define RLX_HD_CONSTEXPR constexpr inline
#define RLX_HD_FN inline
#define RLX_EXEC_CHECK_DISABLE
#endif
