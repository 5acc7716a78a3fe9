// The vulkan device: instance and device discovery, a compute queue, a device-local pool and
// dispatch (context.h); kernels printed by the codegen layer's GLSL dialect and compiled at run
// time (kernels.h). It claims the MIR primitives — elementwise, cast, iota, movement, gather and
// scatter, reductions, dot_general — over every dtype it can store, so HIR ops run through their
// decompositions; compiling anything else fails listing what it lacks, as the dispatch contract
// requires.
#include "backends/vulkan/context.h"
#include "backends/vulkan/kernels.h"
#include "backends/vulkan/resident.h"
#include "rlx/error.h"
#include "runtime/registry.h"
#include "util/strings.h"

namespace rlx::backends::vulkan {

namespace {

class VulkanBackend : public runtime::Backend {
 public:
  std::string name() const override { return "vulkan"; }
  std::string description() const override {
    const Context& c = Context::get();
    if (c.chosen() < 0) return "Vulkan compute (no usable device)";
    const PhysicalDevice& d = c.devices()[static_cast<size_t>(c.chosen())];
    std::vector<std::string> all;
    for (const auto& p : c.devices()) all.push_back(cat(p.name, " (", p.type_name(), ")"));
    return cat(d.name, " (", d.type_name(), ", Vulkan ", VK_API_VERSION_MAJOR(d.api_version), ".", VK_API_VERSION_MINOR(d.api_version), ", subgroup ",
               d.subgroup_size, d.cooperative_matrix ? ", cooperative matrices" : "", "); devices: ", join(all, ", "),
               "; GLSL kernels printed per graph");
  }
  runtime::Availability availability() const override { return Context::get().availability(); }
  // lavapipe in CI, NVIDIA's driver on the accelerator machine
  std::string status() const override { return availability().available ? "runs here" : "runs on the accelerator machine"; }
  bool claims_kernel(ir::Op op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs& attrs) const override {
    return vulkan::claims(op, in, out, attrs, Context::get().features());
  }
  bool claims_op(ir::Op op) const override { return vulkan::claims_op(op); }
  bool implements_variant(ir::Op op, const std::string& attr) const override { return vulkan::implements_variant(op, attr); }
  bool make_resident(const Tensor& t) override {
    if (!Context::get().availability().available) return false;
    return vulkan::make_resident(t);
  }
  void release_resident(const Tensor& t, bool copy_back) override { vulkan::release_resident(t, copy_back); }
  std::unique_ptr<runtime::Executable> compile(const ir::Graph& lir) override {
    if (!Context::get().availability().available)
      throw Error(ErrorKind::unsupported, cat("vulkan is not available: ", Context::get().availability().reason));
    return make_executable(lir);
  }
};

}  // namespace

void register_backend() { runtime::register_backend(std::make_unique<VulkanBackend>()); }

}  // namespace rlx::backends::vulkan
