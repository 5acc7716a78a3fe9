// AVX-512 block decoders: a ggml block type's bytes → its values, 16 at a time. Each decoder
// has kElems values in kBytes bytes; prep() reads a block's header (scales, mins) once, and
// chunk(c) returns values 16c … 16c + 15 — the same values util/gguf_blocks.h's scalar decoder
// writes (up to the rounding of one fused multiply-add). quant_matmul.cpp multiplies rows of
// these into activations at memory bandwidth, and decodes tiles of them for a GEMM.
#pragma once
// GCC 12's AVX-512 intrinsics build their "undefined" vectors by self-initialization, which
// -Wuninitialized flags in every caller (GCC PR 105593).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "backends/cpu/q4_k_scales.h"
#include "util/gguf_blocks.h"

namespace rlx::backends::cpu {

#define RLX_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))

inline float f16_at(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return _cvtsh_ss(h);
}

// ---- AVX-512 decoders: a block type's bytes → its values, 16 at a time (chunk c of a block).

struct DecQ8_0 {
  static constexpr int kElems = 32, kBytes = 34;
  struct State {
    __m512 d;
  };
  RLX_AVX512 static State prep(const uint8_t* b) { return {_mm512_set1_ps(f16_at(b))}; }
  RLX_AVX512 static __m512 chunk(const uint8_t* b, const State& s, int c) {
    __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 2 + 16 * c));
    return _mm512_mul_ps(s.d, _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q)));
  }
};

// Element j is the low nibble of qs[j], j + 16 the high one; values are nibble - 8.
struct DecQ4_0 {
  static constexpr int kElems = 32, kBytes = 18;
  struct State {
    __m512 d, off;
  };
  RLX_AVX512 static State prep(const uint8_t* b) {
    float d = f16_at(b);
    return {_mm512_set1_ps(d), _mm512_set1_ps(-8.0f * d)};
  }
  RLX_AVX512 static __m512 chunk(const uint8_t* b, const State& s, int c) {
    __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 2));
    if (c) raw = _mm_srli_epi16(raw, 4);
    __m128i q = _mm_and_si128(raw, _mm_set1_epi8(0x0f));
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(q)), s.d, s.off);
  }
};

// 8 groups of 32: group 2j is the low nibbles of qs[32j .. 32j+31], group 2j+1 the high ones;
// value = d·scale_g·q − dmin·min_g with 6-bit scales and mins packed in 12 bytes.
struct DecQ4_K {
  static constexpr int kElems = 256, kBytes = 144;
  struct State {
    alignas(64) float sc[8], mn[8];
  };
  RLX_AVX512 static State prep(const uint8_t* b) {
    __m256 sc, mn;
    q4_k_scales(b, &sc, &mn);
    State s;
    _mm256_store_ps(s.sc, sc);
    _mm256_store_ps(s.mn, mn);
    return s;
  }
  RLX_AVX512 static __m512 chunk(const uint8_t* b, const State& s, int c) {
    int j = c >> 2, sub = c & 3, g = 2 * j + (sub >> 1);
    __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 16 + 32 * j + 16 * (sub & 1)));
    if (sub >> 1) raw = _mm_srli_epi16(raw, 4);
    __m128i q = _mm_and_si128(raw, _mm_set1_epi8(0x0f));
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(q)), _mm512_set1_ps(s.sc[g]), _mm512_set1_ps(s.mn[g]));
  }
};

// Two halves of 128; in half h, chunk c' (0-7) takes low (c' < 4) or high nibbles of
// ql[64h + 16(c'&1) + 32((c'>>1)&1)], top bits (qh[32h + 16(c'&1)] >> 2(c'>>1)) & 3, scale
// scales[8h + c']; value = d·scale·(q − 32).
struct DecQ6_K {
  static constexpr int kElems = 256, kBytes = 210;
  struct State {
    float d;
  };
  RLX_AVX512 static State prep(const uint8_t* b) { return {f16_at(b + 208)}; }
  RLX_AVX512 static __m512 chunk(const uint8_t* b, const State& s, int c) {
    int h = c >> 3, cc = c & 7, lh = cc & 1, t = cc >> 1;
    const uint8_t* ql = b + 64 * h + 16 * lh + 32 * (t & 1);
    const uint8_t* qh = b + 128 + 32 * h + 16 * lh;
    __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(ql));
    if (t >> 1) lo = _mm_srli_epi16(lo, 4);
    lo = _mm_and_si128(lo, _mm_set1_epi8(0x0f));
    __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qh));
    hi = _mm_and_si128(_mm_srl_epi16(hi, _mm_cvtsi32_si128(2 * t)), _mm_set1_epi8(0x03));
    __m128i q = _mm_or_si128(lo, _mm_slli_epi16(hi, 4));
    float scale = s.d * static_cast<float>(static_cast<int8_t>(b[192 + 8 * h + cc]));
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(q)), _mm512_set1_ps(scale), _mm512_set1_ps(-32.0f * scale));
  }
};

