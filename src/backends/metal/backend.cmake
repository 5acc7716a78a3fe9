# The metal device: the vulkan device's kernels as MSL, emitted (rlx export --target metal), never
# run here — so it is built with the vulkan backend, whose kernel families it prints.
set(RLX_BACKEND_VULKAN_AVAILABLE ON)
include(${CMAKE_SOURCE_DIR}/src/backends/vulkan/backend.cmake)
if((DEFINED RLX_BACKEND_VULKAN AND NOT RLX_BACKEND_VULKAN) OR NOT RLX_BACKEND_VULKAN_AVAILABLE)
  message(STATUS "metal backend: off (it prints the vulkan backend's kernels, which is off)")
  set(RLX_BACKEND_METAL_AVAILABLE OFF)
endif()
