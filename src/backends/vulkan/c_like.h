// The kernels' C-like flavours: OpenCL C (the gpu device), Metal's MSL and HIP (emitted, not run here). The families write their bodies in a small GLSL subset (scalar
// and vector types, constructors, the skeleton's accessors, shared arrays, barrier, atomics);
// OpenCL C, MSL and HIP spell the same things differently and have no globals a function could reach
// a buffer through. So the skeleton prints the language's prologue and entry point, and the
// body's tokens are respelled: constructors become casts and vector literals (OpenCL; MSL and HIP,
// being C++, keep them), built-ins their names there, float literals single precision, and every function takes one more parameter — a
// struct (`rlx_kb`) of the kernel's bindings, shared arrays, private globals and words, through
// which the body's names of them are reached. Anything else of GLSL's (inout parameters,
// overloads, subgroups, cooperative matrices) is refused with the construct named.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace rlx::backends::vulkan {

enum class CLanguage : uint8_t { opencl, metal, hip };

struct ClBinding {
  std::string name;  // the body's array name ("x_", "e_")
  std::string type;  // its element type as the body spells it ("float", "uint16_t", "uvec4")
  bool readonly = false;
};

struct ClKernel {
  std::vector<ClBinding> bindings;  // in binding order: the kernel's arguments
  std::vector<std::string> words;   // the pushed words, in order (p.<word>)
  std::array<uint32_t, 3> local{1, 1, 1};
  bool error_words = false;  // the last binding is the index-error words (e_)
};

// The OpenCL C program of a kernel whose GLSL functions and main() are `glsl` (no #version,
// layout or #extension lines): one __kernel named rlx_kernel taking the bindings in order, then
// the words as one struct by value. Throws rlx::Error(unsupported) naming what has no spelling.
std::string opencl_c(const ClKernel& k, const std::string& glsl);
// The same as MSL 2: `kernel void rlx_kernel` taking the bindings as [[buffer(i)]] in order and
// the words as a constant struct at [[buffer(bindings)]]; the host dispatches threadgroups of
// k.local threads (a comment above the entry point says how many).
std::string metal_source(const ClKernel& k, const std::string& glsl);
// The same as HIP C++ for ROCm: `extern "C" __global__ void rlx_kernel` taking the bindings as
// pointers in order, then the words as one struct by value; blocks of k.local threads (a comment
// above the entry point says how many, and __launch_bounds__ holds the compiler to it).
std::string hip_source(const ClKernel& k, const std::string& glsl);

}  // namespace rlx::backends::vulkan
