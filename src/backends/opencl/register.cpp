// The gpu device: OpenCL 1.2+ through whichever ICD the machine has — PoCL's CPU device in CI
// (and on the accelerator machine, whose NVIDIA driver ships no OpenCL ICD), a GPU's where one
// is installed. Its kernels are the vulkan device's, respelled as OpenCL C and built at run time
// (binaries cached); what they lack decomposes or fails to compile listing what is missing.
#include "backends/opencl/opencl.h"
#include "backends/vulkan/family_backend.h"
#include "rlx/error.h"
#include "runtime/registry.h"
#include "util/strings.h"

namespace rlx::backends::opencl {

namespace {

class OpenClBackend : public vulkan::FamilyBackend {
 public:
  std::string name() const override { return "gpu"; }
  std::string description() const override {
    const Context& c = Context::get();
    if (!c.info().device.empty())
      return cat(c.info().device, " (", c.info().platform, ", ", c.info().version, ", ", c.info().c_version, "); the vulkan kernels as OpenCL C");
    return "OpenCL 1.2+ through the machine's ICD; the vulkan kernels as OpenCL C";
  }
  runtime::Availability availability() const override { return Context::get().availability(); }
  std::unique_ptr<runtime::Executable> compile(const ir::Graph& lir) override {
    if (!Context::get().availability().available) throw Error(ErrorKind::unsupported, cat("gpu (OpenCL) is not available: ", Context::get().availability().reason));
    return make_executable(lir);
  }

 private:
  const vulkan::KernelTarget& target() const override {
    static const vulkan::KernelTarget t = cl_target();
    return t;
  }
};

}  // namespace

void register_backend() { runtime::register_backend(std::make_unique<OpenClBackend>()); }

}  // namespace rlx::backends::opencl
