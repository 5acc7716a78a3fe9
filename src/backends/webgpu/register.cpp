// The webgpu device: WebGPU compute through Dawn — the npm `webgpu` package, run by Node (CI:
// Dawn's OpenGL ES backend on Mesa's llvmpipe; a GPU's Vulkan where there is one). Its kernels
// are the vulkan families printed as WGSL (HLSL → SPIR-V → codegen/wgsl), so every op it
// claims runs the same arithmetic as the other GPU devices; `rlx export --target webgpu` is
// the browser's path to the same kernels.
#include "backends/vulkan/family_backend.h"
#include "backends/webgpu/bridge.h"
#include "backends/webgpu/webgpu.h"
#include "rlx/error.h"
#include "runtime/registry.h"
#include "util/strings.h"

namespace rlx::backends::webgpu {

namespace {

class WebgpuBackend : public vulkan::FamilyBackend {
 public:
  std::string name() const override { return "webgpu"; }
  std::string description() const override {
    Bridge& b = Bridge::get();
    if (b.availability().available)
      return cat(b.info().adapter, " (Dawn's ", b.info().backend, " backend, through Node); the vulkan kernels as WGSL; rlx export --target webgpu writes a page a browser runs");
    return "WebGPU through Dawn (the npm webgpu package, run by Node); the vulkan kernels as WGSL; rlx export --target webgpu writes a page a browser runs";
  }
  runtime::Availability availability() const override { return Bridge::get().availability(); }
  // Fused attention is left to its decomposition: its WGSL hung Dawn on llvmpipe (workgroups
  // waiting at a barrier, not yet diagnosed) — refused here rather than run.
  bool claims_kernel(ir::Op op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs& attrs) const override {
    return op != ir::Op::attention && FamilyBackend::claims_kernel(op, in, out, attrs);
  }
  std::unique_ptr<runtime::Executable> compile(const ir::Graph& lir) override {
    const runtime::Availability a = availability();
    if (!a.available) throw Error(ErrorKind::unsupported, cat("webgpu is not available: ", a.reason));
    return make_executable(lir);
  }
  std::map<std::string, std::string> emit_source(const ir::Graph& lir) override { return emit_program(lir); }

 private:
  const vulkan::KernelTarget& target() const override {
    static const vulkan::KernelTarget t = webgpu_target();
    return t;
  }
};

}  // namespace

void register_backend() { runtime::register_backend(std::make_unique<WebgpuBackend>()); }

}  // namespace rlx::backends::webgpu
