// The kernels' HLSL flavour (the directx device): the families' GLSL subset respelled as HLSL for
// glslang's HLSL front end, compiled to SPIR-V and run by the vulkan device's executable — so the
// HLSL is executed and checked (lavapipe in CI), not only printed. HLSL, like GLSL, reaches
// buffers, shared arrays and private globals as globals, so the respelling is of names and
// forms: buffers as (RW)StructuredBuffer at their bindings, the words as a push-constant
// ConstantBuffer (with the dispatch's group counts, which HLSL has no built-in for), shared
// arrays groupshared, built-ins and barriers by their HLSL names, atomics as Interlocked*
// statements.
//
// glslang's HLSL has no signed 64-bit integer type, so on this target the kernels' integer
// class is 32-bit `int` (Features::int32_class): every op on 32-bit and narrower integer
// tensors computes what the 64-bit class does (the same wrapping, the same saturating
// conversions); i64 tensors are word pairs (low, sign) whose values must fit 32 bits — the
// executable checks inputs and constants, and the class's arithmetic (codegen's glsl_int32)
// flags a result that leaves 32 bits, which an i64 store turns into an error (error word 2).
// Families that add with the language's own operators do not claim i64 results (kernels.cpp).
#pragma once
#include <string>

#include "backends/vulkan/c_like.h"
#include "rlx/tensor.h"

namespace rlx::backends::vulkan {

// The HLSL program of a kernel whose GLSL functions and main() are `glsl`: [numthreads] main
// with the bindings at [[vk::binding(i, 0)]] in order and the words, then the three group
// counts (rlx_ng_x, rlx_ng_y, rlx_ng_z), as push constants. Throws rlx::Error(unsupported)
// naming what has no spelling (an atomic whose value is used, a 64-bit constant, subgroups).
std::string hlsl_source(const ClKernel& k, const std::string& glsl);

// Throws rlx::Error(invalid_argument) when `x` is i64 with a value outside 32 bits, which the
// 32-bit integer class cannot hold; `device` and `what` ("input 2") name it.
void check_fits_int32_class(const Tensor& x, const char* device, const std::string& what);

// SPIR-V of an HLSL compute kernel (glslang's HLSL front end through shaderc), cached like the
// GLSL kernels'. Throws rlx::Error(invalid_argument) with the compiler's messages and `name`.
std::vector<uint32_t> compile_compute_hlsl(const std::string& source, const std::string& name);

}  // namespace rlx::backends::vulkan
