// The webgpu device's parts: the bridge to its Node/Dawn runner (bridge.h), the kernels' target
// and the executable.
#pragma once
#include <map>
#include <memory>
#include <string>

#include "backends/vulkan/target.h"
#include "ir/graph.h"
#include "runtime/backend.h"

namespace rlx::backends::webgpu {

// The vulkan device's kernels in their HLSL flavour (32-bit integer class, 8/16-bit tensors
// packed in words, no subgroups), whose SPIR-V is printed as WGSL; WebGPU's default limits
// (128 MiB a binding, 16 KiB of workgroup memory), so claims read the same everywhere.
vulkan::KernelTarget webgpu_target();
std::unique_ptr<runtime::Executable> make_executable(const ir::Graph& lir);

// A planned LIR as files a browser runs (export.cpp): kernels/kN.wgsl, plan.json, weights.bin,
// rlx-webgpu.js, index.html and README.md.
std::map<std::string, std::string> emit_program(const ir::Graph& lir);

}  // namespace rlx::backends::webgpu
