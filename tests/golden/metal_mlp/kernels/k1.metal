// region (first for mir.elementwise_region "fused" (node 1)), emitted by rlx
#include <metal_stdlib>
using namespace metal;
typedef long int64_t;
typedef ulong uint64_t;
typedef char int8_t;
typedef uchar uint8_t;
typedef short int16_t;
typedef ushort uint16_t;
float rlx_mod(float x, float y) { return x - y * floor(x / y); }
float2 unpackHalf2x16(uint u) { return float2(as_type<half2>(u)); }
// GLSL's atomicCompSwap: the value before, whether or not it was swapped
uint rlx_cas(device atomic_uint* a, uint compare, uint value) {
  uint expected = compare;
  while (!atomic_compare_exchange_weak_explicit(a, &expected, value, memory_order_relaxed, memory_order_relaxed))
    if (expected != compare) break;
  return expected;
}
struct rlx_words { uint o_x0; uint o_x1; uint o_y0; uint n; };
struct rlx_bindings {
  const device float* x0_;
  const device float* x1_;
  device float* y0_;
  uint3 gl_LocalInvocationID;
  uint3 gl_WorkGroupID;
  uint3 gl_NumWorkGroups;
  uint3 gl_WorkGroupSize;
  uint3 gl_GlobalInvocationID;
  uint gl_LocalInvocationIndex;
  rlx_words p;
};
uint rlx_f2h(thread rlx_bindings* rlx_kb, float f) {
  uint x = as_type<uint>(f), sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) return sign | (ax > 0x7f800000u ? 0x7e00u : 0x7c00u);
  if (ax >= 0x477ff000u) return sign | 0x7c00u;
  if (ax < 0x38800000u) return sign | uint(rint(as_type<float>(ax) * 16777216.0f));
  uint r = ax - 0x38000000u;
  return sign | ((r + 0x0fffu + ((r >> 13) & 1u)) >> 13);
}
float rlx_h2f(thread rlx_bindings* rlx_kb, uint h) { return unpackHalf2x16(h).x; }
uint rlx_f2bf(thread rlx_bindings* rlx_kb, float f) {
  uint u = as_type<uint>(f);
  if (isnan(f)) return (u >> 16) | 0x40u;
  return (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
}
float rlx_bf2f(thread rlx_bindings* rlx_kb, uint h) { return as_type<float>(h << 16); }
// 1/√x for the norms, refined by a Newton step: drivers may compute 1.0 / sqrt(x) with an
// approximate reciprocal square root (NVIDIA's does)
float rlx_rsqrt(thread rlx_bindings* rlx_kb, float x) {
  float r = 1.0f / sqrt(x);
  return r * (1.5f - 0.5f * x * r * r);
}
int64_t rlx_f2i(thread rlx_bindings* rlx_kb, float v, int64_t lo, int64_t hi) {
  if (isnan(v)) return 0l;
  float t = trunc(v);
  if (t <= float(lo)) return lo;
  if (t >= float(hi)) return hi;
  return int64_t(t);
}
uint rlx_flat(thread rlx_bindings* rlx_kb) { return (rlx_kb->gl_WorkGroupID.y * rlx_kb->gl_NumWorkGroups.x + rlx_kb->gl_WorkGroupID.x) * rlx_kb->gl_WorkGroupSize.x + rlx_kb->gl_LocalInvocationID.x; }
// sin and cos of arguments reduced to [−π, π] first (Cody–Waite, 2π in three parts): GLSL
// lets drivers approximate both only near 0 (NVIDIA's lose digits on RoPE's large angles)
// (`precise`: a driver that reassociates would fold the three parts back into one inexact 2π)
float rlx_reduce_2pi(thread rlx_bindings* rlx_kb, float x) {
  float k = rint(x * 0.15915494309189535f);
   float r = x - k * 6.28125f;
  r = r - k * 0.0019353071693331003f;
  r = r - k * 1.0253131677018246e-11f;
  return r;
}
// NaN as a constant: NVIDIA's GL compiler folds x − x and (a − a) / (a − a) to 0
float rlx_sin(thread rlx_bindings* rlx_kb, float x) { return isinf(x) ? as_type<float>(0x7fc00000u) : sin(rlx_reduce_2pi(rlx_kb, x)); }
float rlx_cos(thread rlx_bindings* rlx_kb, float x) { return isinf(x) ? as_type<float>(0x7fc00000u) : cos(rlx_reduce_2pi(rlx_kb, x)); }
// erf: Abramowitz–Stegun 7.1.26 refined (|error| < 1.2e-7), odd in x
float rlx_erf(thread rlx_bindings* rlx_kb, float x) {
  float t = 1.0f / (1.0f + 0.5f * fabs(x));
  float y = 1.0f - t * exp(-x * x - 1.26551223f + t * (1.00002368f + t * (0.37409196f + t * (0.09678418f + t * (-0.18628806f +
            t * (0.27886807f + t * (-1.13520398f + t * (1.48851587f + t * (-0.82215223f + t * 0.17087277f)))))))));
  return x >= 0.0f ? y : -y;
}
// Kahan's expm1 and log1p: exact near 0 without a series
float rlx_expm1(thread rlx_bindings* rlx_kb, float x) {
  float u = exp(x);
  if (u == 1.0f) return x;
  float um1 = u - 1.0f;
  if (um1 == -1.0f) return -1.0f;
  return isinf(u) ? u : um1 * x / log(u);
}
float rlx_log1p(thread rlx_bindings* rlx_kb, float x) {
  float u = 1.0f + x;
  return u == 1.0f ? x : (isinf(u) ? u : log(u) * x / (u - 1.0f));
}
// C's powf for what GLSL leaves undefined: negative bases with integer exponents, zero bases
float rlx_pow(thread rlx_bindings* rlx_kb, float a, float b) {
  if (b == 0.0f) return 1.0f;
  if (isnan(a) || isnan(b)) return a + b;
  if (a == 0.0f) return b < 0.0f ? as_type<float>(0x7f800000u) : 0.0f;  // +inf
  if (a < 0.0f) {
    if (b != floor(b)) return as_type<float>(0x7fc00000u);  // NaN
    float r = pow(-a, b);
    return rlx_mod(b, 2.0f) == 1.0f ? -r : r;
  }
  return pow(a, b);
}
// C's fmodf: the sign of a, |result| < |b|
float rlx_fmod(thread rlx_bindings* rlx_kb, float a, float b) {
  if (b == 0.0f || isinf(a) || isnan(a) || isnan(b)) return as_type<float>(0x7fc00000u);
  if (isinf(b)) return a;
  float r = fabs(a) - fabs(b) * trunc(fabs(a) / fabs(b));
  if (r >= fabs(b)) r -= fabs(b);
  if (r < 0.0f) r += fabs(b);
  return a < 0.0f ? -r : r;
}
int64_t rlx_rem(thread rlx_bindings* rlx_kb, int64_t a, int64_t b) { return a - (a / b) * b; }
int64_t rlx_ipow(thread rlx_bindings* rlx_kb, int64_t a, int64_t e) {
  if (e < 0) return a == 1l ? 1l : a == -1l ? ((e & 1l) != 0l ? -1l : 1l) : 0l;
  uint64_t r = 1ul, b = uint64_t(a);
  for (uint64_t k = uint64_t(e); k != 0ul; k >>= 1) {
    if ((k & 1ul) != 0ul) r *= b;
    b *= b;
  }
  return int64_t(r);
}
float x0_ld(thread rlx_bindings* rlx_kb, uint i) { return rlx_kb->x0_[rlx_kb->p.o_x0 + i]; }
float x0_f(thread rlx_bindings* rlx_kb, uint i) { return x0_ld(rlx_kb, i); }
int64_t x0_i(thread rlx_bindings* rlx_kb, uint i) { return rlx_f2i(rlx_kb, x0_f(rlx_kb, i), (-9223372036854775807l - 1l), 9223372036854775807l); }
float x1_ld(thread rlx_bindings* rlx_kb, uint i) { return rlx_kb->x1_[rlx_kb->p.o_x1 + i]; }
float x1_f(thread rlx_bindings* rlx_kb, uint i) { return x1_ld(rlx_kb, i); }
int64_t x1_i(thread rlx_bindings* rlx_kb, uint i) { return rlx_f2i(rlx_kb, x1_f(rlx_kb, i), (-9223372036854775807l - 1l), 9223372036854775807l); }
void y0_st(thread rlx_bindings* rlx_kb, uint i, float v) { rlx_kb->y0_[rlx_kb->p.o_y0 + i] = v; }
void y0_wf(thread rlx_bindings* rlx_kb, uint i, float v) { y0_st(rlx_kb, i, v); }
void y0_wi(thread rlx_bindings* rlx_kb, uint i, int64_t v) { y0_wf(rlx_kb, i, float(v)); }
void rlx_main(thread rlx_bindings* rlx_kb) {
  uint i = rlx_flat(rlx_kb);
  if (i >= rlx_kb->p.n) return;
  uint r_ = i;
  uint c1 = r_ % 128u; r_ /= 128u;
  uint c0 = r_;
  uint x0_at = 0u + c0 * 128u + c1 * 1u;
  uint x1_at = 0u + c1 * 1u;
  float r0 = x0_f(rlx_kb, x0_at);
  float r1 = x1_f(rlx_kb, x1_at);
  float r2 = (r0 + r1);
  float r3 = (isnan(r2) ? r2 : ((r2 > 0.0f) ? r2 : 0.0f));
  y0_wf(rlx_kb, i, r3);
}

// threads per threadgroup: 256 x 1 x 1
kernel void rlx_kernel(const device float* a0 [[buffer(0)]], const device float* a1 [[buffer(1)]], device float* a2 [[buffer(2)]], constant rlx_words& words [[buffer(3)]], uint3 gl_LocalInvocationID_ [[thread_position_in_threadgroup]], uint3 gl_WorkGroupID_ [[threadgroup_position_in_grid]], uint3 gl_NumWorkGroups_ [[threadgroups_per_grid]], uint3 gl_WorkGroupSize_ [[threads_per_threadgroup]], uint3 gl_GlobalInvocationID_ [[thread_position_in_grid]], uint gl_LocalInvocationIndex_ [[thread_index_in_threadgroup]]) {
  rlx_bindings b;
  b.x0_ = a0;
  b.x1_ = a1;
  b.y0_ = a2;
  b.gl_LocalInvocationID = gl_LocalInvocationID_;
  b.gl_WorkGroupID = gl_WorkGroupID_;
  b.gl_NumWorkGroups = gl_NumWorkGroups_;
  b.gl_WorkGroupSize = gl_WorkGroupSize_;
  b.gl_GlobalInvocationID = gl_GlobalInvocationID_;
  b.gl_LocalInvocationIndex = gl_LocalInvocationIndex_;
  b.p = words;
  rlx_main(&b);
}
