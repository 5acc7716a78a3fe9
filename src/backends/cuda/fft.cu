// The Fourier transforms' scale factor (numpy's norm) applied after cuFFT, which never scales.
#include "backends/cuda/common.cuh"

namespace rlx::backends::cuda {

namespace {

template <class T>
__global__ void scale_kernel(T* x, int64_t n, T s) {
  RLX_GRID_STRIDE(i, n) x[i] *= s;
}

}  // namespace

void launch_scale(bool f64, void* x, int64_t reals, double s, cudaStream_t stream) {
  if (f64) scale_kernel<<<grid_for(reals), kThreads, 0, stream>>>(static_cast<double*>(x), reals, s);
  else scale_kernel<<<grid_for(reals), kThreads, 0, stream>>>(static_cast<float*>(x), reals, static_cast<float>(s));
}

}  // namespace rlx::backends::cuda
