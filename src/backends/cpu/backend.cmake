# The cpu device multiplies matrices with OpenBLAS (Debian's libopenblas-dev).
find_path(RLX_OPENBLAS_INCLUDE cblas.h PATHS /usr/include/x86_64-linux-gnu/openblas-pthread /usr/include/openblas NO_DEFAULT_PATH)
find_library(RLX_OPENBLAS_LIB NAMES openblas PATHS /usr/lib/x86_64-linux-gnu/openblas-pthread)
if(RLX_OPENBLAS_INCLUDE AND RLX_OPENBLAS_LIB)
  set(RLX_BACKEND_CPU_LIBS ${RLX_OPENBLAS_LIB})
  include_directories(SYSTEM ${RLX_OPENBLAS_INCLUDE})
else()
  message(FATAL_ERROR "the cpu backend needs OpenBLAS: apt-get install libopenblas-dev (make setup does this)")
endif()
