# The cpu device multiplies matrices with OpenBLAS (Debian's libopenblas-dev).
find_path(RLX_OPENBLAS_INCLUDE cblas.h PATHS /usr/include/x86_64-linux-gnu/openblas-pthread /usr/include/openblas NO_DEFAULT_PATH)
find_library(RLX_OPENBLAS_LIB NAMES openblas PATHS /usr/lib/x86_64-linux-gnu/openblas-pthread)
if(RLX_OPENBLAS_INCLUDE AND RLX_OPENBLAS_LIB)
  set(RLX_BACKEND_CPU_LIBS ${RLX_OPENBLAS_LIB})
  # oneDNN (Debian's libdnnl-dev): brgemm matmuls, AMX for bf16
  find_library(RLX_DNNL_LIB NAMES dnnl)
  if(NOT RLX_DNNL_LIB)
    message(FATAL_ERROR "the cpu backend needs oneDNN: apt-get install libdnnl-dev (make setup does this)")
  endif()
  list(APPEND RLX_BACKEND_CPU_LIBS ${RLX_DNNL_LIB})
  # Highway (Debian's libhwy-dev): SIMD row kernels with runtime target dispatch (simd.cpp)
  find_library(RLX_HWY_LIB NAMES hwy)
  if(NOT RLX_HWY_LIB)
    message(FATAL_ERROR "the cpu backend needs Highway: apt-get install libhwy-dev (make setup does this)")
  endif()
  list(APPEND RLX_BACKEND_CPU_LIBS ${RLX_HWY_LIB})
  # LAPACKE (Debian's liblapacke-dev): the dense factorizations, resolved to OpenBLAS's LAPACK
  # (linked first), the one NumPy uses
  find_library(RLX_LAPACKE_LIB NAMES lapacke)
  if(NOT RLX_LAPACKE_LIB)
    message(FATAL_ERROR "the cpu backend needs LAPACKE: apt-get install liblapacke-dev (make setup does this)")
  endif()
  list(APPEND RLX_BACKEND_CPU_LIBS ${RLX_LAPACKE_LIB})
  # SuiteSparse (Debian's libsuitesparse-dev): CHOLMOD and UMFPACK for sparse direct solves
  find_library(RLX_CHOLMOD_LIB NAMES cholmod)
  find_library(RLX_UMFPACK_LIB NAMES umfpack)
  find_library(RLX_SUITESPARSECONFIG_LIB NAMES suitesparseconfig)
  if(NOT RLX_CHOLMOD_LIB OR NOT RLX_UMFPACK_LIB OR NOT RLX_SUITESPARSECONFIG_LIB)
    message(FATAL_ERROR "the cpu backend needs SuiteSparse: apt-get install libsuitesparse-dev (make setup does this)")
  endif()
  list(APPEND RLX_BACKEND_CPU_LIBS ${RLX_CHOLMOD_LIB} ${RLX_UMFPACK_LIB} ${RLX_SUITESPARSECONFIG_LIB})
  include_directories(SYSTEM ${RLX_OPENBLAS_INCLUDE})
else()
  message(FATAL_ERROR "the cpu backend needs OpenBLAS: apt-get install libopenblas-dev (make setup does this)")
endif()

# Kernels assume AVX2 + FMA (x86-64-v3, every x86 server since 2013; register.cpp reports the
# device unavailable elsewhere); simd.cpp adds AVX-512 variants through Highway, picked at run
# time where the CPU has them.
# -fno-math-errno and -fno-trapping-math let loops over sqrt, selects & co. vectorize (RLX reads
# neither errno nor floating-point exception flags); -fopenmp-simd enables `omp simd`
# reductions (sums and maxima in a chosen order) without the OpenMP runtime.
set(RLX_BACKEND_CPU_COMPILE_OPTIONS -march=x86-64-v3 -mtune=generic -fno-math-errno -fno-trapping-math -fopenmp-simd)
