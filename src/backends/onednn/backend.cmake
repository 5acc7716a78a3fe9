# The oneapi device builds on the cpu device's oneDNN integration (libdnnl-dev, found there) and
# borrows its data-movement kernels: it exists wherever the cpu device does.
if(NOT RLX_BACKEND_CPU)
  set(RLX_BACKEND_ONEDNN_AVAILABLE OFF)
endif()
set(RLX_BACKEND_ONEDNN_COMPILE_OPTIONS -march=x86-64-v3 -mtune=generic)
