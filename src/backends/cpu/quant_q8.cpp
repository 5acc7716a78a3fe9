#include "backends/cpu/quant_q8.h"

#include "backends/cpu/block_decoders.h"
#include "backends/cpu/q4_k_scales.h"

#include <algorithm>
#include <cmath>
#include <cstring>
// GCC 12's AVX-512 intrinsics build their "undefined" vectors by self-initialization, which
// -Wuninitialized flags in every caller (GCC PR 105593).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

namespace rlx::backends::cpu::q8 {

namespace {

#define RLX_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni")))

inline float f16_at(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return _cvtsh_ss(h);
}

// One block of 32, scalar: the definition.
void quantize_block(const float* x, int8_t* q, float* d, float* s, float* deq) {
  float amax = 0;
  for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(x[i]));
  float inv = amax == 0.0f ? 0.0f : 127.0f / amax;
  float scale = amax / 127.0f;
  int sum = 0;
  for (int i = 0; i < 32; ++i) {
    int v = static_cast<int>(std::nearbyint(x[i] * inv));
    v = std::min(127, std::max(-127, v));
    q[i] = static_cast<int8_t>(v);
    sum += v;
    if (deq) deq[i] = static_cast<float>(v) * scale;
  }
  *d = scale;
  *s = scale * static_cast<float>(sum);
}

// The same with AVX-512: the products, the rounding (cvtps2dq rounds half to even, like
// nearbyint) and the scales are the scalar code's, so the results are identical.
RLX_VNNI void quantize_block_avx512(const float* x, int8_t* q, float* d, float* s, float* deq) {
  __m512 a = _mm512_loadu_ps(x), b = _mm512_loadu_ps(x + 16);
  float amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(a), _mm512_abs_ps(b)));
  float inv = amax == 0.0f ? 0.0f : 127.0f / amax;
  float scale = amax / 127.0f;
  __m512 vi = _mm512_set1_ps(inv);
  __m512i qa = _mm512_cvtps_epi32(_mm512_mul_ps(a, vi)), qb = _mm512_cvtps_epi32(_mm512_mul_ps(b, vi));
  const __m512i lo = _mm512_set1_epi32(-127), hi = _mm512_set1_epi32(127);
  qa = _mm512_min_epi32(_mm512_max_epi32(qa, lo), hi);
  qb = _mm512_min_epi32(_mm512_max_epi32(qb, lo), hi);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(q), _mm512_cvtepi32_epi8(qa));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(q + 16), _mm512_cvtepi32_epi8(qb));
  int sum = _mm512_reduce_add_epi32(_mm512_add_epi32(qa, qb));
  *d = scale;
  *s = scale * static_cast<float>(sum);
  if (deq) {
    __m512 vs = _mm512_set1_ps(scale);
    _mm512_storeu_ps(deq, _mm512_mul_ps(_mm512_cvtepi32_ps(qa), vs));
    _mm512_storeu_ps(deq + 16, _mm512_mul_ps(_mm512_cvtepi32_ps(qb), vs));
  }
}

RLX_VNNI inline float hsum8(__m256 v) {
  __m128 h = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  h = _mm_add_ps(h, _mm_movehl_ps(h, h));
  return _mm_cvtss_f32(_mm_add_ss(h, _mm_movehdup_ps(h)));
}

// Rows stream from memory: 4 KiB ahead into L2, like the f32 kernels (quant_matmul.cpp).
constexpr int kPrefetchAhead = 4096;

// Q8_0 (d f16, 32 × s8) against x offset to unsigned bytes (u = q + 128): vpdpbusd(u, w) =
// Σ q·w + 128·Σ w, so each lane starts from −128·Σ w of its four weights (one vpdpbusd of the
// weights per block pair, shared by every row) and ends holding Σ q·w exactly. A 512-bit
// register takes two blocks: lanes 0-7 the first, 8-15 the second, scaled by d_w·d_x per half.
// One pair of blocks (68 bytes of w at block b) into acc[m] of every row.
template <int M>
RLX_VNNI inline void q8_0_pair(const uint8_t* w, int64_t b, int64_t p, const Rows& x, __m512* acc) {
  const __m512i k128 = _mm512_set1_epi8(static_cast<char>(0x80));
  const __m512i zero = _mm512_setzero_si512();
  _mm_prefetch(reinterpret_cast<const char*>(w) + kPrefetchAhead, _MM_HINT_T1);
  _mm_prefetch(reinterpret_cast<const char*>(w) + kPrefetchAhead + 64, _MM_HINT_T1);
  __m512i wz = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 2))),
                                  _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 36)), 1);
  __m512 dw = _mm512_insertf32x8(_mm512_set1_ps(f16_at(w)), _mm256_set1_ps(f16_at(w + 34)), 1);
  __m512i base = _mm512_sub_epi32(zero, _mm512_dpbusd_epi32(zero, k128, wz));
  for (int m = 0; m < M; ++m) {
    __m512i xv = _mm512_loadu_si512(x.u + m * x.ldu + 32 * b);
    __m512 f = _mm512_cvtepi32_ps(_mm512_dpbusd_epi32(base, xv, wz));
    __m512 sc = _mm512_mul_ps(dw, _mm512_loadu_ps(x.dpair + m * x.ldpair + 16 * p));
    acc[m] = _mm512_fmadd_ps(f, sc, acc[m]);
  }
}

