// The vulkan device, first stage: instance and device discovery, a compute queue, host-visible
// buffers and compute dispatch (context.h), so `rlx devices` reports every Vulkan device
// honestly. It claims no op yet: compiling for it fails listing every op a graph needs, as the
// dispatch contract requires, until the codegen layer's GLSL kernels land.
#include "backends/vulkan/context.h"
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
               "; kernels not yet generated: claims no op");
  }
  runtime::Availability availability() const override { return Context::get().availability(); }
  bool claims_kernel(ir::Op, const std::vector<ir::Type>&, const std::vector<ir::Type>&, const ir::Attrs&) const override { return false; }
  bool claims_op(ir::Op) const override { return false; }
  std::unique_ptr<runtime::Executable> compile(const ir::Graph&) override {
    throw Error(ErrorKind::unsupported, "the vulkan device has no kernels yet (device discovery and dispatch only)");
  }
};

}  // namespace

void register_backend() { runtime::register_backend(std::make_unique<VulkanBackend>()); }

}  // namespace rlx::backends::vulkan
