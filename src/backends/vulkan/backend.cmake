# The vulkan device: built where Vulkan's headers are (libvulkan-dev). The loader
# (libvulkan.so.1) is opened at run time, so binaries start on machines without one and
# `rlx devices` says why the device is unavailable (no loader, no driver, no compute queue).
find_path(RLX_VULKAN_INCLUDE vulkan/vulkan_core.h)
if(NOT RLX_VULKAN_INCLUDE)
  message(STATUS "vulkan backend: off (no vulkan/vulkan_core.h: install libvulkan-dev)")
  set(RLX_BACKEND_VULKAN_AVAILABLE OFF)
else()
  set(RLX_BACKEND_VULKAN_LIBS ${CMAKE_DL_LIBS})
  message(STATUS "vulkan backend: headers in ${RLX_VULKAN_INCLUDE}, loader opened at run time")
endif()