// Q8_0 (d f16, 32 × s8) against x offset to unsigned bytes (u = q + 128): vpdpbusd(u, w) =
// Σ q·w + 128·Σ w, so each lane starts from −128·Σ w of its four weights (one vpdpbusd of the
// weights per block pair, shared by every row) and ends holding Σ q·w exactly. A 512-bit
// register takes two blocks: lanes 0-7 the first, 8-15 the second, scaled by d_w·d_x per half.
// Even pairs go to acc0 and odd ones to acc1, two pairs per step so both stay in registers.
template <int M>
RLX_VNNI void dot_q8_0(const uint8_t* w, int64_t K, const Rows& x, float* out) {
  const int64_t nblk = K / 32;
  __m512 acc0[M], acc1[M];
  for (int m = 0; m < M; ++m) acc0[m] = acc1[m] = _mm512_setzero_ps();
  const __m512i k128 = _mm512_set1_epi8(static_cast<char>(0x80));
  const __m512i zero = _mm512_setzero_si512();
  int64_t b = 0, p = 0;
  for (; b + 4 <= nblk; b += 4, p += 2, w += 136) {
    q8_0_pair<M>(w, b, p, x, acc0);
    q8_0_pair<M>(w + 68, b + 2, p + 1, x, acc1);
  }
  if (b + 2 <= nblk) q8_0_pair<M>(w, b, p, x, acc0), b += 2, w += 68;
  if (b < nblk) {  // an odd last block: the low half only
    __m512i wz = _mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 2)));
    __m512 dw = _mm512_maskz_mov_ps(0x00ff, _mm512_set1_ps(f16_at(w)));
    __m512i base = _mm512_maskz_mov_epi32(0x00ff, _mm512_sub_epi32(zero, _mm512_dpbusd_epi32(zero, k128, wz)));
    for (int m = 0; m < M; ++m) {
      __m512i xv = _mm512_maskz_loadu_epi8(0xffffffffull, x.u + m * x.ldu + 32 * b);
      __m512 f = _mm512_cvtepi32_ps(_mm512_maskz_dpbusd_epi32(0x00ff, base, xv, wz));
      __m512 sc = _mm512_mul_ps(dw, _mm512_loadu_ps(x.dpair + m * x.ldpair + 16 * (b / 2)));
      acc0[m] = _mm512_fmadd_ps(f, sc, acc0[m]);
    }
  }
  for (int m = 0; m < M; ++m) out[m] = _mm512_reduce_add_ps(_mm512_add_ps(acc0[m], acc1[m]));
}

