// Q4_K's super-block header — d and dmin (f16), then 12 bytes packing eight 6-bit scales and
// eight 6-bit mins — as two vectors of 8 floats: d·scale_g and −dmin·min_g of its 8 groups of
// 32. Shared by the f32 kernels (quant_matmul.cpp) and the 8-bit ones (quant_q8.cpp).
#pragma once
#include <immintrin.h>

#include <cstdint>
#include <cstring>

namespace rlx::backends::cpu {

inline void q4_k_scales(const uint8_t* b, __m256* sc, __m256* mn) {
  uint32_t u[4];
  std::memcpy(u, b + 4, 12);
  const uint32_t k1 = 0x3f3f3f3f, k2 = 0x0f0f0f0f, k3 = 0x03030303;
  u[3] = ((u[2] >> 4) & k2) | (((u[1] >> 6) & k3) << 4);
  uint32_t lo = u[1] & k1;
  u[1] = (u[2] & k2) | (((u[0] >> 6) & k3) << 4);
  u[2] = lo;
  u[0] &= k1;  // bytes 0-7: scales, 8-15: mins
  uint16_t d, dmin;
  std::memcpy(&d, b, 2);
  std::memcpy(&dmin, b + 2, 2);
  __m256 s = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(u))));
  __m256 n = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(u + 2))));
  *sc = _mm256_mul_ps(s, _mm256_set1_ps(_cvtsh_ss(d)));
  *mn = _mm256_mul_ps(n, _mm256_set1_ps(-_cvtsh_ss(dmin)));
}

}  // namespace rlx::backends::cpu
