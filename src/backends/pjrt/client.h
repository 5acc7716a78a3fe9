// A PJRT client: a plugin loaded with dlopen (GetPjrtApi), one client on its first addressable
// device, StableHLO programs compiled by the plugin, host tensors in and out of device buffers.
// Every PJRT error becomes an rlx::Error with the plugin's message.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "rlx/tensor.h"

namespace rlx::backends::pjrt {

namespace c_api {
struct Api;
struct Client;
struct Device;
struct LoadedExecutable;
}  // namespace c_api

class Plugin {
 public:
  // Loads the plugin at `path` (throws rlx::Error naming the path and dlerror's reason).
  explicit Plugin(const std::string& path);
  ~Plugin();
  Plugin(const Plugin&) = delete;
  Plugin& operator=(const Plugin&) = delete;

  std::string platform() const;  // "cuda", "tpu", …
  std::string platform_version() const;
  int api_minor() const;

  // A compiled program with its outputs' types (the caller knows them: StableHLO states them).
  class Program {
   public:
    ~Program();
    // Runs on the plugin's device: inputs uploaded, outputs written into `outputs` (allocated
    // with their types when undefined).
    void run(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs, const std::vector<std::pair<DType, std::vector<int64_t>>>& out_types);

   private:
    friend class Plugin;
    Program(const Plugin* plugin, c_api::LoadedExecutable* exe) : plugin_(plugin), exe_(exe) {}
    const Plugin* plugin_;
    c_api::LoadedExecutable* exe_;
  };
  // Compiles StableHLO (MLIR text); the plugin's compiler message on failure.
  std::unique_ptr<Program> compile(const std::string& mlir) const;

 private:
  void check(void* error, const char* what) const;  // throws on a non-null PJRT_Error*
  template <class Args>
  void call(int slot, Args& args, const char* what) const;
  void* handle_ = nullptr;
  const c_api::Api* api_ = nullptr;
  c_api::Client* client_ = nullptr;
  c_api::Device* device_ = nullptr;
};

}  // namespace rlx::backends::pjrt