// Q4_K (d, dmin f16; 12 bytes of 6-bit scales and mins; 128 bytes of nibbles): 8 groups of 32,
// value = d·sc_g·q − dmin·mn_g. Per group Σ q·x̂ = d_x·Σ q·q_x (unsigned nibbles × signed
// bytes: vpdpbusd as is), and the offsets take Σ x̂ = s of the x block.
// Q5_K (176 bytes) is Q4_K's header and nibbles (at 48) plus a fifth bit per value (qh[32] at 16:
// group g takes bit g of qh[l]); q = nibble | bit << 4 is still unsigned, so the same kernel.
template <int M, bool kFifthBit>
RLX_VNNI void dot_q4_k(const uint8_t* w, int64_t K, const Rows& x, float* out) {
  constexpr int64_t kBlockBytes = kFifthBit ? 176 : 144, kNibbles = kFifthBit ? 48 : 16;
  int64_t nblk = K / 256;
  __m512 acc[M];
  __m256 macc[M];
  for (int m = 0; m < M; ++m) acc[m] = _mm512_setzero_ps(), macc[m] = _mm256_setzero_ps();
  const __m256i m4 = _mm256_set1_epi8(0x0f);
  // The 16 lanes of one vpdpbusd hold two groups: lanes 0-7 group 2j, 8-15 group 2j + 1.
  const __m512i pick[4] = {_mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0),
                           _mm512_set_epi32(3, 3, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2),
                           _mm512_set_epi32(5, 5, 5, 5, 5, 5, 5, 5, 4, 4, 4, 4, 4, 4, 4, 4),
                           _mm512_set_epi32(7, 7, 7, 7, 7, 7, 7, 7, 6, 6, 6, 6, 6, 6, 6, 6)};
  const __m256i one = _mm256_set1_epi8(1);
  for (int64_t b = 0; b < nblk; ++b, w += kBlockBytes) {
    for (int p = 0; p < kBlockBytes; p += 64) _mm_prefetch(reinterpret_cast<const char*>(w) + kPrefetchAhead + p, _MM_HINT_T1);
    __m256 sc, mn;
    q4_k_scales(w, &sc, &mn);
    __m512i q[4];
    for (int j = 0; j < 4; ++j) {
      __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + kNibbles + 32 * j));
      __m256i lo = _mm256_and_si256(raw, m4), hi = _mm256_and_si256(_mm256_srli_epi16(raw, 4), m4);
      if constexpr (kFifthBit) {
        const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 16));
        lo = _mm256_or_si256(lo, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * j), one), 4));
        hi = _mm256_or_si256(hi, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * j + 1), one), 4));
      }
      q[j] = _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
    }
    for (int m = 0; m < M; ++m) {
      const float* dx = x.d + m * x.ldd + 8 * b;
      macc[m] = _mm256_fmadd_ps(mn, _mm256_loadu_ps(x.s + m * x.ldd + 8 * b), macc[m]);
      __m512 gs = _mm512_castps256_ps512(_mm256_mul_ps(sc, _mm256_loadu_ps(dx)));  // d·sc_g·d_x of each group
      const int8_t* xq = x.q + m * x.ldq + 256 * b;
      for (int j = 0; j < 4; ++j) {
        __m512i p = _mm512_dpbusd_epi32(_mm512_setzero_si512(), q[j], _mm512_loadu_si512(xq + 64 * j));
        acc[m] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), _mm512_permutexvar_ps(pick[j], gs), acc[m]);
      }
    }
  }
  for (int m = 0; m < M; ++m) out[m] = _mm512_reduce_add_ps(acc[m]) + hsum8(macc[m]);
}

// Q6_K (ql[128], qh[64], 16 signed 8-bit scales, d f16 at 208): value = d·sc_g·(q − 32) with
// q = 4 low bits | 2 high bits << 4 (unsigned, 0…63) and a scale per group of 16. Per 64 values,
// one vpdpbusd gives Σ q·q_x over each 4 lanes = one group of 16; lanes scale by d·sc_g·d_x of
// their group and x block, and the −32 comes back once per block through the x rows' s16.
// Q6_K's two high bits at `shift` of each qh byte, moved to bits 4-5.
RLX_VNNI inline __m256i q6_top(__m256i hb, int shift) {
  return _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hb, shift), _mm256_set1_epi8(0x03)), 4);
}

template <int M>
RLX_VNNI void dot_q6_k(const uint8_t* w, int64_t K, const Rows& x, float* out) {
  const int64_t nblk = K / 256;
  __m512 acc[M], corr[M];  // corr: Σ over groups of d·sc·d_x·Σq_x, the −32 offset's share
  for (int m = 0; m < M; ++m) acc[m] = corr[m] = _mm512_setzero_ps();
  const __m256i m4 = _mm256_set1_epi8(0x0f);
  // lane i of the vpdpbusd over values 64j … 64j + 63 belongs to group 4j + i / 4
  const __m512i pick[4] = {_mm512_set_epi32(3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0),
                           _mm512_set_epi32(7, 7, 7, 7, 6, 6, 6, 6, 5, 5, 5, 5, 4, 4, 4, 4),
                           _mm512_set_epi32(11, 11, 11, 11, 10, 10, 10, 10, 9, 9, 9, 9, 8, 8, 8, 8),
                           _mm512_set_epi32(15, 15, 15, 15, 14, 14, 14, 14, 13, 13, 13, 13, 12, 12, 12, 12)};
  // group g of 16 lies in x block g / 2
  const __m512i block_of_group = _mm512_set_epi32(7, 7, 6, 6, 5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 0, 0);
  for (int64_t b = 0; b < nblk; ++b, w += 210) {
    for (int p = 0; p < 210; p += 64) _mm_prefetch(reinterpret_cast<const char*>(w) + kPrefetchAhead + p, _MM_HINT_T1);
    const __m512 sc = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + 192)))),
                                    _mm512_set1_ps(f16_at(w + 208)));
    __m512i q[4];
    for (int h = 0; h < 2; ++h) {
      const __m256i l0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 64 * h));
      const __m256i l1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 64 * h + 32));
      const __m256i hb = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 128 + 32 * h));
      const __m256i a0 = _mm256_or_si256(_mm256_and_si256(l0, m4), q6_top(hb, 0));
      const __m256i a1 = _mm256_or_si256(_mm256_and_si256(l1, m4), q6_top(hb, 2));
      const __m256i a2 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m4), q6_top(hb, 4));
      const __m256i a3 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), m4), q6_top(hb, 6));
      q[2 * h] = _mm512_inserti64x4(_mm512_castsi256_si512(a0), a1, 1);
      q[2 * h + 1] = _mm512_inserti64x4(_mm512_castsi256_si512(a2), a3, 1);
    }
    for (int m = 0; m < M; ++m) {
      const __m512 dx = _mm512_permutexvar_ps(block_of_group, _mm512_castps256_ps512(_mm256_loadu_ps(x.d + m * x.ldd + 8 * b)));
      const __m512 gs = _mm512_mul_ps(sc, dx);  // d·sc_g·d_x of each group of 16
      corr[m] = _mm512_fmadd_ps(gs, _mm512_loadu_ps(x.s16 + m * x.lds16 + 16 * b), corr[m]);
      const int8_t* xq = x.q + m * x.ldq + 256 * b;
      for (int j = 0; j < 4; ++j) {
        const __m512i p = _mm512_dpbusd_epi32(_mm512_setzero_si512(), q[j], _mm512_loadu_si512(xq + 64 * j));
        acc[m] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), _mm512_permutexvar_ps(pick[j], gs), acc[m]);
      }
    }
  }
  for (int m = 0; m < M; ++m) out[m] = _mm512_reduce_add_ps(acc[m]) - 32.0f * _mm512_reduce_add_ps(corr[m]);
}

