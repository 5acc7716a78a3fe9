// Fused regions compiled to their own kernels: the RegionProgram printed as straight-line CUDA C,
// compiled at run time with NVRTC and cached by source hash, in memory and on disk
// ($XDG_CACHE_HOME or ~/.cache, rlx/cuda/). Where NVRTC is missing or fails, the register
// machine of region.cu runs the program instead — same results, slower.
#pragma once
#include <memory>

#include "backends/cuda/launch.h"

namespace rlx::backends::cuda {

struct RegionKernel;

// How each input is addressed, known when the node is compiled.
enum class InputAccess : uint8_t { full, scalar, strided };

// nullptr when the program must be interpreted (NVRTC unavailable, RLX_CUDA_NVRTC=0, or a failure).
std::shared_ptr<const RegionKernel> jit_region(const RegionProgram& p, const InputAccess* access);

void launch_region_jit(const RegionKernel& k, const RegionProgram& p, const void* const* in, void* const* out, int64_t n, cudaStream_t s);

}  // namespace rlx::backends::cuda
