// Fused regions (and reductions of them) compiled to their own kernels: the RegionProgram printed as straight-line CUDA C,
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

// fused_reduce: the program (one output) evaluated over kept × reduced indices and reduced in
// f64 (sums) like mir.reduce. Input k's element of output o and reduced index r is at
// kept-offset(o) + reduced-offset(r), each unravelled over its own collapsed dims.
struct ReduceGeometry {
  int krank = 0, rrank = 0;
  int64_t kshape[kRegionRank] = {}, rshape[kRegionRank] = {};
  int64_t kst[kRegionMaxInputs][kRegionRank] = {}, rst[kRegionMaxInputs][kRegionRank] = {};
  int64_t K = 1, R = 1;  // outputs, reduced elements per output
  bool rows = true;      // lanes walk one output's reduced elements (contiguous), else 32 neighbouring outputs × 32 lanes
  int group = 32;        // rows: lanes per output, 32 (a warp) or 256 (a block, for few outputs)
  bool serial = false;   // a thread per output walks all its reduced elements (short reductions)
};
std::shared_ptr<const RegionKernel> jit_reduce_region(const RegionProgram& p, Red kind, Dt out, const ReduceGeometry& g);
void launch_reduce_region_jit(const RegionKernel& k, const RegionProgram& p, const ReduceGeometry& g, const void* const* in, void* out, cudaStream_t s);

}  // namespace rlx::backends::cuda
