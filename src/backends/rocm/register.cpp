// The rocm device: AMD GPUs through HIP. No AMD GPU is in reach here, so it runs nothing
// in-process: it claims what the vulkan kernels claim (the same families, printed as HIP) and
// emits a plan's program (rlx export --target rocm), whose Makefile builds the kernels with hipcc
// for gfx90a and gfx1030 and the host against the HIP runtime — CI builds it, hence
// "built, not run".
#include <unistd.h>

#include "backends/rocm/rocm.h"
#include "backends/vulkan/family_backend.h"
#include "rlx/error.h"
#include "runtime/registry.h"
#include "util/strings.h"

namespace rlx::backends::rocm {

namespace {

constexpr const char* kWhyNot =
    "emits HIP (rlx export --target rocm; its Makefile builds code objects for gfx90a and gfx1030 with hipcc); not run here: no AMD GPU on this machine";

class RocmBackend : public vulkan::FamilyBackend {
 public:
  std::string name() const override { return "rocm"; }
  std::string description() const override {
    return cat("AMD GPUs through HIP: the vulkan kernels as HIP, exported with a host program, the dispatch plan and the weights",
               access("/usr/bin/hipcc", X_OK) == 0 ? " (hipcc found)" : " (hipcc not found: apt-get install hipcc)");
  }
  runtime::Availability availability() const override { return {false, kWhyNot}; }
  std::string status() const override { return "built, not run"; }
  std::unique_ptr<runtime::Executable> compile(const ir::Graph&) override { throw Error(ErrorKind::unsupported, cat("rocm: ", kWhyNot)); }
  std::map<std::string, std::string> emit_source(const ir::Graph& lir) override { return emit_program(lir); }

 private:
  const vulkan::KernelTarget& target() const override {
    static const vulkan::KernelTarget t = hip_target();
    return t;
  }
};

}  // namespace

void register_backend() { runtime::register_backend(std::make_unique<RocmBackend>()); }

}  // namespace rlx::backends::rocm
