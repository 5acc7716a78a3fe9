// The metal device: Apple GPUs through Metal. No Apple GPU is in reach here, so it runs nothing:
// it claims what the vulkan kernels claim (the same families, printed as MSL) and emits the
// program of a plan (rlx export --target metal) — its status says "emits source".
#include "backends/metal/metal.h"
#include "backends/vulkan/family_backend.h"
#include "rlx/error.h"
#include "runtime/registry.h"
#include "util/strings.h"

namespace rlx::backends::metal {

namespace {

constexpr const char* kWhyNot = "emits MSL; not run here (Metal needs an Apple GPU and macOS; this is Linux on x86-64): rlx export --target metal";

class MetalBackend : public vulkan::FamilyBackend {
 public:
  std::string name() const override { return "metal"; }
  std::string description() const override { return "Apple GPUs through Metal: the vulkan kernels as MSL 2, exported with a dispatch plan and the weights"; }
  runtime::Availability availability() const override { return {false, kWhyNot}; }
  std::string status() const override { return "emits source"; }
  std::unique_ptr<runtime::Executable> compile(const ir::Graph&) override { throw Error(ErrorKind::unsupported, cat("metal: ", kWhyNot)); }
  std::map<std::string, std::string> emit_source(const ir::Graph& lir) override { return emit_program(lir); }

 private:
  const vulkan::KernelTarget& target() const override {
    static const vulkan::KernelTarget t = metal_target();
    return t;
  }
};

}  // namespace

void register_backend() { runtime::register_backend(std::make_unique<MetalBackend>()); }

}  // namespace rlx::backends::metal
