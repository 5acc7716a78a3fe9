# The webgpu device: the vulkan device's kernels in their HLSL flavour, compiled by glslang to
# SPIR-V and printed as WGSL (codegen/wgsl) — so it is built with the vulkan backend — and run
# by Dawn in a Node process (runner.mjs, embedded in the binary; node and the npm `webgpu`
# package are needed only at run time: without them `rlx devices` says what is missing).
set(RLX_BACKEND_VULKAN_AVAILABLE ON)
include(${CMAKE_SOURCE_DIR}/src/backends/vulkan/backend.cmake)
if((DEFINED RLX_BACKEND_VULKAN AND NOT RLX_BACKEND_VULKAN) OR NOT RLX_BACKEND_VULKAN_AVAILABLE)
  message(STATUS "webgpu backend: off (its kernels come from the vulkan backend's, which is off)")
  set(RLX_BACKEND_WEBGPU_AVAILABLE OFF)
else()
  # the Node runner is web/rlx-webgpu.js with runner.mjs after it; the exported program carries
  # rlx-webgpu.js itself and a page that runs any plan
  set(web ${CMAKE_SOURCE_DIR}/src/backends/webgpu/web)
  rlx_embed_text(${CMAKE_BINARY_DIR}/generated/webgpu_runner_js.h rlx::backends::webgpu
                 kWebgpuRunnerJs "${web}/rlx-webgpu.js|${CMAKE_SOURCE_DIR}/src/backends/webgpu/runner.mjs")
  rlx_embed_text(${CMAKE_BINARY_DIR}/generated/webgpu_web_files.h rlx::backends::webgpu
                 kWebgpuModuleJs ${web}/rlx-webgpu.js kWebgpuPlanPage ${web}/plan.html)
  set(RLX_BACKEND_WEBGPU_COMPILE_OPTIONS -I${CMAKE_BINARY_DIR}/generated)
endif()
