// The GPU the cuda device runs on (the first CUDA device): whether it is usable and why not,
// its properties, the cuBLASLt handle, and RAII device memory. CUDA's runtime is linked
// statically and loads the driver itself, so a machine without one still starts RLX and the
// device reports itself unavailable.
#pragma once
#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <string>

namespace rlx::backends::cuda {

struct GpuInfo {
  bool usable = false;
  std::string reason;  // why not, when unusable
  std::string name;    // "NVIDIA H200"
  size_t memory = 0;   // bytes
  int major = 0, minor = 0, sm_count = 0;
  int driver = 0, runtime = 0;  // CUDA versions as 1000·major + 10·minor
};

// Probed once per process.
const GpuInfo& gpu_info();

// Throws rlx::Error(runtime) naming `what` when `e` is an error.
void check(cudaError_t e, const char* what);
void check(cublasStatus_t s, const char* what);

// The GPU every cuda run uses (one per process): its tensors are "cuda:0".
constexpr int kDeviceIndex = 0;
// Makes the device current on the calling thread (CUDA keeps it per thread).
void use_device();

// The process's cuBLASLt handle (thread-safe: every call names its own stream).
cublasLtHandle_t cublaslt();

// Device memory owned by one object; `bytes` may be 0 (no allocation).
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes, const char* what);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* data() const { return ptr_; }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace rlx::backends::cuda
