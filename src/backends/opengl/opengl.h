// The opengl device's parts: the context (gl.h), the kernels' target on it, and the executable.
#pragma once
#include <memory>

#include "backends/opengl/gl.h"
#include "backends/vulkan/target.h"
#include "ir/graph.h"
#include "runtime/backend.h"

namespace rlx::backends::opengl {

// The vulkan device's kernels as this context takes them: OpenGL's GLSL flavour; int64 through
// GL_ARB_gpu_shader_int64; 8/16-bit tensors packed in uint words; no subgroups (not core GL).
vulkan::KernelTarget gl_target();
std::unique_ptr<runtime::Executable> make_executable(const ir::Graph& lir);

}  // namespace rlx::backends::opengl
