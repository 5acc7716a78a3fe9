// The metal device's parts: the kernels' target (MSL) and the program it emits for a plan.
#pragma once
#include <map>
#include <string>

#include "backends/vulkan/target.h"
#include "ir/graph.h"

namespace rlx::backends::metal {

// The vulkan device's kernels as MSL: 8/16/64-bit integers in buffers, 32 KB of threadgroup
// memory (every Apple GPU's), no SIMD-group schedules.
vulkan::KernelTarget metal_target();

// A planned LIR as files for a Metal host: kernels/kNNN.metal (one per distinct kernel),
// weights.bin (every constant), plan.json (buffers, and each dispatch's kernel, buffers, words,
// threadgroups and threads) and README.md (the format).
std::map<std::string, std::string> emit_program(const ir::Graph& lir);

}  // namespace rlx::backends::metal