// IQ4_NL / IQ4_XS: each nibble indexes a grid of 16 signed values g. The kernel takes g + 128
// (unsigned bytes, one vpshufb) so vpdpbusd multiplies them into the signed x as is:
// Σ (g + 128)·q_x = Σ g·q_x + 128·Σ q_x, and the second term is the x block's s = d_x·Σ q_x —
// so a block of 32 contributes d_w·(d_x·dot − 128·s).
RLX_VNNI inline __m256i iq4_grid_u8x2() { return _mm256_broadcastsi128_si256(iq4_grid_u8()); }

// 32 bytes of nibbles — 16 for each of two blocks of 32 values — as 64 unsigned grid bytes in
// value order: block 0's low nibbles, its high ones, then block 1's.
RLX_VNNI inline __m512i iq4_pair(__m256i raw, __m256i grid) {
  const __m256i m4 = _mm256_set1_epi8(0x0f);
  const __m256i lo = _mm256_shuffle_epi8(grid, _mm256_and_si256(raw, m4));
  const __m256i hi = _mm256_shuffle_epi8(grid, _mm256_and_si256(_mm256_srli_epi16(raw, 4), m4));
  const __m512i v = _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);  // [lo0 lo1 hi0 hi1]
  return _mm512_shuffle_i64x2(v, v, _MM_SHUFFLE(3, 1, 2, 0));                // [lo0 hi0 lo1 hi1]
}

// The 32-value block types (IQ4_NL and ggml's legacy Q4_0, Q4_1, Q5_0, Q5_1) as unsigned bytes
// u and a per-block offset: value = d·u + c, so a block contributes d·d_x·Σ u·q_x + c·s (s =
// d_x·Σ q_x, the x block's sum). Two blocks per vpdpbusd (lanes 0-7 and 8-15).
struct LegacyIQ4_NL {
  static constexpr int kBytes = 18, kNibbles = 2;
  RLX_VNNI static __m512i values(const uint8_t*, __m256i raw) { return iq4_pair(raw, iq4_grid_u8x2()); }
  RLX_VNNI static float scale(const uint8_t* w) { return f16_at(w); }
  RLX_VNNI static float offset(const uint8_t* w) { return -128.0f * f16_at(w); }  // u = grid + 128
};
template <int kBlockBytes, int kQs, int kQh, bool kMin>
struct LegacyQ {  // Q4_0 (18, 2, −, no min), Q4_1 (20, 4, −, min), Q5_0 (22, 6, 2, no), Q5_1 (24, 8, 4, min)
  static constexpr int kBytes = kBlockBytes, kNibbles = kQs;
  RLX_VNNI static __m512i values(const uint8_t* w, __m256i raw) {
    const __m256i m4 = _mm256_set1_epi8(0x0f);
    const __m512i v = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_and_si256(raw, m4)), _mm256_and_si256(_mm256_srli_epi16(raw, 4), m4), 1);
    __m512i u = _mm512_shuffle_i64x2(v, v, _MM_SHUFFLE(3, 1, 2, 0));  // [lo0 hi0 lo1 hi1]: value order
    if constexpr (kQh >= 0) {  // fifth bits: bit j of each block's u32 is value j's
      uint32_t h0, h1;
      std::memcpy(&h0, w + kQh, 4);
      std::memcpy(&h1, w + kBlockBytes + kQh, 4);
      u = _mm512_or_si512(u, _mm512_maskz_set1_epi8(static_cast<__mmask64>(h0) | (static_cast<__mmask64>(h1) << 32), 16));
    }
    return u;
  }
  RLX_VNNI static float scale(const uint8_t* w) { return f16_at(w); }
  RLX_VNNI static float offset(const uint8_t* w) {
    if constexpr (kMin) return f16_at(w + 2);
    return (kQh >= 0 ? -16.0f : -8.0f) * f16_at(w);
  }
};
using LegacyQ4_0 = LegacyQ<18, 2, -1, false>;
using LegacyQ4_1 = LegacyQ<20, 4, -1, true>;
using LegacyQ5_0 = LegacyQ<22, 6, 2, false>;
using LegacyQ5_1 = LegacyQ<24, 8, 4, true>;

