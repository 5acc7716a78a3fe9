# The cpu device multiplies matrices with OpenBLAS (Debian's libopenblas-dev).
find_path(RLX_OPENBLAS_INCLUDE cblas.h PATHS /usr/include/x86_64-linux-gnu/openblas-pthread /usr/include/openblas NO_DEFAULT_PATH)
find_library(RLX_OPENBLAS_LIB NAMES openblas PATHS /usr/lib/x86_64-linux-gnu/openblas-pthread)
if(RLX_OPENBLAS_INCLUDE AND RLX_OPENBLAS_LIB)
  set(RLX_BACKEND_CPU_LIBS ${RLX_OPENBLAS_LIB})
  # Each further library from its Debian package, or a configure error naming the package.
  function(rlx_cpu_needs what package)
    foreach(lib ${ARGN})
      find_library(RLX_${lib}_LIB NAMES ${lib})
      if(NOT RLX_${lib}_LIB)
        message(FATAL_ERROR "the cpu backend needs ${what}: apt-get install ${package} (make setup does this)")
      endif()
      list(APPEND RLX_BACKEND_CPU_LIBS ${RLX_${lib}_LIB})
    endforeach()
    set(RLX_BACKEND_CPU_LIBS ${RLX_BACKEND_CPU_LIBS} PARENT_SCOPE)
  endfunction()
  # oneDNN: brgemm matmuls, AMX for bf16
  rlx_cpu_needs(oneDNN libdnnl-dev dnnl)
  # Highway: SIMD row kernels with runtime target dispatch (simd.cpp)
  rlx_cpu_needs(Highway libhwy-dev hwy)
  # LAPACKE: the dense factorizations, resolved to OpenBLAS's LAPACK (linked first), the one NumPy uses
  rlx_cpu_needs(LAPACKE liblapacke-dev lapacke)
  # SuiteSparse: CHOLMOD and UMFPACK for sparse direct solves
  rlx_cpu_needs(SuiteSparse libsuitesparse-dev cholmod umfpack suitesparseconfig)
  # FFTW: the Fourier transforms (double and single precision)
  rlx_cpu_needs(FFTW libfftw3-dev fftw3 fftw3f)
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
