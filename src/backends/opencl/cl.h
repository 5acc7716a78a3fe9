// OpenCL 1.2+ without linking it: the ICD loader (libOpenCL.so.1) opened at run time, the first
// GPU of any platform else the first device of any kind (PoCL's CPU device in CI), one context
// and one in-order queue, and programs built from OpenCL C with their binaries cached on disk
// ($XDG_CACHE_HOME/rlx/opencl, keyed by the source, the device and its driver).
#pragma once
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <map>
#include <mutex>
#include <string>

#include "runtime/backend.h"

namespace rlx::backends::opencl {

struct Cl {
#define RLX_CL_FUNCTIONS(X)    \
  X(clGetPlatformIDs)          \
  X(clGetPlatformInfo)         \
  X(clGetDeviceIDs)            \
  X(clGetDeviceInfo)           \
  X(clCreateContext)           \
  X(clReleaseContext)          \
  X(clCreateCommandQueue)      \
  X(clReleaseCommandQueue)     \
  X(clCreateBuffer)            \
  X(clReleaseMemObject)        \
  X(clEnqueueWriteBuffer)      \
  X(clEnqueueReadBuffer)       \
  X(clEnqueueFillBuffer)       \
  X(clCreateProgramWithSource) \
  X(clCreateProgramWithBinary) \
  X(clBuildProgram)            \
  X(clGetProgramBuildInfo)     \
  X(clGetProgramInfo)          \
  X(clReleaseProgram)          \
  X(clCreateKernel)            \
  X(clReleaseKernel)           \
  X(clSetKernelArg)            \
  X(clGetKernelWorkGroupInfo)  \
  X(clEnqueueNDRangeKernel)    \
  X(clFinish)
#define RLX_CL_DECLARE(name) decltype(&::name) name = nullptr;
  RLX_CL_FUNCTIONS(RLX_CL_DECLARE)
#undef RLX_CL_DECLARE
};

struct ClInfo {
  std::string platform, device, version, driver, c_version;
  bool gpu = false;
  uint64_t max_alloc = 0, global_bytes = 0;
  uint64_t local_bytes = 0;
  size_t max_group = 0;
  uint32_t base_align_bytes = 128;
};

class Context {
 public:
  static Context& get();
  const runtime::Availability& availability() const { return availability_; }
  const ClInfo& info() const { return info_; }
  const Cl& cl() const { return cl_; }
  cl_context context() const { return context_; }
  cl_command_queue queue() const { return queue_; }
  // The program of `source` built for the device (from the disk cache where it was before); one
  // program per source for the process. `name` names the kernel in the error when it does not build.
  cl_program program(const std::string& source, const std::string& name);
  // Throws rlx::Error(runtime) naming `what` when `status` is not CL_SUCCESS.
  void check(cl_int status, const std::string& what) const;

 private:
  Context();
  void open();
  runtime::Availability availability_;
  ClInfo info_;
  Cl cl_;
  void* lib_ = nullptr;
  cl_device_id device_ = nullptr;
  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
  std::mutex mu_;
  std::map<std::string, cl_program> programs_;
};

// OpenCL's name for a status ("CL_OUT_OF_RESOURCES").
const char* status_name(cl_int status);

}  // namespace rlx::backends::opencl
