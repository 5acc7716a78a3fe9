# The cuda device: built where CMake finds nvcc (CUDA 12+); elsewhere the backend is simply
# absent. The kernels are compiled for sm_80 and sm_90 (PTX of sm_90 runs on newer GPUs).
# cudart is linked statically: it loads the driver at run time, so binaries start on machines
# without one and `rlx devices` says why the device is unavailable.
include(CheckLanguage)
check_language(CUDA)
if(NOT CMAKE_CUDA_COMPILER)
  message(STATUS "cuda backend: off (no CUDA compiler found)")
  set(RLX_BACKEND_CUDA_AVAILABLE OFF)
elseif(RLX_SANITIZE OR RLX_TSAN)
  message(STATUS "cuda backend: off in sanitizer builds (nvcc takes no -fsanitize)")
  set(RLX_BACKEND_CUDA_AVAILABLE OFF)
elseif(RLX_BACKEND_CUDA)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 80-real 90)
  endif()
  set(CMAKE_CUDA_STANDARD 17)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  enable_language(CUDA)
  find_package(CUDAToolkit REQUIRED)
  # nvrtc by path: CUDA::nvrtc drags in the driver stub, which a binary must never need to start
  find_library(RLX_NVRTC_LIB nvrtc HINTS ${CUDAToolkit_LIBRARY_DIR} REQUIRED)
  set(RLX_BACKEND_CUDA_LIBS CUDA::cudart_static CUDA::cublasLt ${RLX_NVRTC_LIB} ${CMAKE_DL_LIBS})  # cuFFT: dlopen on first use (fft.cpp)
  message(STATUS "cuda backend: CUDA ${CUDAToolkit_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES}")
endif()
