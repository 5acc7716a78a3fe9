// The webgpu device's link to its GPU: a Node process running runner.mjs, which owns a WebGPU
// device through the npm `webgpu` package (Dawn; its node binding has no C API). The process is
// started on first use with a socket as its stdin and stdout; each call here is one request
// and its reply, in order. Dawn's Vulkan backend is asked first, then OpenGL ES (EGL
// surfaceless) — on lavapipe only the latter gives an adapter, on Mesa's llvmpipe.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/backend.h"

namespace rlx::backends::webgpu {

struct WebgpuInfo {
  std::string adapter, backend;  // "llvmpipe (LLVM 15.0.6, 256 bits), mesa", "opengles"
  uint64_t max_binding_bytes = 0, max_buffer_bytes = 0;
  uint32_t max_storage_buffers = 0, max_shared_bytes = 0, max_invocations = 0, max_groups = 0;
};

class Bridge {
 public:
  static Bridge& get();
  ~Bridge();
  const runtime::Availability& availability();
  const WebgpuInfo& info();

  uint32_t new_id();
  void buffer(uint32_t id, uint64_t bytes);
  void write(uint32_t id, uint64_t offset, const void* data, size_t bytes);
  // The pipeline of `wgsl` with `bindings` storage buffers (one per WGSL source and binding
  // count for the process). `name` names the kernel when it does not compile.
  uint32_t pipeline(const std::string& wgsl, uint32_t bindings, const std::string& name);
  // words: the program request's payload after its id (runner.mjs)
  void program(uint32_t id, const std::vector<uint32_t>& words);
  void run(uint32_t program);
  void read(uint32_t id, uint64_t offset, void* out, size_t bytes);
  enum class Kind : uint32_t { buffer = 0, pipeline = 1, program = 2 };
  void free(Kind kind, uint32_t id);

 private:
  Bridge() = default;
  void start();
  // Sends request `op` and returns its reply's payload; throws rlx::Error naming `what`.
  std::string request(uint32_t op, const std::string& payload, const std::string& what);
  std::string runner_stderr() const;

  std::mutex mu_;
  bool started_ = false;
  runtime::Availability availability_{false, "not started"};
  WebgpuInfo info_;
  int fd_ = -1;
  pid_t pid_ = -1;
  std::string stderr_path_;
  uint32_t next_id_ = 1;
  std::map<std::string, uint32_t> pipelines_;
};

}  // namespace rlx::backends::webgpu
