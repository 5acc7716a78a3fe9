# The gpu device: OpenCL 1.2+, its kernels the vulkan device's respelled as OpenCL C — so it is
# built with the vulkan backend and OpenCL's headers (opencl-c-headers). libOpenCL.so.1 (the ICD
# loader) is opened at run time: binaries start where there is none and `rlx devices` says why
# the device is unavailable.
find_path(RLX_OPENCL_INCLUDE CL/cl.h)
if(NOT RLX_OPENCL_INCLUDE)
  message(STATUS "opencl backend (gpu): off (no CL/cl.h: install opencl-c-headers)")
  set(RLX_BACKEND_OPENCL_AVAILABLE OFF)
else()
  # the vulkan backend's checks, ahead of its turn in the folder order
  set(RLX_BACKEND_VULKAN_AVAILABLE ON)
  include(${CMAKE_SOURCE_DIR}/src/backends/vulkan/backend.cmake)
  if((DEFINED RLX_BACKEND_VULKAN AND NOT RLX_BACKEND_VULKAN) OR NOT RLX_BACKEND_VULKAN_AVAILABLE)
    message(STATUS "opencl backend (gpu): off (it prints the vulkan backend's kernels, which is off)")
    set(RLX_BACKEND_OPENCL_AVAILABLE OFF)
  else()
    set(RLX_BACKEND_OPENCL_LIBS ${CMAKE_DL_LIBS})
  endif()
endif()