template <class B, int M>
RLX_VNNI void dot_legacy(const uint8_t* w, int64_t K, const Rows& x, float* out) {
  const int64_t nblk = K / 32;
  __m512 acc[M];
  float corr[M];
  for (int m = 0; m < M; ++m) acc[m] = _mm512_setzero_ps(), corr[m] = 0;
  int64_t b = 0;
  for (; b + 2 <= nblk; b += 2, w += 2 * B::kBytes) {
    _mm_prefetch(reinterpret_cast<const char*>(w) + kPrefetchAhead, _MM_HINT_T1);
    const __m256i raw = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + B::kNibbles))),
                                                 _mm_loadu_si128(reinterpret_cast<const __m128i*>(w + B::kBytes + B::kNibbles)), 1);
    const __m512i v = B::values(w, raw);
    const float dw0 = B::scale(w), dw1 = B::scale(w + B::kBytes), c0 = B::offset(w), c1 = B::offset(w + B::kBytes);
    for (int m = 0; m < M; ++m) {
      const float* dx = x.d + m * x.ldd + b;
      const float* sx = x.s + m * x.ldd + b;
      const __m512i p = _mm512_dpbusd_epi32(_mm512_setzero_si512(), v, _mm512_loadu_si512(x.q + m * x.ldq + 32 * b));
      const __m512 sc = _mm512_insertf32x8(_mm512_set1_ps(dw0 * dx[0]), _mm256_set1_ps(dw1 * dx[1]), 1);
      acc[m] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), sc, acc[m]);
      corr[m] += c0 * sx[0] + c1 * sx[1];
    }
  }
  if (b < nblk) {  // an odd last block: the block twice, the second copy's weights zeroed
    alignas(64) uint8_t two[2 * 32];
    std::memcpy(two, w, B::kBytes);
    std::memcpy(two + B::kBytes, w, B::kBytes);
    const __m256i raw = _mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + B::kNibbles)));
    const __m512i v = _mm512_maskz_mov_epi64(0x0f, B::values(two, _mm256_inserti128_si256(raw, _mm256_castsi256_si128(raw), 1)));
    const float dw0 = B::scale(w), c0 = B::offset(w);
    for (int m = 0; m < M; ++m) {
      const __m512i xv = _mm512_zextsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.q + m * x.ldq + 32 * b)));
      const __m512i p = _mm512_dpbusd_epi32(_mm512_setzero_si512(), v, xv);
      acc[m] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), _mm512_set1_ps(dw0 * x.d[m * x.ldd + b]), acc[m]);
      corr[m] += c0 * x.s[m * x.ldd + b];
    }
  }
  for (int m = 0; m < M; ++m) out[m] = _mm512_reduce_add_ps(acc[m]) + corr[m];
}

