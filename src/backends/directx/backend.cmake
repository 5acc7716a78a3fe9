# The directx device: the vulkan device's kernels as HLSL, compiled by glslang's HLSL front end
# (static shaderc, as the vulkan backend links it) and run by the vulkan executable — so it is
# built with the vulkan backend.
set(RLX_BACKEND_VULKAN_AVAILABLE ON)
include(${CMAKE_SOURCE_DIR}/src/backends/vulkan/backend.cmake)
if((DEFINED RLX_BACKEND_VULKAN AND NOT RLX_BACKEND_VULKAN) OR NOT RLX_BACKEND_VULKAN_AVAILABLE)
  message(STATUS "directx backend: off (it runs on the vulkan backend, which is off)")
  set(RLX_BACKEND_DIRECTX_AVAILABLE OFF)
endif()
