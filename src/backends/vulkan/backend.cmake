# The vulkan device: built where Vulkan's headers are (libvulkan-dev). The loader
# (libvulkan.so.1) is opened at run time, so binaries start on machines without one and
# `rlx devices` says why the device is unavailable (no loader, no driver, no compute queue).
# Kernels generated at run time compile through shaderc, linked statically: Debian's
# libshaderc.so is underlinked (../shared/ENV.md), its static archives with glslang's and
# SPIRV-Tools' work.
find_path(RLX_VULKAN_INCLUDE vulkan/vulkan_core.h)
find_library(RLX_SHADERC_COMBINED NAMES libshaderc_combined.a)
find_library(RLX_GLSLANG_STATIC NAMES libglslang.a)
find_library(RLX_SPIRV_TOOLS_OPT NAMES libSPIRV-Tools-opt.a)
if(NOT RLX_VULKAN_INCLUDE)
  message(STATUS "vulkan backend: off (no vulkan/vulkan_core.h: install libvulkan-dev)")
  set(RLX_BACKEND_VULKAN_AVAILABLE OFF)
elseif(NOT RLX_SHADERC_COMBINED OR NOT RLX_GLSLANG_STATIC OR NOT RLX_SPIRV_TOOLS_OPT)
  message(STATUS "vulkan backend: off (no static shaderc/glslang/SPIRV-Tools: install libshaderc-dev glslang-dev spirv-tools)")
  set(RLX_BACKEND_VULKAN_AVAILABLE OFF)
else()
  set(RLX_BACKEND_VULKAN_LIBS ${CMAKE_DL_LIBS} -Wl,--start-group -l:libshaderc_combined.a -l:libglslang.a -l:libMachineIndependent.a
      -l:libGenericCodeGen.a -l:libOSDependent.a -l:libOGLCompiler.a -l:libHLSL.a -l:libSPIRV.a -l:libglslang-default-resource-limits.a
      -l:libSPIRV-Tools-opt.a -l:libSPIRV-Tools.a -Wl,--end-group Threads::Threads)
  message(STATUS "vulkan backend: headers in ${RLX_VULKAN_INCLUDE}, loader opened at run time, shaderc static")
endif()