// f16 and bf16 rows, taken 16 values (32 bytes) at a time.
struct DecF16 {
  static constexpr int kElems = 16, kBytes = 32;
  struct State {};
  RLX_AVX512 static State prep(const uint8_t*) { return {}; }
  RLX_AVX512 static __m512 chunk(const uint8_t* b, const State&, int) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b)));
  }
};

struct DecBF16 {
  static constexpr int kElems = 16, kBytes = 32;
  struct State {};
  RLX_AVX512 static State prep(const uint8_t*) { return {}; }
  RLX_AVX512 static __m512 chunk(const uint8_t* b, const State&, int) {
    __m512i v = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b)));
    return _mm512_castsi512_ps(_mm512_slli_epi32(v, 16));
  }
};

// ---- the rest of ggml's legacy and K types (layouts: util/gguf_blocks.h)

// 16 nibbles of qs (low ones for c = 0, high ones for c = 1) as 16 i32 lanes.
RLX_AVX512 inline __m512i nibbles16(const uint8_t* qs, int c) {
  __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  if (c) raw = _mm_srli_epi16(raw, 4);
  return _mm512_cvtepu8_epi32(_mm_and_si128(raw, _mm_set1_epi8(0x0f)));
}

// Bit `bit` (0-7) of each of 16 bytes as 16 i32 lanes of 0 or 1.
RLX_AVX512 inline __m512i bit16(const uint8_t* bytes, int bit) {
  __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes));
  raw = _mm_and_si128(_mm_srl_epi16(raw, _mm_cvtsi32_si128(bit)), _mm_set1_epi8(1));
  return _mm512_cvtepu8_epi32(raw);
}

// block_q4_1 { half d; half m; u8 qs[16]; }: value = d·nibble + m.
struct DecQ4_1 {
  static constexpr int kElems = 32, kBytes = 20;
  struct State {
    __m512 d, m;
  };
  RLX_AVX512 static State prep(const uint8_t* b) { return {_mm512_set1_ps(f16_at(b)), _mm512_set1_ps(f16_at(b + 2))}; }
  RLX_AVX512 static __m512 chunk(const uint8_t* b, const State& s, int c) {
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(nibbles16(b + 4, c)), s.d, s.m);
  }
};

// The fifth bits of block_q5_0/q5_1: bit j of the 32-bit qh belongs to element j.
RLX_AVX512 inline __m512i with_fifth_bit(__m512i q, const uint8_t* qh, int c) {
  uint32_t h;
  std::memcpy(&h, qh, 4);
  return _mm512_mask_add_epi32(q, static_cast<__mmask16>(h >> (16 * c)), q, _mm512_set1_epi32(16));
}

// block_q5_0 { half d; u8 qh[4]; u8 qs[16]; }: value = d·(q − 16).
struct DecQ5_0 {
  static constexpr int kElems = 32, kBytes = 22;
  struct State {
    __m512 d, off;
  };
  RLX_AVX512 static State prep(const uint8_t* b) {
    float d = f16_at(b);
    return {_mm512_set1_ps(d), _mm512_set1_ps(-16.0f * d)};
  }
  RLX_AVX512 static __m512 chunk(const uint8_t* b, const State& s, int c) {
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(with_fifth_bit(nibbles16(b + 6, c), b + 2, c)), s.d, s.off);
  }
};

