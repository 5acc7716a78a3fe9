// Whom the kernels are printed for: a device's features and its API's flavour of GLSL (or of
// OpenCL C, which the bodies' GLSL subset is respelled into). The
// kernel families (kernels.h) are the same for every GLSL device; Vulkan's flavour has push
// constants and the explicit-arithmetic-type extensions, OpenGL's (4.5, as Mesa's llvmpipe and
// NVIDIA's EGL offer it) a uniform block for the same words and ARB int64 — and no 8/16-bit
// storage, so its features leave those dtypes out.
#pragma once
#include <cstdint>

#include "backends/vulkan/context.h"

namespace rlx::backends::vulkan {

// opencl, metal and hip: OpenCL C, MSL and HIP respelled from the same bodies (c_like.h); hlsl:
// HLSL for glslang's HLSL front end (hlsl.h), run by the vulkan executable
enum class KernelApi : uint8_t { vulkan, opengl, opencl, metal, hip, hlsl };

struct KernelTarget {
  Features features;
  KernelApi api = KernelApi::vulkan;
};

// The target of kernels printed on this thread: the innermost ScopedTarget's, else the vulkan
// device's (its context's features).
const KernelTarget& current_target();

// Prints kernels for `t` on this thread while it lives.
class ScopedTarget {
 public:
  explicit ScopedTarget(const KernelTarget& t);
  ~ScopedTarget();
  ScopedTarget(const ScopedTarget&) = delete;
  ScopedTarget& operator=(const ScopedTarget&) = delete;

 private:
  KernelTarget target_;
  const KernelTarget* previous_;
};

}  // namespace rlx::backends::vulkan
