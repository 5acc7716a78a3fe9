#include "backends/cuda/common.cuh"

namespace rlx::backends::cuda {

namespace {

__global__ void wait_flag_kernel(const volatile int* flag) {
  while (*flag == 0) {
  }
}

}  // namespace

void launch_wait_flag(const volatile int* flag, cudaStream_t s) { wait_flag_kernel<<<1, 1, 0, s>>>(flag); }

}  // namespace rlx::backends::cuda
