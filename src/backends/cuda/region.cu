// elementwise_region (and fused_dot epilogues): the body runs per element on a small register
// machine. Values are f32 in registers; an op whose result is f16/bf16/bool is rounded to that
// type right away, so a fused chain computes exactly what its unfused nodes would.
#include "backends/cuda/region_tile.cuh"

namespace rlx::backends::cuda {

namespace {

__global__ void region_kernel(const __grid_constant__ RegionProgram p, const __grid_constant__ RegionPtrs ptr, int64_t n) {
  RLX_AFTER_PRODUCERS();
  region_elems(p, ptr, n, static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x, static_cast<int64_t>(gridDim.x) * blockDim.x);
}

}  // namespace

void launch_region(const RegionProgram& p, const void* const* in, void* const* out, int64_t n, cudaStream_t s) {
  if (n == 0) return;
  RegionPtrs ptr{};
  for (int k = 0; k < p.n_in; ++k) ptr.in[k] = in[k];
  for (int o = 0; o < p.n_out; ++o) ptr.out[o] = out[o];
  launch_after(region_kernel, grid_for(n), kThreads, 0, s, p, ptr, n);
}

}  // namespace rlx::backends::cuda