// block_iq4_xs { half d; u16 scales_h; u8 scales_l[4]; u8 qs[128]; }: 8 groups of 32, group g's
// scale d·(ls_g − 32), its nibbles at 8 + 16g; groups 2j and 2j + 1 per vpdpbusd.
template <int M>
RLX_VNNI void dot_iq4_xs(const uint8_t* w, int64_t K, const Rows& x, float* out) {
  const int64_t nblk = K / 256;
  const __m256i grid = iq4_grid_u8x2();
  const __m512i pick[4] = {_mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0),
                           _mm512_set_epi32(3, 3, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2),
                           _mm512_set_epi32(5, 5, 5, 5, 5, 5, 5, 5, 4, 4, 4, 4, 4, 4, 4, 4),
                           _mm512_set_epi32(7, 7, 7, 7, 7, 7, 7, 7, 6, 6, 6, 6, 6, 6, 6, 6)};
  __m512 acc[M];
  __m256 corr[M];
  for (int m = 0; m < M; ++m) acc[m] = _mm512_setzero_ps(), corr[m] = _mm256_setzero_ps();
  for (int64_t b = 0; b < nblk; ++b, w += 136) {
    for (int p = 0; p < 136; p += 64) _mm_prefetch(reinterpret_cast<const char*>(w) + kPrefetchAhead + p, _MM_HINT_T1);
    const __m256 dlv = DecIQ4_XS::scales(w);  // d·(ls − 32) of the 8 groups
    __m512i v[4];
    for (int j = 0; j < 4; ++j) v[j] = iq4_pair(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 8 + 32 * j)), grid);
    for (int m = 0; m < M; ++m) {
      const __m512 gs = _mm512_castps256_ps512(_mm256_mul_ps(dlv, _mm256_loadu_ps(x.d + m * x.ldd + 8 * b)));  // d_w·d_x per group
      corr[m] = _mm256_fmadd_ps(dlv, _mm256_loadu_ps(x.s + m * x.ldd + 8 * b), corr[m]);
      const int8_t* xq = x.q + m * x.ldq + 256 * b;
      for (int j = 0; j < 4; ++j) {
        const __m512i p = _mm512_dpbusd_epi32(_mm512_setzero_si512(), v[j], _mm512_loadu_si512(xq + 64 * j));
        acc[m] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), _mm512_permutexvar_ps(pick[j], gs), acc[m]);
      }
    }
  }
  for (int m = 0; m < M; ++m) out[m] = _mm512_reduce_add_ps(acc[m]) - 128.0f * hsum8(corr[m]);
}

// Q2_K and Q3_K order their values in groups of 16 as Q6_K does (4 groups per vpdpbusd of 64
// values), and store 2-bit fields: group c's values are bits 2·((c mod 8) / 2) of qs bytes
// 32·(c / 8) + 16·(c mod 2) …. The 64 values of vpdpbusd j (groups 4j … 4j + 3) are thus the
// fields at shifts 4(j mod 2) and 4(j mod 2) + 2 of the 32 bytes at 32·(j / 2).
RLX_VNNI inline __m512i crumbs64(const uint8_t* qs, int j) {
  const __m512i raw = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32 * (j >> 1))));
  const int shift = 4 * (j & 1);  // the low half's; the high half's is 2 more
  const __m512i count = _mm512_inserti64x4(_mm512_set1_epi16(static_cast<int16_t>(shift)), _mm256_set1_epi16(static_cast<int16_t>(shift + 2)), 1);
  return _mm512_and_si512(_mm512_srlv_epi16(raw, count), _mm512_set1_epi8(0x03));
}

// Lane i of vpdpbusd j belongs to group 4j + i / 4; group g of 16 to x block g / 2.
RLX_VNNI inline __m512i group16_pick(int j) {
  return _mm512_add_epi32(_mm512_set1_epi32(4 * j), _mm512_set_epi32(3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0));
}
RLX_VNNI inline __m512 x_scale_per_group16(const float* dx) {
  return _mm512_permutexvar_ps(_mm512_set_epi32(7, 7, 6, 6, 5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 0, 0), _mm512_castps256_ps512(_mm256_loadu_ps(dx)));
}

// block_q2_K { u8 scales[16]; u8 qs[64]; half d; half dmin; }: value = d·sc_g·q − dmin·mn_g (q in
// 0…3, scales[g] = sc | mn << 4). Σ over a group = d·sc·d_x·Σ q·q_x − dmin·mn·d_x·Σ q_x, the last
// sum the x rows' s16.
template <int M>
RLX_VNNI void dot_q2_k(const uint8_t* w, int64_t K, const Rows& x, float* out) {
  const int64_t nblk = K / 256;
  __m512 acc[M];
  for (int m = 0; m < M; ++m) acc[m] = _mm512_setzero_ps();
  for (int64_t b = 0; b < nblk; ++b, w += 84) {
    for (int p = 0; p < 84; p += 64) _mm_prefetch(reinterpret_cast<const char*>(w) + kPrefetchAhead + p, _MM_HINT_T1);
    const __m512i sm = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w)));
    const __m512 sc = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_and_si512(sm, _mm512_set1_epi32(0x0f))), _mm512_set1_ps(f16_at(w + 80)));
    const __m512 mn = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_srli_epi32(sm, 4)), _mm512_set1_ps(-f16_at(w + 82)));
    __m512i q[4];
    for (int j = 0; j < 4; ++j) q[j] = crumbs64(w + 16, j);
    for (int m = 0; m < M; ++m) {
      const __m512 dx = x_scale_per_group16(x.d + m * x.ldd + 8 * b);
      const __m512 gs = _mm512_mul_ps(sc, dx);
      acc[m] = _mm512_fmadd_ps(_mm512_mul_ps(mn, dx), _mm512_loadu_ps(x.s16 + m * x.lds16 + 16 * b), acc[m]);  // the mins
      const int8_t* xq = x.q + m * x.ldq + 256 * b;
      for (int j = 0; j < 4; ++j) {
        const __m512i xv = _mm512_loadu_si512(xq + 64 * j);
        acc[m] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_dpbusd_epi32(_mm512_setzero_si512(), q[j], xv)), _mm512_permutexvar_ps(group16_pick(j), gs), acc[m]);
      }
    }
  }
  for (int m = 0; m < M; ++m) out[m] = _mm512_reduce_add_ps(acc[m]);
}

