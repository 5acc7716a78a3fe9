# The opengl device: GL 4.3+ compute through EGL without a display (surfaceless), its kernels the
# vulkan device's GLSL printed in OpenGL's flavour — so it is built with the vulkan backend and
# EGL's headers (libegl-dev, libgl-dev). libEGL is opened at run time: binaries start where there
# is none and `rlx devices` says why the device is unavailable.
find_path(RLX_EGL_INCLUDE EGL/egl.h)
find_path(RLX_GLCOREARB_INCLUDE GL/glcorearb.h)
if(NOT RLX_EGL_INCLUDE OR NOT RLX_GLCOREARB_INCLUDE)
  message(STATUS "opengl backend: off (no EGL/egl.h or GL/glcorearb.h: install libegl-dev libgl-dev)")
  set(RLX_BACKEND_OPENGL_AVAILABLE OFF)
else()
  # the vulkan backend's checks, ahead of its turn in the folder order
  set(RLX_BACKEND_VULKAN_AVAILABLE ON)
  include(${CMAKE_SOURCE_DIR}/src/backends/vulkan/backend.cmake)
endif()
if(NOT RLX_EGL_INCLUDE OR NOT RLX_GLCOREARB_INCLUDE)
elseif((DEFINED RLX_BACKEND_VULKAN AND NOT RLX_BACKEND_VULKAN) OR NOT RLX_BACKEND_VULKAN_AVAILABLE)
  message(STATUS "opengl backend: off (it prints the vulkan backend's kernels, which is off)")
  set(RLX_BACKEND_OPENGL_AVAILABLE OFF)
else()
  set(RLX_BACKEND_OPENGL_LIBS ${CMAKE_DL_LIBS})
endif()
