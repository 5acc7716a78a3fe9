// The rocm device's parts: the kernels' target (HIP for AMD GPUs) and the program it emits.
#pragma once
#include <map>
#include <string>

#include "backends/vulkan/target.h"
#include "ir/graph.h"

namespace rlx::backends::rocm {

// The vulkan device's kernels as HIP: 8/16/64-bit integers in buffers, 64 KB of LDS (gfx90a's
// and gfx1030's), no wave-level schedules (wave64 on CDNA, wave32 on RDNA: the families'
// subgroup kernels assume neither).
vulkan::KernelTarget hip_target();

// A planned LIR as files for a ROCm host: kernels/kN.hip (one per distinct kernel), weights.bin,
// plan.json and plan.inc (the same plan for a program and for run.cpp), run.cpp (the host: HIP's
// module API), a Makefile (hipcc: code objects for ARCHS, default gfx90a and gfx1030, and the
// host) and README.md.
std::map<std::string, std::string> emit_program(const ir::Graph& lir);

// The text of run.cpp.
const char* host_runner_source();

}  // namespace rlx::backends::rocm