// block_q3_K { u8 hmask[32]; u8 qs[64]; u8 scales[12]; half d; }: value = d·sc_g·(q3 − 4) with q3 =
// the 2-bit field | the hmask bit (bit 4·(g / 8) + (g mod 8) / 2 of hmask[16·(g mod 2) + l]) << 2 and
// 16 signed 6-bit scales; Σ (q3 − 4)·q_x = Σ q3·q_x − 4·s16 of the group.
template <int M>
RLX_VNNI void dot_q3_k(const uint8_t* w, int64_t K, const Rows& x, float* out) {
  const int64_t nblk = K / 256;
  __m512 acc[M], corr[M];  // corr: Σ over groups of d·sc·d_x·Σq_x, the −4 offset's share
  for (int m = 0; m < M; ++m) acc[m] = corr[m] = _mm512_setzero_ps();
  for (int64_t b = 0; b < nblk; ++b, w += 110) {
    for (int p = 0; p < 110; p += 64) _mm_prefetch(reinterpret_cast<const char*>(w) + kPrefetchAhead + p, _MM_HINT_T1);
    const __m512 sc = DecQ3_K::scales(w);  // d·scale of the 16 groups
    const __m512i hm = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w)));
    __m512i q[4];
    for (int j = 0; j < 4; ++j) {
      // groups 4j, 4j + 1 take hmask bit `bit` (the low half), 4j + 2, 4j + 3 bit + 1: rotating each
      // dword right by bit − 2 puts it at bit 2 of its own byte (0 ≤ bit ≤ 7), the place of +4
      const int bit = 4 * (j >> 1) + 2 * (j & 1);
      const __m512i rot = _mm512_inserti64x4(_mm512_set1_epi32((bit - 2) & 31), _mm256_set1_epi32((bit - 1) & 31), 1);
      const __m512i h = _mm512_and_si512(_mm512_rorv_epi32(hm, rot), _mm512_set1_epi8(0x04));
      q[j] = _mm512_or_si512(crumbs64(w + 32, j), h);
    }
    for (int m = 0; m < M; ++m) {
      const __m512 gs = _mm512_mul_ps(sc, x_scale_per_group16(x.d + m * x.ldd + 8 * b));
      corr[m] = _mm512_fmadd_ps(gs, _mm512_loadu_ps(x.s16 + m * x.lds16 + 16 * b), corr[m]);
      const int8_t* xq = x.q + m * x.ldq + 256 * b;
      for (int j = 0; j < 4; ++j) {
        const __m512i p = _mm512_dpbusd_epi32(_mm512_setzero_si512(), q[j], _mm512_loadu_si512(xq + 64 * j));
        acc[m] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), _mm512_permutexvar_ps(group16_pick(j), gs), acc[m]);
      }
    }
  }
  for (int m = 0; m < M; ++m) out[m] = _mm512_reduce_add_ps(acc[m]) - 4.0f * _mm512_reduce_add_ps(corr[m]);
}

using RowsDot = void (*)(const uint8_t*, int64_t, const Rows&, float*);

template <template <int> class K>
void dot_m(const uint8_t* w, int64_t Kn, const Rows& x, int M, float* out) {
  switch (M) {
    case 1: return K<1>::run(w, Kn, x, out);
    case 2: return K<2>::run(w, Kn, x, out);
    case 3: return K<3>::run(w, Kn, x, out);
    case 4: return K<4>::run(w, Kn, x, out);
    case 5: return K<5>::run(w, Kn, x, out);
    case 6: return K<6>::run(w, Kn, x, out);
    case 7: return K<7>::run(w, Kn, x, out);
    default: return K<8>::run(w, Kn, x, out);
  }
}
template <int M>
struct Q8_0 {
  static void run(const uint8_t* w, int64_t K, const Rows& x, float* out) { dot_q8_0<M>(w, K, x, out); }
};
template <int M>
struct Q4_K {
  static void run(const uint8_t* w, int64_t K, const Rows& x, float* out) { dot_q4_k<M, false>(w, K, x, out); }
};
template <int M>
struct Q5_K {
  static void run(const uint8_t* w, int64_t K, const Rows& x, float* out) { dot_q4_k<M, true>(w, K, x, out); }
};
template <int M>
struct Q2_K {
  static void run(const uint8_t* w, int64_t K, const Rows& x, float* out) { dot_q2_k<M>(w, K, x, out); }
};
template <int M>
struct Q3_K {
  static void run(const uint8_t* w, int64_t K, const Rows& x, float* out) { dot_q3_k<M>(w, K, x, out); }
};
template <class B>
struct Legacy {
  template <int M>
  struct Of {
    static void run(const uint8_t* w, int64_t K, const Rows& x, float* out) { dot_legacy<B, M>(w, K, x, out); }
  };
};
template <int M>
struct IQ4_XS {
  static void run(const uint8_t* w, int64_t K, const Rows& x, float* out) { dot_iq4_xs<M>(w, K, x, out); }
};
template <int M>
struct Q6_K {
  static void run(const uint8_t* w, int64_t K, const Rows& x, float* out) { dot_q6_k<M>(w, K, x, out); }
};

}  // namespace

