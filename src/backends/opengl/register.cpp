// The opengl device: OpenGL 4.3+ compute through EGL without a display — Mesa's llvmpipe in CI,
// NVIDIA's EGL on the accelerator machine. Its kernels are the vulkan device's, printed in
// OpenGL's GLSL flavour (8/16-bit tensors packed in uint words); what they lack decomposes or
// fails to compile listing what is missing, as the dispatch contract requires.
#include "backends/opengl/opengl.h"
#include "backends/vulkan/kernels.h"
#include "rlx/error.h"
#include "runtime/registry.h"
#include "util/strings.h"

namespace rlx::backends::opengl {

namespace {

class OpenGlBackend : public runtime::Backend {
 public:
  std::string name() const override { return "opengl"; }
  std::string description() const override {
    const Context& c = Context::get();
    if (!c.info().renderer.empty()) return cat(c.info().renderer, " (OpenGL ", c.info().version, ", EGL surfaceless); the vulkan kernels as GL compute");
    return "OpenGL 4.3+ compute through EGL without a display; the vulkan kernels as GL compute";
  }
  runtime::Availability availability() const override { return Context::get().availability(); }
  std::string status() const override { return availability().available ? "runs here" : "unavailable here"; }
  bool claims_kernel(ir::Op op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs& attrs) const override {
    return vulkan::claims(op, in, out, attrs, target().features);
  }
  bool claims_op(ir::Op op) const override { return vulkan::claims_op(op); }
  bool implements_variant(ir::Op op, const std::string& attr) const override { return vulkan::implements_variant(op, attr); }
  std::unique_ptr<runtime::Executable> compile(const ir::Graph& lir) override {
    if (!Context::get().availability().available) throw Error(ErrorKind::unsupported, cat("opengl is not available: ", Context::get().availability().reason));
    return make_executable(lir);
  }

 private:
  // claims need the features without a current context: the same numbers gl_target() reads
  static const vulkan::KernelTarget& target() {
    static const vulkan::KernelTarget t = gl_target();
    return t;
  }
};

}  // namespace

void register_backend() { runtime::register_backend(std::make_unique<OpenGlBackend>()); }

}  // namespace rlx::backends::opengl
