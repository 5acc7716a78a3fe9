// The kernels' C-like flavours (c_like.h): how the GLSL subset of the bodies is respelled as
// OpenCL C, MSL and HIP, and what is refused. The op suite on PoCL (backend_ops_gpu_*) runs every
// kernel spelled as OpenCL C; MSL runs nowhere here (metal_export checks a program's golden
// text); HIP is compiled by hipcc, not run (rocm_hipcc). These pin the rules one at a time, so a change to one shows here by name.
#include <gtest/gtest.h>

#include "backends/vulkan/c_like.h"
#include "backends/vulkan/hlsl.h"
#include "rlx/error.h"

namespace {

using rlx::backends::vulkan::ClKernel;
using rlx::backends::vulkan::hip_source;
using rlx::backends::vulkan::hlsl_source;
using rlx::backends::vulkan::metal_source;
using rlx::backends::vulkan::opencl_c;

ClKernel kernel() {
  ClKernel k;
  k.bindings = {{"x_", "float", true}, {"y_", "uint16_t", false}, {"w_", "uvec4", true}, {"e_", "uint", false}};
  k.words = {"o_x", "o_y", "o_w", "n"};
  k.local = {256, 1, 1};
  return k;
}

bool has(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

const char* kSubset = R"(const uint K = 3u;
const float inv[2] = float[](1.0, 0.5);
shared float red[256], tile[16][17];
shared uint count;
uint rlx_m0 = 7u;
float load(uint i) { return x_[p.o_x + i] * 2.5; }
void main() {
  uint t = gl_LocalInvocationID.x;
  red[t] = load(t) + float(t) + uintBitsToFloat(0x3f800000u);
  tile[t % 16u][t % 17u] = abs(red[t]);
  barrier();
  uvec4 v = w_[p.o_w + t];
  if (t == 0u) { count = v.x; atomicAdd(e_[0], 1u); }
  y_[p.o_y + t] = uint16_t(roundEven(red[t]) + float(rlx_m0) + inv[t % 2u]);
}
)";

TEST(OpenClC, RespellsTheGlslSubset) {
  const std::string c = opencl_c(kernel(), kSubset);
  EXPECT_TRUE(has(c, "__constant uint K = 3u;")) << c;
  EXPECT_TRUE(has(c, "__constant float inv[2] = {1.0f, 0.5f};")) << c;
  // shared arrays live in the kernel, reached through the bindings struct; scalars by pointer
  EXPECT_TRUE(has(c, "__local float red[256];")) << c;
  EXPECT_TRUE(has(c, "__local float (*tile)[17];")) << c;
  EXPECT_TRUE(has(c, "(*rlx_kb->count) = v.x")) << c;
  EXPECT_TRUE(has(c, "b.count = &count;")) << c;
  // a private global: a member set by the entry point
  EXPECT_TRUE(has(c, "b.rlx_m0 = 7u;")) << c;
  // functions take the struct first, calls pass it; buffers and words through it
  EXPECT_TRUE(has(c, "static float load(struct rlx_bindings* rlx_kb, uint i) { return rlx_kb->x_[rlx_kb->p.o_x + i] * 2.5f; }")) << c;
  EXPECT_TRUE(has(c, "load(rlx_kb, t)")) << c;
  // constructors as casts and vector types, built-ins by their OpenCL names
  EXPECT_TRUE(has(c, "(float)(t)")) << c;
  EXPECT_TRUE(has(c, "as_float(0x3f800000u)")) << c;
  EXPECT_TRUE(has(c, "fabs(rlx_kb->red[t])")) << c;
  EXPECT_TRUE(has(c, "rint(rlx_kb->red[t])")) << c;
  EXPECT_TRUE(has(c, "uint4 v = rlx_kb->w_[rlx_kb->p.o_w + t];")) << c;
  EXPECT_TRUE(has(c, "atomic_add(&rlx_kb->e_[0], 1u)")) << c;
  EXPECT_TRUE(has(c, "barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)")) << c;
  // the entry point: bindings in order, read-only ones const, then the words by value
  EXPECT_TRUE(has(c, "__kernel __attribute__((reqd_work_group_size(256, 1, 1))) void rlx_kernel(__global const float* a0, __global uint16_t* a1, "
                     "__global const uint4* a2, __global uint* a3, struct rlx_words words)"))
      << c;
  EXPECT_TRUE(has(c, "struct rlx_words { uint o_x; uint o_y; uint o_w; uint n; };")) << c;
}

TEST(MetalC, RespellsTheGlslSubset) {
  const std::string c = metal_source(kernel(), kSubset);
  EXPECT_TRUE(has(c, "#include <metal_stdlib>")) << c;
  EXPECT_TRUE(has(c, "constant uint K = 3u;")) << c;
  EXPECT_TRUE(has(c, "constant float inv[2] = {1.0f, 0.5f};")) << c;
  EXPECT_TRUE(has(c, "threadgroup float red[256];")) << c;
  EXPECT_TRUE(has(c, "threadgroup float (*tile)[17];")) << c;
  // C++: constructors stay, bit casts are as_type
  EXPECT_TRUE(has(c, "float(t)")) << c;
  EXPECT_TRUE(has(c, "as_type<float>(0x3f800000u)")) << c;
  EXPECT_TRUE(has(c, "float load(thread rlx_bindings* rlx_kb, uint i) { return rlx_kb->x_[rlx_kb->p.o_x + i] * 2.5f; }")) << c;
  // invocation ids through the struct, set from the entry point's attributes
  EXPECT_TRUE(has(c, "uint t = rlx_kb->gl_LocalInvocationID.x;")) << c;
  EXPECT_TRUE(has(c, "uint3 gl_LocalInvocationID_ [[thread_position_in_threadgroup]]")) << c;
  EXPECT_TRUE(has(c, "atomic_fetch_add_explicit((device atomic_uint*)&rlx_kb->e_[0], 1u, memory_order_relaxed)")) << c;
  EXPECT_TRUE(has(c, "threadgroup_barrier(mem_flags::mem_threadgroup | mem_flags::mem_device)")) << c;
  EXPECT_TRUE(has(c, "kernel void rlx_kernel(const device float* a0 [[buffer(0)]], device uint16_t* a1 [[buffer(1)]], const device uint4* a2 [[buffer(2)]], "
                     "device uint* a3 [[buffer(3)]], constant rlx_words& words [[buffer(4)]]"))
      << c;
  EXPECT_TRUE(has(c, "// threads per threadgroup: 256 x 1 x 1")) << c;
}

TEST(HipC, RespellsTheGlslSubset) {
  const std::string c = hip_source(kernel(), kSubset);
  EXPECT_TRUE(has(c, "#include <hip/hip_runtime.h>")) << c;
  EXPECT_TRUE(has(c, "__constant__ const uint K = 3u;")) << c;
  EXPECT_TRUE(has(c, "__constant__ const float inv[2] = {1.0f, 0.5f};")) << c;
  // shared arrays are declared __shared__ in the kernel; the struct holds generic pointers
  EXPECT_TRUE(has(c, "__shared__ float red[256];")) << c;
  EXPECT_TRUE(has(c, "  float (*tile)[17];")) << c;
  // C++: constructors stay; every function is a device function
  EXPECT_TRUE(has(c, "float(t)")) << c;
  EXPECT_TRUE(has(c, "__uint_as_float(0x3f800000u)")) << c;
  EXPECT_TRUE(has(c, "static __device__ float load(rlx_bindings* rlx_kb, uint i) { return rlx_kb->x_[rlx_kb->p.o_x + i] * 2.5f; }")) << c;
  EXPECT_TRUE(has(c, "fabsf(rlx_kb->red[t])")) << c;
  EXPECT_TRUE(has(c, "rintf(rlx_kb->red[t])")) << c;
  // uvec4 is RLX's own 16-byte type (HIP's uint4 cannot be indexed)
  EXPECT_TRUE(has(c, "rlx_uint4 v = rlx_kb->w_[rlx_kb->p.o_w + t];")) << c;
  EXPECT_TRUE(has(c, "atomicAdd(&rlx_kb->e_[0], 1u)")) << c;
  EXPECT_TRUE(has(c, "__syncthreads()")) << c;
  EXPECT_TRUE(has(c, "extern \"C\" __global__ void __launch_bounds__(256) rlx_kernel(const float* a0, uint16_t* a1, const rlx_uint4* a2, uint* a3, rlx_words words)"))
      << c;
  EXPECT_TRUE(has(c, "// threads per block: 256 x 1 x 1")) << c;
}

// HLSL (the directx device; its op suite runs every kernel on lavapipe): globals stay globals,
// the integer class is 32-bit, the skeleton adds the group counts, the step and error words
TEST(Hlsl, RespellsTheGlslSubset) {
  const std::string c = hlsl_source(kernel(), std::string(kSubset) + "int64_t twice(int64_t v) { return v * 2l; }\n");
  EXPECT_TRUE(has(c, "static const uint K = 3u;")) << c;
  EXPECT_TRUE(has(c, "static const float inv[2] = {1.0, 0.5};")) << c;
  EXPECT_TRUE(has(c, "groupshared float red[256], tile[16][17];")) << c;
  EXPECT_TRUE(has(c, "static uint rlx_m0 = 7u;")) << c;
  EXPECT_TRUE(has(c, "[[vk::binding(0, 0)]] StructuredBuffer<float> x_;")) << c;
  EXPECT_TRUE(has(c, "[[vk::binding(2, 0)]] StructuredBuffer<uint4> w_;")) << c;
  // e_ here is the family's own buffer, not error words: those come after it
  EXPECT_TRUE(has(c, "[[vk::binding(4, 0)]] RWStructuredBuffer<uint> rlx_errors;")) << c;
  EXPECT_TRUE(has(c, "struct rlx_words { uint o_x; uint o_y; uint o_w; uint n; uint rlx_ng_x; uint rlx_ng_y; uint rlx_ng_z; uint rlx_step; };")) << c;
  EXPECT_TRUE(has(c, "[[vk::push_constant]] ConstantBuffer<rlx_words> p;")) << c;
  EXPECT_TRUE(has(c, "uint t = rlx_gl_LocalInvocationID.x;")) << c;
  EXPECT_TRUE(has(c, "asfloat(0x3f800000u)")) << c;
  EXPECT_TRUE(has(c, "rlx_round_even(red[t])")) << c;
  EXPECT_TRUE(has(c, "InterlockedAdd(e_[0], 1u);")) << c;
  EXPECT_TRUE(has(c, "AllMemoryBarrierWithGroupSync()")) << c;
  EXPECT_TRUE(has(c, "int twice(int v) { return v * 2; }")) << c;  // the 32-bit class
  EXPECT_TRUE(has(c, "void rlx_main() {")) << c;
  EXPECT_TRUE(has(c, "[numthreads(256, 1, 1)]")) << c;
  auto refused = [](const std::string& glsl) {
    try {
      hlsl_source(kernel(), glsl);
    } catch (const rlx::Error& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_TRUE(has(refused("void main() { int64_t big = 4294967296l; }\n"), "64-bit constant 4294967296l")) << refused("void main() { int64_t big = 4294967296l; }\n");
  EXPECT_TRUE(has(refused("void main() { uint old = atomicAdd(e_[0], 1u); }\n"), "whose value is used"));
  EXPECT_TRUE(has(refused("void main() { float s = subgroupAdd(1.0); }\n"), "subgroupAdd"));
}

TEST(OpenClC, RefusesWhatCHasNoSpellingFor) {
  auto refused = [](const std::string& glsl) {
    try {
      opencl_c(kernel(), glsl);
    } catch (const rlx::Error& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_TRUE(has(refused("void f(inout float a) { a = 1.0; }\nvoid main() {}\n"), "inout")) << refused("void f(inout float a) { a = 1.0; }\nvoid main() {}\n");
  EXPECT_TRUE(has(refused("float f(uint a) { return 1.0; }\nfloat f(uint a, uint b) { return 2.0; }\nvoid main() {}\n"), "defines f twice"));
  EXPECT_TRUE(has(refused("void main() { float s = subgroupAdd(1.0); }\n"), "subgroupAdd"));
}

}  // namespace
