# The rocm device: the vulkan device's kernels as HIP, emitted with a host program and a Makefile
# that builds them with hipcc (rlx export --target rocm) — no AMD GPU here, so it is built with
# the vulkan backend, whose kernel families it prints, and nothing of it runs in-process.
set(RLX_BACKEND_VULKAN_AVAILABLE ON)
include(${CMAKE_SOURCE_DIR}/src/backends/vulkan/backend.cmake)
if((DEFINED RLX_BACKEND_VULKAN AND NOT RLX_BACKEND_VULKAN) OR NOT RLX_BACKEND_VULKAN_AVAILABLE)
  message(STATUS "rocm backend: off (it prints the vulkan backend's kernels, which is off)")
  set(RLX_BACKEND_ROCM_AVAILABLE OFF)
endif()