bool has_vnni() {
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vnni");
  }();
  return yes;
}

void quantize_rows(const float* x, int64_t M, int64_t K, int8_t* q, float* d, float* s, float* deq) {
  bool fast = has_vnni();
  for (int64_t m = 0; m < M; ++m)
    for (int64_t b = 0; b < K / 32; ++b) {
      int64_t i = m * K + 32 * b, j = m * (K / 32) + b;
      float* dq = deq ? deq + i : nullptr;
      if (fast) quantize_block_avx512(x + i, q + i, d + j, s + j, dq);
      else quantize_block(x + i, q + i, d + j, s + j, dq);
    }
}

void prepare_rows(quant::BlockType t, int64_t M, int64_t K, RowExtras& scratch, Rows& r) {
  const int64_t nblk = K / 32;
  if (t == quant::BlockType::q8_0) {
    const int64_t np = (nblk + 1) / 2;
    scratch.u.resize(static_cast<size_t>(M * K));
    scratch.dpair.resize(static_cast<size_t>(M * np * 16));
    for (int64_t i = 0; i < M * K; ++i) scratch.u[static_cast<size_t>(i)] = static_cast<uint8_t>(r.q[i] + 128);
    for (int64_t m = 0; m < M; ++m)
      for (int64_t p = 0; p < np; ++p) {
        float* v = scratch.dpair.data() + (m * np + p) * 16;
        float d0 = r.d[m * r.ldd + 2 * p], d1 = 2 * p + 1 < nblk ? r.d[m * r.ldd + 2 * p + 1] : 0.0f;
        for (int i = 0; i < 8; ++i) v[i] = d0, v[8 + i] = d1;
      }
    r.u = scratch.u.data(), r.dpair = scratch.dpair.data(), r.ldu = K, r.ldpair = np * 16;
  }
  if (t == quant::BlockType::q2_k || t == quant::BlockType::q3_k || t == quant::BlockType::q6_k) {
    scratch.s16.resize(static_cast<size_t>(M * K / 16));
    for (int64_t m = 0; m < M; ++m)
      for (int64_t g = 0; g < K / 16; ++g) {
        int sum = 0;
        for (int i = 0; i < 16; ++i) sum += r.q[m * r.ldq + 16 * g + i];
        scratch.s16[static_cast<size_t>(m * (K / 16) + g)] = static_cast<float>(sum);
      }
    r.s16 = scratch.s16.data(), r.lds16 = K / 16;
  }
}

DotFn dot_fn(quant::BlockType t) {
  if (!has_vnni()) return nullptr;
  switch (t) {
    case quant::BlockType::q8_0: return dot_m<Q8_0>;
    case quant::BlockType::q4_k: return dot_m<Q4_K>;
    case quant::BlockType::q5_k: return dot_m<Q5_K>;
    case quant::BlockType::q6_k: return dot_m<Q6_K>;
    case quant::BlockType::q2_k: return dot_m<Q2_K>;
    case quant::BlockType::q3_k: return dot_m<Q3_K>;
    case quant::BlockType::iq4_nl: return dot_m<Legacy<LegacyIQ4_NL>::Of>;
    case quant::BlockType::q4_0: return dot_m<Legacy<LegacyQ4_0>::Of>;
    case quant::BlockType::q4_1: return dot_m<Legacy<LegacyQ4_1>::Of>;
    case quant::BlockType::q5_0: return dot_m<Legacy<LegacyQ5_0>::Of>;
    case quant::BlockType::q5_1: return dot_m<Legacy<LegacyQ5_1>::Of>;
    case quant::BlockType::iq4_xs: return dot_m<IQ4_XS>;
    default: return nullptr;
  }
}

}  // namespace rlx::backends::cpu::q8
