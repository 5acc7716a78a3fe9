#include "backends/cuda/device.h"

#include <mutex>

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::backends::cuda {

namespace {

std::string version_text(int v) { return cat(v / 1000, ".", (v % 1000) / 10); }

GpuInfo probe() {
  GpuInfo g;
  cudaRuntimeGetVersion(&g.runtime);
  // cudaDriverGetVersion reports 0 when no driver (libcuda.so.1) can be loaded.
  if (cudaDriverGetVersion(&g.driver) != cudaSuccess || g.driver == 0) {
    g.reason = "no NVIDIA driver found (libcuda.so.1 could not be loaded)";
    return g;
  }
  if (g.driver < g.runtime) {
    g.reason = cat("the NVIDIA driver supports CUDA ", version_text(g.driver), " but RLX was built with CUDA ", version_text(g.runtime),
                   ": the driver is too old");
    return g;
  }
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    g.reason = cat("CUDA found no usable device: ", cudaGetErrorString(e));
    cudaGetLastError();  // clear the sticky error
    return g;
  }
  if (count == 0) {
    g.reason = "no CUDA device found";
    return g;
  }
  cudaDeviceProp p{};
  if ((e = cudaGetDeviceProperties(&p, 0)) != cudaSuccess) {
    g.reason = cat("could not read the properties of CUDA device 0: ", cudaGetErrorString(e));
    return g;
  }
  g.name = p.name;
  g.memory = p.totalGlobalMem;
  g.major = p.major;
  g.minor = p.minor;
  g.sm_count = p.multiProcessorCount;
  // The kernels are built for sm_80 and sm_90 (+ PTX of sm_90 for newer GPUs).
  if (p.major < 8) {
    g.reason = cat(g.name, " has compute capability ", p.major, ".", p.minor, "; the cuda device needs 8.0 or newer (Ampere)");
    return g;
  }
  g.usable = true;
  return g;
}

}  // namespace

const GpuInfo& gpu_info() {
  static const GpuInfo info = probe();
  return info;
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw Error(e == cudaErrorMemoryAllocation ? ErrorKind::out_of_memory : ErrorKind::runtime, cat("cuda: ", what, ": ", cudaGetErrorString(e)));
}

void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) throw Error(ErrorKind::runtime, cat("cuda: ", what, ": cuBLAS status ", static_cast<int>(s)));
}

void use_device() { check(cudaSetDevice(kDeviceIndex), "selecting the device"); }

cublasLtHandle_t cublaslt() {
  static std::once_flag once;
  static cublasLtHandle_t handle = nullptr;
  std::call_once(once, [] {
    use_device();
    check(cublasLtCreate(&handle), "creating the cuBLASLt handle");
  });
  return handle;
}

DeviceBuffer::DeviceBuffer(size_t bytes, const char* what) : bytes_(bytes) {
  if (bytes == 0) return;
  use_device();
  cudaError_t e = cudaMalloc(&ptr_, bytes);
  if (e != cudaSuccess) {
    cudaGetLastError();
    throw Error(ErrorKind::out_of_memory, cat("cuda: could not allocate ", bytes, " bytes for ", what, ": ", cudaGetErrorString(e)));
  }
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_) cudaFree(ptr_);
}

}  // namespace rlx::backends::cuda
