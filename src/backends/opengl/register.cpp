// The opengl device: OpenGL 4.3+ compute through EGL without a display — Mesa's llvmpipe in CI,
// NVIDIA's EGL on the accelerator machine. Its kernels are the vulkan device's, printed in
// OpenGL's GLSL flavour (8/16-bit tensors packed in uint words); what they lack decomposes or
// fails to compile listing what is missing, as the dispatch contract requires.
#include "backends/opengl/opengl.h"
#include "backends/vulkan/family_backend.h"
#include "rlx/error.h"
#include "runtime/registry.h"
#include "util/strings.h"

namespace rlx::backends::opengl {

namespace {

class OpenGlBackend : public vulkan::FamilyBackend {
 public:
  std::string name() const override { return "opengl"; }
  std::string description() const override {
    const Context& c = Context::get();
    if (!c.info().renderer.empty()) return cat(c.info().renderer, " (OpenGL ", c.info().version, ", EGL surfaceless); the vulkan kernels as GL compute");
    return "OpenGL 4.3+ compute through EGL without a display; the vulkan kernels as GL compute";
  }
  runtime::Availability availability() const override { return Context::get().availability(); }
  std::unique_ptr<runtime::Executable> compile(const ir::Graph& lir) override {
    if (!Context::get().availability().available) throw Error(ErrorKind::unsupported, cat("opengl is not available: ", Context::get().availability().reason));
    return make_executable(lir);
  }

 private:
  // claims need the features without a current context: the same numbers gl_target() reads
  const vulkan::KernelTarget& target() const override {
    static const vulkan::KernelTarget t = gl_target();
    return t;
  }
};

}  // namespace

void register_backend() { runtime::register_backend(std::make_unique<OpenGlBackend>()); }

}  // namespace rlx::backends::opengl