// block_q5_1 { half d; half m; u8 qh[4]; u8 qs[16]; }: value = d·q + m.
struct DecQ5_1 {
  static constexpr int kElems = 32, kBytes = 24;
  struct State {
    __m512 d, m;
  };
  RLX_AVX512 static State prep(const uint8_t* b) { return {_mm512_set1_ps(f16_at(b)), _mm512_set1_ps(f16_at(b + 2))}; }
  RLX_AVX512 static __m512 chunk(const uint8_t* b, const State& s, int c) {
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(with_fifth_bit(nibbles16(b + 8, c), b + 4, c)), s.d, s.m);
  }
};

// Q5_K: Q4_K's header (so its scales and mins), the low nibbles in qs[128] at 48 and the fifth
// bits in qh[32] at 16 — group g (chunks 2g, 2g + 1) takes bit g of qh[l].
struct DecQ5_K {
  static constexpr int kElems = 256, kBytes = 176;
  using State = DecQ4_K::State;
  RLX_AVX512 static State prep(const uint8_t* b) { return DecQ4_K::prep(b); }
  RLX_AVX512 static __m512 chunk(const uint8_t* b, const State& s, int c) {
    const int g = c >> 1, l0 = 16 * (c & 1);
    __m512i q = _mm512_or_si512(nibbles16(b + 48 + 32 * (g >> 1) + l0, g & 1), _mm512_slli_epi32(bit16(b + 16 + l0, g), 4));
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(q), _mm512_set1_ps(s.sc[g]), _mm512_set1_ps(s.mn[g]));
  }
};

// Q2_K and Q3_K order their 256 values alike: chunk c (group c of 16) is the 2-bit field at
// shift 2·((c mod 8) / 2) of qs bytes 32·(c / 8) + 16·(c mod 2) … + 15.
RLX_AVX512 inline __m512i crumbs16(const uint8_t* qs, int c) {
  __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs + 32 * (c >> 3) + 16 * (c & 1)));
  raw = _mm_and_si128(_mm_srl_epi16(raw, _mm_cvtsi32_si128(2 * ((c & 7) >> 1))), _mm_set1_epi8(3));
  return _mm512_cvtepu8_epi32(raw);
}

// block_q2_K { u8 scales[16]; u8 qs[64]; half d; half dmin; }: value = d·sc·q − dmin·mn with
// scales[c] = sc | mn << 4.
struct DecQ2_K {
  static constexpr int kElems = 256, kBytes = 84;
  struct State {
    float d, dmin;
  };
  RLX_AVX512 static State prep(const uint8_t* b) { return {f16_at(b + 80), f16_at(b + 82)}; }
  RLX_AVX512 static __m512 chunk(const uint8_t* b, const State& s, int c) {
    const uint8_t sc = b[c];
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(crumbs16(b + 16, c)), _mm512_set1_ps(s.d * static_cast<float>(sc & 0x0f)),
                           _mm512_set1_ps(-s.dmin * static_cast<float>(sc >> 4)));
  }
};

// block_q3_K { u8 hmask[32]; u8 qs[64]; u8 scales[12]; half d; }: value = d·scale_c·(q3 − 4)
// with q3 = the 2-bit field | the hmask bit (bit 4·(c / 8) + (c mod 8) / 2 of hmask[16·(c mod 2)
// + l]) << 2 and scale_c the signed 6-bit scale of group c.
struct DecQ3_K {
  static constexpr int kElems = 256, kBytes = 110;
  struct State {
    alignas(64) float sc[16];
  };
  RLX_AVX512 static State prep(const uint8_t* b) {
    State st;
    _mm512_store_ps(st.sc, scales(b));
    return st;
  }
  // d·scale of the 16 groups: quant::q3_k_scale for all 16 at once. Scale i's low 4 bits are
  // byte i mod 8's low (i < 8) or high nibble; its high 2 bits are bits 2·(i / 4) of byte 8 + i mod
  // 4 — a dword of those 4 bytes broadcast, lane j shifted right by 2j, keeps them in every byte.
  RLX_AVX512 static __m512 scales(const uint8_t* b) {
    const __m128i raw = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(b + 96));
    const __m128i m4 = _mm_set1_epi8(0x0f);
    const __m128i low = _mm_unpacklo_epi64(_mm_and_si128(raw, m4), _mm_and_si128(_mm_srli_epi16(raw, 4), m4));
    uint32_t hb;
    std::memcpy(&hb, b + 104, 4);
    const __m128i high = _mm_and_si128(_mm_srlv_epi32(_mm_set1_epi32(static_cast<int>(hb)), _mm_setr_epi32(0, 2, 4, 6)), _mm_set1_epi8(0x03));
    const __m128i sc = _mm_sub_epi8(_mm_or_si128(low, _mm_slli_epi16(high, 4)), _mm_set1_epi8(32));
    return _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(sc)), _mm512_set1_ps(f16_at(b + 108)));
  }
  RLX_AVX512 static __m512 chunk(const uint8_t* b, const State& s, int c) {
    const __m512i h = bit16(b + 16 * (c & 1), 4 * (c >> 3) + ((c & 7) >> 1));
    const __m512i q = _mm512_or_si512(crumbs16(b + 32, c), _mm512_slli_epi32(h, 2));
    const float sc = s.sc[c];
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(q), _mm512_set1_ps(sc), _mm512_set1_ps(-4.0f * sc));
  }
};

