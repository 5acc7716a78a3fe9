// The host dialect's f32 math library: branch-free functions that compilers vectorize (libm
// calls do not): exp to ~2 ulp, erf to ~2e-7 absolute, tanh from exp. Loops calling these
// become AVX2 / AVX-512 code; NaN propagates, ±inf saturate correctly. What each op computes
// with them is scalar.h's (host_math.h binds the two).
#pragma once
#include <cstdint>

#include "util/half.h"

namespace rlx::vm {

// exp(x) = 2^n · e^r with n = round(x / ln 2), |r| ≤ ln2/2 and a degree-6 polynomial for e^r.
inline float exp(float x) {
  // NaN computes on 0 (its result is replaced below): converting a NaN n to int is undefined
  float xc = x > 88.7f ? 88.7f : (x < -87.3f ? -87.3f : (x != x ? 0.0f : x));
  // round to nearest by the 1.5·2^23 trick (|xc·log2 e| < 2^22): vectorizes, unlike roundevenf
  float n = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = xc - n * 0.693359375f;  // ln2 split in two for exact range reduction
  r = r - n * -2.12194440e-4f;
  float p = 1.0f / 720;
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  float scale = bits_float(static_cast<uint32_t>(static_cast<int32_t>(n) + 127) << 23);
  float y = p * scale;
  y = x > 88.72283f ? __builtin_inff() : y;
  y = x < -103.97208f ? 0.0f : y;
  return x != x ? x : y;
}

// f32 → bf16, round to nearest even, NaN kept quiet; branch-free so conversion loops vectorize.
inline uint16_t to_bf16(float f) {
  uint32_t u = float_bits(f);
  uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  uint32_t nan = (u >> 16) | 0x40u;
  return static_cast<uint16_t>((u & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
}
inline float from_bf16(uint16_t h) { return bf16_to_f32(h); }

// tanh(x) = sign(x)·(1 − 2/(e^{2|x|} + 1)); a short series near 0 avoids cancellation.
inline float tanh(float x) {
  float a = x < 0 ? -x : x;
  float big = 1.0f - 2.0f / (exp(2.0f * a) + 1.0f);
  float x2 = a * a;
  float small = a * (1.0f + x2 * (-1.0f / 3 + x2 * (2.0f / 15 + x2 * (-17.0f / 315))));
  float t = a < 0.125f ? small : big;
  t = x < 0 ? -t : t;
  return x != x ? x : t;
}

// erf by Abramowitz & Stegun 7.1.26 refined: |error| < 1.5e-7.
inline float erf(float x) {
  float a = x < 0 ? -x : x;
  float t = 1.0f / (1.0f + 0.3275911f * a);
  float poly = t * (0.254829592f + t * (-0.284496736f + t * (1.421413741f + t * (-1.453152027f + t * 1.061405429f))));
  float y = 1.0f - poly * exp(-a * a);
  // close to 0 the series is more accurate (erf(x) ≈ 2x/√π·(1 − x²/3 + x⁴/10))
  float x2 = a * a;
  float series = 1.1283791670955126f * a * (1.0f + x2 * (-1.0f / 3 + x2 * (1.0f / 10 - x2 / 42)));
  y = a < 0.1f ? series : y;
  y = x < 0 ? -y : y;
  return x != x ? x : y;
}


}  // namespace rlx::vm
