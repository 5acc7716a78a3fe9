#include "backends/opencl/cl.h"

#include <dlfcn.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "rlx/error.h"
#include "util/cache_dir.h"
#include "util/strings.h"

namespace rlx::backends::opencl {

namespace {

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

// Build options: IEEE division and square root (OpenCL allows 2.5 ulp by default, the kernels'
// results are compared with the reference's correctly rounded ones); no fast math.
constexpr const char* kOptions = "-cl-fp32-correctly-rounded-divide-sqrt";

}  // namespace

const char* status_name(cl_int s) {
  switch (s) {
    case CL_SUCCESS: return "CL_SUCCESS";
    case CL_DEVICE_NOT_FOUND: return "CL_DEVICE_NOT_FOUND";
    case CL_MEM_OBJECT_ALLOCATION_FAILURE: return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
    case CL_OUT_OF_RESOURCES: return "CL_OUT_OF_RESOURCES";
    case CL_OUT_OF_HOST_MEMORY: return "CL_OUT_OF_HOST_MEMORY";
    case CL_BUILD_PROGRAM_FAILURE: return "CL_BUILD_PROGRAM_FAILURE";
    case CL_INVALID_VALUE: return "CL_INVALID_VALUE";
    case CL_INVALID_BINARY: return "CL_INVALID_BINARY";
    case CL_INVALID_BUILD_OPTIONS: return "CL_INVALID_BUILD_OPTIONS";
    case CL_INVALID_KERNEL_ARGS: return "CL_INVALID_KERNEL_ARGS";
    case CL_INVALID_ARG_SIZE: return "CL_INVALID_ARG_SIZE";
    case CL_INVALID_WORK_GROUP_SIZE: return "CL_INVALID_WORK_GROUP_SIZE";
    case CL_INVALID_WORK_ITEM_SIZE: return "CL_INVALID_WORK_ITEM_SIZE";
    case CL_INVALID_BUFFER_SIZE: return "CL_INVALID_BUFFER_SIZE";
    case CL_INVALID_MEM_OBJECT: return "CL_INVALID_MEM_OBJECT";
    default: return "an OpenCL error";
  }
}

// Never destroyed: its programs, queue and context live as long as the process (the driver's own
// exit handlers may already have run when a static would be destroyed). Kept reachable, they are
// not what LeakSanitizer reports — a static destroyed without releasing them left PoCL's program
// objects unreferenced at exit (make sanitize, 2026-12-07).
Context& Context::get() {
  static Context& c = *new Context;
  return c;
}

Context::Context() { open(); }

void Context::open() {
  auto fail = [&](const std::string& why) { availability_ = {false, why}; };
  lib_ = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib_) return fail("no OpenCL loader (libOpenCL.so.1 could not be loaded: install ocl-icd-libopencl1 and a driver such as pocl-opencl-icd)");
#define RLX_CL_LOAD(name)                                                  \
  cl_.name = reinterpret_cast<decltype(cl_.name)>(dlsym(lib_, #name));     \
  if (!cl_.name) return fail("libOpenCL.so.1 lacks " #name " (OpenCL 1.2)");
  RLX_CL_FUNCTIONS(RLX_CL_LOAD)
#undef RLX_CL_LOAD
  cl_uint np = 0;
  if (cl_.clGetPlatformIDs(0, nullptr, &np) != CL_SUCCESS || np == 0) return fail("no OpenCL platform (no ICD in /etc/OpenCL/vendors: install pocl-opencl-icd or a GPU's)");
  std::vector<cl_platform_id> platforms(np);
  cl_.clGetPlatformIDs(np, platforms.data(), nullptr);
  auto dev_str = [&](cl_device_id d, cl_device_info what) {
    size_t n = 0;
    cl_.clGetDeviceInfo(d, what, 0, nullptr, &n);
    std::string s(n, '\0');
    cl_.clGetDeviceInfo(d, what, n, s.data(), nullptr);
    while (!s.empty() && s.back() == '\0') s.pop_back();
    return s;
  };
  // a GPU first, then any full-profile device (64-bit integers are the kernels' integer class)
  cl_platform_id chosen = nullptr;
  for (cl_device_type want : {static_cast<cl_device_type>(CL_DEVICE_TYPE_GPU), static_cast<cl_device_type>(CL_DEVICE_TYPE_ALL)}) {
    for (cl_platform_id p : platforms) {
      cl_uint nd = 0;
      if (cl_.clGetDeviceIDs(p, want, 0, nullptr, &nd) != CL_SUCCESS || nd == 0) continue;
      std::vector<cl_device_id> ds(nd);
      cl_.clGetDeviceIDs(p, want, nd, ds.data(), nullptr);
      for (cl_device_id d : ds)
        if (dev_str(d, CL_DEVICE_PROFILE) == "FULL_PROFILE") {
          device_ = d, chosen = p;
          break;
        }
      if (device_) break;
    }
    if (device_) break;
  }
  if (!device_) return fail("no full-profile OpenCL device (embedded profiles lack the 64-bit integers the kernels use)");
  size_t n = 0;
  cl_.clGetPlatformInfo(chosen, CL_PLATFORM_NAME, 0, nullptr, &n);
  info_.platform.resize(n);
  cl_.clGetPlatformInfo(chosen, CL_PLATFORM_NAME, n, info_.platform.data(), nullptr);
  while (!info_.platform.empty() && info_.platform.back() == '\0') info_.platform.pop_back();
  info_.device = dev_str(device_, CL_DEVICE_NAME);
  info_.version = dev_str(device_, CL_DEVICE_VERSION);
  info_.driver = dev_str(device_, CL_DRIVER_VERSION);
  info_.c_version = dev_str(device_, CL_DEVICE_OPENCL_C_VERSION);
  cl_device_type type = 0;
  cl_.clGetDeviceInfo(device_, CL_DEVICE_TYPE, sizeof type, &type, nullptr);
  info_.gpu = (type & CL_DEVICE_TYPE_GPU) != 0;
  cl_ulong v = 0;
  cl_.clGetDeviceInfo(device_, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof v, &v, nullptr);
  info_.max_alloc = v;
  cl_.clGetDeviceInfo(device_, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof v, &v, nullptr);
  info_.global_bytes = v;
  cl_.clGetDeviceInfo(device_, CL_DEVICE_LOCAL_MEM_SIZE, sizeof v, &v, nullptr);
  info_.local_bytes = v;
  cl_.clGetDeviceInfo(device_, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof info_.max_group, &info_.max_group, nullptr);
  cl_uint bits = 0;
  cl_.clGetDeviceInfo(device_, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof bits, &bits, nullptr);
  info_.base_align_bytes = std::max<cl_uint>(bits / 8, 16);
  if (info_.max_group < 256) return fail(cat(info_.device, " runs at most ", info_.max_group, " work-items a group; the kernels use 256"));
  cl_int err = CL_SUCCESS;
  context_ = cl_.clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &err);
  if (err != CL_SUCCESS) return fail(cat("clCreateContext failed on ", info_.device, " (", status_name(err), ")"));
  queue_ = cl_.clCreateCommandQueue(context_, device_, 0, &err);
  if (err != CL_SUCCESS) return fail(cat("clCreateCommandQueue failed on ", info_.device, " (", status_name(err), ")"));
}

void Context::check(cl_int status, const std::string& what) const {
  if (status != CL_SUCCESS) throw Error(status == CL_MEM_OBJECT_ALLOCATION_FAILURE || status == CL_OUT_OF_RESOURCES ? ErrorKind::out_of_memory : ErrorKind::runtime,
                                        cat("opencl (", info_.device, "): ", what, " failed (", status_name(status), ", ", status, ")"));
}

cl_program Context::program(const std::string& source, const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = programs_.find(source); it != programs_.end()) return it->second;
  namespace fs = std::filesystem;
  char key[64];
  std::snprintf(key, sizeof key, "%016llx-%016llx", static_cast<unsigned long long>(fnv1a(source)),
                static_cast<unsigned long long>(fnv1a(info_.platform + info_.device + info_.driver + kOptions)));
  const std::string dir = cache_dir("opencl");
  const fs::path file = dir.empty() ? fs::path() : fs::path(dir) / (std::string(key) + ".bin");
  cl_int err = CL_SUCCESS;
  cl_program p = nullptr;
  if (!file.empty()) {
    std::ifstream f(file, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(f)), {});
    if (!bytes.empty()) {
      const size_t size = bytes.size();
      const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
      cl_int binary_status = CL_SUCCESS;
      p = cl_.clCreateProgramWithBinary(context_, 1, &device_, &size, &data, &binary_status, &err);
      if (err != CL_SUCCESS || binary_status != CL_SUCCESS || cl_.clBuildProgram(p, 1, &device_, kOptions, nullptr, nullptr) != CL_SUCCESS) {
        if (p) cl_.clReleaseProgram(p);
        p = nullptr;  // a stale or foreign binary: built again from the source below
      }
    }
  }
  if (!p) {
    const char* text = source.c_str();
    const size_t len = source.size();
    p = cl_.clCreateProgramWithSource(context_, 1, &text, &len, &err);
    check(err, cat("creating the program of ", name));
    err = cl_.clBuildProgram(p, 1, &device_, kOptions, nullptr, nullptr);
    if (err != CL_SUCCESS) {
      size_t n = 0;
      cl_.clGetProgramBuildInfo(p, device_, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n);
      std::string log(n, '\0');
      cl_.clGetProgramBuildInfo(p, device_, CL_PROGRAM_BUILD_LOG, n, log.data(), nullptr);
      cl_.clReleaseProgram(p);
      throw Error(ErrorKind::internal, cat("opencl: the OpenCL C of ", name, " does not build on ", info_.device, ":\n", log));
    }
    size_t size = 0;
    if (!file.empty() && cl_.clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr) == CL_SUCCESS && size > 0) {
      std::vector<unsigned char> bin(size);
      unsigned char* ptr = bin.data();
      if (cl_.clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof ptr, &ptr, nullptr) == CL_SUCCESS) {
        fs::path tmp = file;  // written whole, then renamed: a reader never sees half a file
        tmp += ".partial";
        std::ofstream(tmp, std::ios::binary).write(reinterpret_cast<const char*>(bin.data()), static_cast<std::streamsize>(size));
        std::error_code ec;
        fs::rename(tmp, file, ec);
      }
    }
  }
  return programs_[source] = p;
}

}  // namespace rlx::backends::opencl