// quant::iq4_grid as the 16 bytes of a byte-shuffle table.
RLX_AVX512 inline __m128i iq4_grid_i8() { return _mm_setr_epi8(-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113); }
// The grid + 128 (its top bit flipped): unsigned bytes, for vpdpbusd against signed x.
RLX_AVX512 inline __m128i iq4_grid_u8() { return _mm_xor_si128(iq4_grid_i8(), _mm_set1_epi8(static_cast<char>(0x80))); }

// IQ4_NL / IQ4_XS: nibbles looked up in the 16-entry grid with one byte shuffle.
RLX_AVX512 inline __m512 iq4_values16(const uint8_t* qs, int c) {
  const __m128i grid = iq4_grid_i8();
  __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  if (c) raw = _mm_srli_epi16(raw, 4);
  return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_shuffle_epi8(grid, _mm_and_si128(raw, _mm_set1_epi8(0x0f)))));
}

// block_iq4_nl { half d; u8 qs[16]; }
struct DecIQ4_NL {
  static constexpr int kElems = 32, kBytes = 18;
  struct State {
    __m512 d;
  };
  RLX_AVX512 static State prep(const uint8_t* b) { return {_mm512_set1_ps(f16_at(b))}; }
  RLX_AVX512 static __m512 chunk(const uint8_t* b, const State& s, int c) { return _mm512_mul_ps(s.d, iq4_values16(b + 2, c)); }
};

// block_iq4_xs { half d; u16 scales_h; u8 scales_l[4]; u8 qs[128]; }: group g = chunks 2g, 2g + 1.
struct DecIQ4_XS {
  static constexpr int kElems = 256, kBytes = 136;
  struct State {
    alignas(32) float sc[8];
  };
  RLX_AVX512 static State prep(const uint8_t* b) {
    State st;
    _mm256_store_ps(st.sc, scales(b));
    return st;
  }
  // d·(ls − 32) of the 8 groups: quant::iq4_xs_scale for all 8 at once — the nibbles of
  // scales_l interleaved into group order, scales_h's 2-bit fields by one variable shift.
  RLX_AVX512 static __m256 scales(const uint8_t* b) {
    uint32_t lb;
    std::memcpy(&lb, b + 4, 4);
    const __m128i l = _mm_cvtsi32_si128(static_cast<int>(lb)), m4 = _mm_set1_epi8(0x0f);
    const __m256i low = _mm256_cvtepu8_epi32(_mm_unpacklo_epi8(_mm_and_si128(l, m4), _mm_and_si128(_mm_srli_epi16(l, 4), m4)));
    const __m256i high = _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(b[2] | (b[3] << 8)), _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14)),
                                          _mm256_set1_epi32(3));
    const __m256i ls = _mm256_sub_epi32(_mm256_or_si256(low, _mm256_slli_epi32(high, 4)), _mm256_set1_epi32(32));
    return _mm256_mul_ps(_mm256_cvtepi32_ps(ls), _mm256_set1_ps(f16_at(b)));
  }
  RLX_AVX512 static __m512 chunk(const uint8_t* b, const State& s, int c) {
    return _mm512_mul_ps(_mm512_set1_ps(s.sc[c >> 1]), iq4_values16(b + 8 + 16 * (c >> 1), c & 1));
  }
};

}  // namespace rlx::backends::cpu
