#include "backends/cpu/quant_q8_r16.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "backends/cpu/block_decoders.h"
#include "backends/cpu/quant_q8.h"
#include "util/gguf_blocks.h"
#include "util/host_memory.h"
#include "util/thread_pool.h"
// GCC 12's AVX-512 intrinsics build their "undefined" vectors by self-initialization, which
// -Wuninitialized flags in every caller (GCC PR 105593).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

namespace rlx::backends::cpu::q8 {

namespace {

#define RLX_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,f16c")))

using quant::BlockType;

// Rows of x per call: M accumulators plus the block's 8 quads and its scales stay in registers.
constexpr int kRows = 8;
// The next groups' bytes, this far ahead, into L2 (the stream is sequential across groups).
constexpr int kPrefetchAhead = 4096;
// Asks for the group kPrefetchAhead bytes past g, a cache line at a time, while this one is used.
template <class L>
inline void prefetch_group(const uint8_t* g) {
  for (int l = 0; l < L::kGroupBytes; l += 64) _mm_prefetch(reinterpret_cast<const char*>(g) + kPrefetchAhead + l, _MM_HINT_T1);
}

// ---- Pieces every kernel shares.

// start + Σ_t w[t]·(x quad t), for the 16 rows at once: quad t is x's bytes 4t … 4t + 3, broadcast.
template <int kQuads>
RLX_VNNI inline __m512i quads_dot(__m512i start, const __m512i* w, const int8_t* x) {
  for (int t = 0; t < kQuads; ++t) {
    int32_t quad;
    std::memcpy(&quad, x + 4 * t, 4);
    start = _mm512_dpbusd_epi32(start, w[t], _mm512_set1_epi32(quad));
  }
  return start;
}

// d (16 lanes) times the 16 rows' scale bytes at p, read signed or unsigned.
template <bool kSigned>
RLX_VNNI inline __m512 scaled_bytes(__m512 d, const uint8_t* p) {
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return _mm512_mul_ps(d, _mm512_cvtepi32_ps(kSigned ? _mm512_cvtepi8_epi32(b) : _mm512_cvtepu8_epi32(b)));
}

// ---- Layouts: how one row's block (src) goes into a group block (dst, row r of 16), and how a
// group block's 8 quad registers come back out (unsigned bytes, w + kOffset).

struct LayoutQ8_0 {  // block_q8_0 { half d; s8 qs[32]; }
  static constexpr int kSrcBytes = 34, kHead = 32, kGroupBytes = 32 + 8 * 64, kOffset = 128, kElems = 32, kSumSpan = 32;
  static constexpr bool kMin = false;
  static void pack(uint8_t* dst, const uint8_t* src, int r) {
    std::memcpy(dst + 2 * r, src, 2);
    for (int j = 0; j < 8; ++j)
      for (int t = 0; t < 4; ++t) dst[kHead + 64 * j + 4 * r + t] = static_cast<uint8_t>(src[2 + 4 * j + t] ^ 0x80);
  }
  RLX_VNNI static void quads(const uint8_t* g, __m512i* w) {
    for (int j = 0; j < 8; ++j) w[j] = _mm512_loadu_si512(g + kHead + 64 * j);
  }
};

// block_q4_0 { half d; u8 qs[16]; }, block_iq4_nl (the same bytes, nibbles index the IQ4 grid),
// block_q4_1 { half d; half m; u8 qs[16]; }. Byte i of qs holds value i (low nibble) and 16 + i.
template <int kSrc, int kQs, bool kHasMin, int kOff, bool kGrid>
struct LayoutNibbles {
  static constexpr int kSrcBytes = kSrc, kHead = kHasMin ? 64 : 32, kGroupBytes = kHead + 4 * 64, kOffset = kOff, kElems = 32, kSumSpan = 32;
  static constexpr bool kMin = kHasMin;
  static void pack(uint8_t* dst, const uint8_t* src, int r) {
    std::memcpy(dst + 2 * r, src, 2);
    if (kHasMin) std::memcpy(dst + 32 + 2 * r, src + 2, 2);
    for (int j = 0; j < 4; ++j) std::memcpy(dst + kHead + 64 * j + 4 * r, src + kQs + 4 * j, 4);
  }
  RLX_VNNI static void quads(const uint8_t* g, __m512i* w) {
    const __m512i m4 = _mm512_set1_epi8(0x0f);
    const __m512i grid = _mm512_broadcast_i32x4(iq4_grid_u8());
    for (int j = 0; j < 4; ++j) {
      const __m512i v = _mm512_loadu_si512(g + kHead + 64 * j);
      __m512i lo = _mm512_and_si512(v, m4), hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), m4);
      if (kGrid) lo = _mm512_shuffle_epi8(grid, lo), hi = _mm512_shuffle_epi8(grid, hi);
      w[j] = lo, w[j + 4] = hi;
    }
  }
};
using LayoutQ4_0 = LayoutNibbles<18, 2, false, 8, false>;
using LayoutIQ4_NL = LayoutNibbles<18, 2, false, 128, true>;
using LayoutQ4_1 = LayoutNibbles<20, 4, true, 0, false>;

// One group of 16 rows of W against MM rows of x: y[m·ldy + 0..15]. qsum: Σq of each block of x.
template <class L, int MM>
RLX_VNNI void group_dot(const uint8_t* g, int64_t nblk, const int8_t* q, const float* d, const float* s, const int32_t* qsum,
                        int64_t K, float* y, int64_t ldy) {
  __m512 acc[MM];
  for (int m = 0; m < MM; ++m) acc[m] = _mm512_setzero_ps();
  for (int64_t b = 0; b < nblk; ++b, g += L::kGroupBytes) {
    prefetch_group<L>(g);
    const __m512 ws = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(g)));
    __m512 wm = _mm512_setzero_ps();
    if constexpr (L::kMin) wm = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(g + 32)));
    __m512i w[8];
    L::quads(g, w);
    for (int m = 0; m < MM; ++m) {
      const int8_t* xb = q + m * K + 32 * b;
      const __m512i a = quads_dot<8>(_mm512_set1_epi32(-L::kOffset * qsum[m * nblk + b]), w, xb);
      const __m512 sc = _mm512_mul_ps(ws, _mm512_set1_ps(d[m * nblk + b]));
      acc[m] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(a), sc, acc[m]);
      if constexpr (L::kMin) acc[m] = _mm512_fmadd_ps(wm, _mm512_set1_ps(s[m * nblk + b]), acc[m]);
    }
  }
  for (int m = 0; m < MM; ++m) _mm512_storeu_ps(y + m * ldy, acc[m]);
}

// block_q4_k { half d, dmin; u8 scales[12]; u8 qs[128]; }: 256 values in 8 groups of 32, value =
// d·sc_g·q − dmin·mn_g (6-bit sc, mn). A group block of 16 rows (2368 bytes, 2304 before):
//   0: the 16 d (f16)   32: the 16 dmin (f16)   64 + 16g: sc_g of the 16 rows   192 + 16g: mn_g
//   320 + 512p + 64k: quad k (bytes 4k … 4k + 3) of the 16 rows' 32 nibble bytes of pair p —
//   low nibbles are values 4k … of group 2p, high ones of group 2p + 1.
// block_q5_k { half d, dmin; u8 scales[12]; u8 qh[32]; u8 qs[128]; } adds a fifth bit per value
// (bit g of qh[l] for value l of group g): 2880 bytes, the qh quads of the 16 rows at 2368 + 64k.
// Groups of 32 values are x's blocks: per group the integer dot of 8 quads, then one multiply-add
// by d·sc·d_x and one by −dmin·mn·s_x (s_x = d_x·Σq_x).
template <bool kFifthBit>
struct LayoutK {
  static constexpr int kSrcBytes = kFifthBit ? 176 : 144, kQs = kFifthBit ? 48 : 16, kQh = 320 + 4 * 512, kElems = 256, kSumSpan = 32;
  static constexpr int kGroupBytes = kQh + (kFifthBit ? 8 * 64 : 0);
  static void pack(uint8_t* dst, const uint8_t* src, int r) {
    std::memcpy(dst + 2 * r, src, 2);
    std::memcpy(dst + 32 + 2 * r, src + 2, 2);
    for (int g = 0; g < 8; ++g) {
      int sc, mn;
      quant::scale_min_k4(g, src + 4, &sc, &mn);
      dst[64 + 16 * g + r] = static_cast<uint8_t>(sc);
      dst[192 + 16 * g + r] = static_cast<uint8_t>(mn);
    }
    for (int p = 0; p < 4; ++p)
      for (int k = 0; k < 8; ++k) std::memcpy(dst + 320 + 512 * p + 64 * k + 4 * r, src + kQs + 32 * p + 4 * k, 4);
    if (kFifthBit)
      for (int k = 0; k < 8; ++k) std::memcpy(dst + kQh + 64 * k + 4 * r, src + 16 + 4 * k, 4);
  }
};

template <bool kFifthBit, int MM>
RLX_VNNI void group_dot_k(const uint8_t* g, int64_t nblk, const int8_t* q, const float* d, const float* s, const int32_t*, int64_t K, float* y,
                          int64_t ldy) {
  using L = LayoutK<kFifthBit>;
  const int64_t ldd = K / 32;  // x's blocks per row
  const __m512i m4 = _mm512_set1_epi8(0x0f), b4 = _mm512_set1_epi8(0x10);
  __m512 acc[MM];
  for (int m = 0; m < MM; ++m) acc[m] = _mm512_setzero_ps();
  for (int64_t b = 0; b < nblk; ++b, g += L::kGroupBytes) {
    prefetch_group<L>(g);
    const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(g)));
    const __m512 dm = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(g + 32)));
    for (int grp = 0; grp < 8; ++grp) {
      const __m512 ds = scaled_bytes<false>(dw, g + 64 + 16 * grp);
      const __m512 dn = scaled_bytes<false>(dm, g + 192 + 16 * grp);
      const uint8_t* pair = g + 320 + 512 * (grp >> 1);
      __m512i w[8];
      for (int k = 0; k < 8; ++k) {
        const __m512i v = _mm512_loadu_si512(pair + 64 * k);
        w[k] = (grp & 1) ? _mm512_and_si512(_mm512_srli_epi16(v, 4), m4) : _mm512_and_si512(v, m4);
        if constexpr (kFifthBit) {  // bit grp of each qh byte to bit 4: w | (shifted & 0x10)
          const __m512i h = _mm512_loadu_si512(g + L::kQh + 64 * k);
          const __m512i at4 = grp <= 4 ? _mm512_slli_epi16(h, 4 - grp) : _mm512_srli_epi16(h, grp - 4);
          w[k] = _mm512_ternarylogic_epi32(w[k], at4, b4, 0xf8);  // A | (B & C)
        }
      }
      for (int m = 0; m < MM; ++m) {
        const int8_t* xb = q + m * K + 256 * b + 32 * grp;
        const __m512i a = quads_dot<8>(_mm512_setzero_si512(), w, xb);
        const int64_t xi = m * ldd + 8 * b + grp;
        acc[m] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(a), _mm512_mul_ps(ds, _mm512_set1_ps(d[xi])), acc[m]);
        acc[m] = _mm512_fnmadd_ps(dn, _mm512_set1_ps(s[xi]), acc[m]);
      }
    }
  }
  for (int m = 0; m < MM; ++m) _mm512_storeu_ps(y + m * ldy, acc[m]);
}

// block_q6_k { u8 ql[128]; u8 qh[64]; s8 scales[16]; half d; }: 256 values in 16 groups of 16,
// value = d·sc_g·(q − 32), q = 4 low bits (ql) | 2 high bits (qh) << 4. In half h (values 128h …),
// with l < 32: values l, l + 32, l + 64, l + 96 are ql[64h + l] low, ql[64h + 32 + l] low,
// ql[64h + l] high, ql[64h + 32 + l] high, with qh[32h + l]'s bits 0-1, 2-3, 4-5, 6-7. A group
// block of 16 rows (3360 bytes, the same as before):
//   0: the 16 d (f16)   32 + 16g: sc_g of the 16 rows
//   288 + 1024h + 64k: quad k (bytes 4k … 4k + 3) of the 16 rows' ql of half h (k < 16)
//   2336 + 512h + 64k: quad k of their qh of half h (k < 8)
// Per group the integer dot of 4 quads, from −32·Σq_x of the group's 16 x values, then one
// multiply-add by d·sc·d_x.
struct LayoutQ6_K {
  static constexpr int kSrcBytes = 210, kQl = 288, kQh = 288 + 2048, kGroupBytes = kQh + 1024, kElems = 256, kSumSpan = 16;
  static void pack(uint8_t* dst, const uint8_t* src, int r) {
    std::memcpy(dst + 2 * r, src + 208, 2);
    for (int g = 0; g < 16; ++g) dst[32 + 16 * g + r] = src[192 + g];
    for (int h = 0; h < 2; ++h) {
      for (int k = 0; k < 16; ++k) std::memcpy(dst + kQl + 1024 * h + 64 * k + 4 * r, src + 64 * h + 4 * k, 4);
      for (int k = 0; k < 8; ++k) std::memcpy(dst + kQh + 512 * h + 64 * k + 4 * r, src + 128 + 32 * h + 4 * k, 4);
    }
  }
};

// qsum: Σq of each 16 x values (not of 32: the groups are 16 long).
template <int MM>
RLX_VNNI void group_dot_q6_k(const uint8_t* g, int64_t nblk, const int8_t* q, const float* d, const float*, const int32_t* qsum, int64_t K,
                             float* y, int64_t ldy) {
  using L = LayoutQ6_K;
  const int64_t ldd = K / 32, lds = K / 16;
  const __m512i m4 = _mm512_set1_epi8(0x0f), top = _mm512_set1_epi8(0x30);
  __m512 acc[MM];
  for (int m = 0; m < MM; ++m) acc[m] = _mm512_setzero_ps();
  for (int64_t b = 0; b < nblk; ++b, g += L::kGroupBytes) {
    prefetch_group<L>(g);
    const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(g)));
    for (int h = 0; h < 2; ++h)
      for (int c = 0; c < 4; ++c)
        for (int j = 0; j < 2; ++j) {
          const int grp = 8 * h + 2 * c + j;  // values 128h + 32c + 16j … + 15
          const __m512 ds = scaled_bytes<true>(dw, g + 32 + 16 * grp);
          __m512i w[4];
          for (int t = 0; t < 4; ++t) {
            const int k = 4 * j + t;
            const __m512i lo = _mm512_loadu_si512(g + L::kQl + 1024 * h + 64 * (k + 8 * (c & 1)));
            const __m512i hi = _mm512_loadu_si512(g + L::kQh + 512 * h + 64 * k);
            const __m512i nib = c < 2 ? _mm512_and_si512(lo, m4) : _mm512_and_si512(_mm512_srli_epi16(lo, 4), m4);
            // qh bits 2c, 2c + 1 to bits 4-5
            const __m512i at4 = c == 0 ? _mm512_slli_epi16(hi, 4) : c == 1 ? _mm512_slli_epi16(hi, 2) : c == 2 ? hi : _mm512_srli_epi16(hi, 2);
            w[t] = _mm512_ternarylogic_epi32(nib, at4, top, 0xf8);  // A | (B & C)
          }
          for (int m = 0; m < MM; ++m) {
            const int8_t* xb = q + m * K + 256 * b + 16 * grp;
            const __m512i a = quads_dot<4>(_mm512_set1_epi32(-32 * qsum[m * lds + 16 * b + grp]), w, xb);
            acc[m] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(a), _mm512_mul_ps(ds, _mm512_set1_ps(d[m * ldd + 8 * b + grp / 2])), acc[m]);
          }
        }
  }
  for (int m = 0; m < MM; ++m) _mm512_storeu_ps(y + m * ldy, acc[m]);
}

// block_iq4_xs { half d; u16 scales_h; u8 scales_l[4]; u8 qs[128]; }: 8 groups of 32, each an
// IQ4_NL block with scale d·(ls_g − 32); group g's nibbles are qs[16g …], byte i holding values i
// and 16 + i. A group block of 16 rows (2208 bytes, 2176 before):
//   0: the 16 d (f16)   32 + 16g: ls_g − 32 of the 16 rows (s8)
//   160 + 256g + 64k: quad k (bytes 4k … 4k + 3) of the 16 rows' nibbles of group g
// The grid + 128 (one byte shuffle) is unsigned, so a group's integer dot starts from −128·Σq_x.
struct LayoutIQ4_XS {
  static constexpr int kSrcBytes = 136, kQs = 160, kGroupBytes = kQs + 8 * 256, kElems = 256, kSumSpan = 32;
  static void pack(uint8_t* dst, const uint8_t* src, int r) {
    std::memcpy(dst + 2 * r, src, 2);
    for (int g = 0; g < 8; ++g) {
      dst[32 + 16 * g + r] = static_cast<uint8_t>(static_cast<int8_t>(quant::iq4_xs_scale(src, g)));
      for (int k = 0; k < 4; ++k) std::memcpy(dst + kQs + 256 * g + 64 * k + 4 * r, src + 8 + 16 * g + 4 * k, 4);
    }
  }
};

template <int MM>
RLX_VNNI void group_dot_iq4_xs(const uint8_t* g, int64_t nblk, const int8_t* q, const float* d, const float*, const int32_t* qsum, int64_t K,
                               float* y, int64_t ldy) {
  using L = LayoutIQ4_XS;
  const int64_t ldd = K / 32;
  const __m512i m4 = _mm512_set1_epi8(0x0f);
  const __m512i grid = _mm512_broadcast_i32x4(iq4_grid_u8());
  __m512 acc[MM];
  for (int m = 0; m < MM; ++m) acc[m] = _mm512_setzero_ps();
  for (int64_t b = 0; b < nblk; ++b, g += L::kGroupBytes) {
    prefetch_group<L>(g);
    const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(g)));
    for (int grp = 0; grp < 8; ++grp) {
      const __m512 ds = scaled_bytes<true>(dw, g + 32 + 16 * grp);
      __m512i w[8];
      for (int k = 0; k < 4; ++k) {
        const __m512i v = _mm512_loadu_si512(g + L::kQs + 256 * grp + 64 * k);
        w[k] = _mm512_shuffle_epi8(grid, _mm512_and_si512(v, m4));
        w[k + 4] = _mm512_shuffle_epi8(grid, _mm512_and_si512(_mm512_srli_epi16(v, 4), m4));
      }
      for (int m = 0; m < MM; ++m) {
        const int8_t* xb = q + m * K + 256 * b + 32 * grp;
        const int64_t xi = m * ldd + 8 * b + grp;
        const __m512i a = quads_dot<8>(_mm512_set1_epi32(-128 * qsum[xi]), w, xb);
        acc[m] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(a), _mm512_mul_ps(ds, _mm512_set1_ps(d[xi])), acc[m]);
      }
    }
  }
  for (int m = 0; m < MM; ++m) _mm512_storeu_ps(y + m * ldy, acc[m]);
}

// block_q3_k { u8 hmask[32]; u8 qs[64]; u8 scales[12]; half d; }: 16 groups of 16, value =
// d·sc_g·(q − 4), q = a 2-bit field | a hmask bit << 2. In half n (values 128n …), with j < 4 and
// l < 32: value 128n + 32j + l is bits 2j of qs[32n + l] and bit 4n + j of hmask[l], in group
// 8n + 2j + l / 16. A group block of 16 rows (1824 bytes, 1760 before):
//   0: the 16 d (f16)   32 + 16g: sc_g of the 16 rows (s8, unpacked)
//   288 + 512n + 64k: quad k (bytes 4k … 4k + 3) of the 16 rows' qs of half n (k < 8)
//   1312 + 64k: quad k of their hmask
// Per group the integer dot of 4 quads, from −4·Σq_x of its 16 x values, then one multiply-add.
struct LayoutQ3_K {
  static constexpr int kSrcBytes = 110, kQs = 288, kHm = 288 + 1024, kGroupBytes = kHm + 512, kElems = 256, kSumSpan = 16;
  static void pack(uint8_t* dst, const uint8_t* src, int r) {
    std::memcpy(dst + 2 * r, src + 108, 2);
    for (int g = 0; g < 16; ++g) dst[32 + 16 * g + r] = static_cast<uint8_t>(static_cast<int8_t>(quant::q3_k_scale(src + 96, g)));
    for (int k = 0; k < 8; ++k) {
      for (int n = 0; n < 2; ++n) std::memcpy(dst + kQs + 512 * n + 64 * k + 4 * r, src + 32 + 32 * n + 4 * k, 4);
      std::memcpy(dst + kHm + 64 * k + 4 * r, src + 4 * k, 4);
    }
  }
};

// qsum: Σq of each 16 x values.
template <int MM>
RLX_VNNI void group_dot_q3_k(const uint8_t* g, int64_t nblk, const int8_t* q, const float* d, const float*, const int32_t* qsum, int64_t K,
                             float* y, int64_t ldy) {
  using L = LayoutQ3_K;
  const int64_t ldd = K / 32, lds = K / 16;
  const __m512i m3 = _mm512_set1_epi8(0x03), b2 = _mm512_set1_epi8(0x04);
  __m512 acc[MM];
  for (int m = 0; m < MM; ++m) acc[m] = _mm512_setzero_ps();
  for (int64_t b = 0; b < nblk; ++b, g += L::kGroupBytes) {
    prefetch_group<L>(g);
    const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(g)));
    for (int n = 0; n < 2; ++n)
      for (int j = 0; j < 4; ++j)
        for (int half = 0; half < 2; ++half) {
          const int grp = 8 * n + 2 * j + half;  // values 128n + 32j + 16·half … + 15
          const __m512 ds = scaled_bytes<true>(dw, g + 32 + 16 * grp);
          __m512i w[4];
          for (int t = 0; t < 4; ++t) {
            const int k = 4 * half + t;
            const __m512i crumb = _mm512_and_si512(_mm512_srli_epi16(_mm512_loadu_si512(g + L::kQs + 512 * n + 64 * k), 2 * j), m3);
            const int bit = 4 * n + j;  // to bit 2
            const __m512i h = _mm512_loadu_si512(g + L::kHm + 64 * k);
            const __m512i at2 = bit >= 2 ? _mm512_srli_epi16(h, bit - 2) : _mm512_slli_epi16(h, 2 - bit);
            w[t] = _mm512_ternarylogic_epi32(crumb, at2, b2, 0xf8);  // A | (B & C)
          }
          for (int m = 0; m < MM; ++m) {
            const int8_t* xb = q + m * K + 256 * b + 16 * grp;
            const __m512i a = quads_dot<4>(_mm512_set1_epi32(-4 * qsum[m * lds + 16 * b + grp]), w, xb);
            acc[m] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(a), _mm512_mul_ps(ds, _mm512_set1_ps(d[m * ldd + 8 * b + grp / 2])), acc[m]);
          }
        }
  }
  for (int m = 0; m < MM; ++m) _mm512_storeu_ps(y + m * ldy, acc[m]);
}

// block_q2_k { u8 scales[16]; u8 qs[64]; half d; half dmin; }: 16 groups of 16, value =
// d·sc_g·q − dmin·mn_g (scales[g] = sc | mn << 4, q 2 bits); value 128n + 32j + l is bits 2j of
// qs[32n + l], in group 8n + 2j + l / 16 (as Q3_K). A group block of 16 rows (1344 bytes, as before):
//   0: the 16 d (f16)   32: the 16 dmin (f16)   64 + 16g: scales[g] of the 16 rows
//   320 + 512n + 64k: quad k (bytes 4k … 4k + 3) of the 16 rows' qs of half n (k < 8)
// Per group the integer dot of 4 quads, then a multiply-add by d·sc·d_x and one by −dmin·mn·d_x·Σq_x.
struct LayoutQ2_K {
  static constexpr int kSrcBytes = 84, kQs = 320, kGroupBytes = kQs + 1024, kElems = 256, kSumSpan = 16;
  static void pack(uint8_t* dst, const uint8_t* src, int r) {
    std::memcpy(dst + 2 * r, src + 80, 2);
    std::memcpy(dst + 32 + 2 * r, src + 82, 2);
    for (int g = 0; g < 16; ++g) dst[64 + 16 * g + r] = src[g];
    for (int n = 0; n < 2; ++n)
      for (int k = 0; k < 8; ++k) std::memcpy(dst + kQs + 512 * n + 64 * k + 4 * r, src + 16 + 32 * n + 4 * k, 4);
  }
};

// qsum: Σq of each 16 x values.
template <int MM>
RLX_VNNI void group_dot_q2_k(const uint8_t* g, int64_t nblk, const int8_t* q, const float* d, const float*, const int32_t* qsum, int64_t K,
                             float* y, int64_t ldy) {
  using L = LayoutQ2_K;
  const int64_t ldd = K / 32, lds = K / 16;
  const __m512i m3 = _mm512_set1_epi8(0x03);
  __m512 acc[MM];
  for (int m = 0; m < MM; ++m) acc[m] = _mm512_setzero_ps();
  for (int64_t b = 0; b < nblk; ++b, g += L::kGroupBytes) {
    prefetch_group<L>(g);
    const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(g)));
    const __m512 dm = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(g + 32)));
    for (int n = 0; n < 2; ++n)
      for (int j = 0; j < 4; ++j)
        for (int half = 0; half < 2; ++half) {
          const int grp = 8 * n + 2 * j + half;  // values 128n + 32j + 16·half … + 15
          const __m512i sm = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(g + 64 + 16 * grp)));
          const __m512 ds = _mm512_mul_ps(dw, _mm512_cvtepi32_ps(_mm512_and_si512(sm, _mm512_set1_epi32(0x0f))));
          const __m512 dn = _mm512_mul_ps(dm, _mm512_cvtepi32_ps(_mm512_srli_epi32(sm, 4)));
          __m512i w[4];
          for (int t = 0; t < 4; ++t)
            w[t] = _mm512_and_si512(_mm512_srli_epi16(_mm512_loadu_si512(g + L::kQs + 512 * n + 64 * (4 * half + t)), 2 * j), m3);
          for (int m = 0; m < MM; ++m) {
            const int8_t* xb = q + m * K + 256 * b + 16 * grp;
            const __m512i a = quads_dot<4>(_mm512_setzero_si512(), w, xb);
            const float dx = d[m * ldd + 8 * b + grp / 2];
            acc[m] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(a), _mm512_mul_ps(ds, _mm512_set1_ps(dx)), acc[m]);
            acc[m] = _mm512_fnmadd_ps(dn, _mm512_set1_ps(dx * static_cast<float>(qsum[m * lds + 16 * b + grp])), acc[m]);
          }
        }
  }
  for (int m = 0; m < MM; ++m) _mm512_storeu_ps(y + m * ldy, acc[m]);
}

using GroupDot = void (*)(const uint8_t*, int64_t, const int8_t*, const float*, const float*, const int32_t*, int64_t, float*, int64_t);
using PackFn = void (*)(uint8_t*, const uint8_t*, int);

struct Kernels {
  int64_t elems = 32, src_bytes = 0, group_bytes = 0;  // per block of a row
  int64_t sum_span = 32;                                // the qsum the kernel reads: Σq over this many x values
  PackFn pack = nullptr;
  GroupDot dot[kRows] = {};
};

// Each layout's kernel: the shared one for the 32-value types, its own for the others.
template <class L, int MM>
constexpr GroupDot kDot = group_dot<L, MM>;
template <bool kFifthBit, int MM>
constexpr GroupDot kDot<LayoutK<kFifthBit>, MM> = group_dot_k<kFifthBit, MM>;
template <int MM>
constexpr GroupDot kDot<LayoutQ6_K, MM> = group_dot_q6_k<MM>;
template <int MM>
constexpr GroupDot kDot<LayoutIQ4_XS, MM> = group_dot_iq4_xs<MM>;
template <int MM>
constexpr GroupDot kDot<LayoutQ3_K, MM> = group_dot_q3_k<MM>;
template <int MM>
constexpr GroupDot kDot<LayoutQ2_K, MM> = group_dot_q2_k<MM>;

// kElems values a block of a row (32, or 256 for the K-quants); kSumSpan: the Σq_x the kernel
// reads covers this many x values (16 where the groups are 16 long).
template <class L>
constexpr Kernels kernels_of() {
  return {L::kElems,
          L::kSrcBytes,
          L::kGroupBytes,
          L::kSumSpan,
          L::pack,
          {kDot<L, 1>, kDot<L, 2>, kDot<L, 3>, kDot<L, 4>, kDot<L, 5>, kDot<L, 6>, kDot<L, 7>, kDot<L, 8>}};
}

const Kernels* kernels(BlockType t) {
  static const Kernels q8_0 = kernels_of<LayoutQ8_0>(), q4_0 = kernels_of<LayoutQ4_0>(), q4_1 = kernels_of<LayoutQ4_1>(),
                       iq4_nl = kernels_of<LayoutIQ4_NL>(), q2_k = kernels_of<LayoutQ2_K>(), q3_k = kernels_of<LayoutQ3_K>(),
                       q4_k = kernels_of<LayoutK<false>>(), q5_k = kernels_of<LayoutK<true>>(), q6_k = kernels_of<LayoutQ6_K>(),
                       iq4_xs = kernels_of<LayoutIQ4_XS>();
  switch (t) {
    case BlockType::q8_0: return &q8_0;
    case BlockType::q4_0: return &q4_0;
    case BlockType::q4_1: return &q4_1;
    case BlockType::iq4_nl: return &iq4_nl;
    case BlockType::q4_k: return &q4_k;
    case BlockType::q5_k: return &q5_k;
    case BlockType::q6_k: return &q6_k;
    case BlockType::iq4_xs: return &iq4_xs;
    case BlockType::q3_k: return &q3_k;
    case BlockType::q2_k: return &q2_k;
    default: return nullptr;
  }
}

struct CacheKey {
  const uint8_t* w;
  int64_t n, k;
  BlockType t;
  bool operator<(const CacheKey& o) const { return std::tie(w, n, k, t) < std::tie(o.w, o.n, o.k, o.t); }
};

}  // namespace

bool repacked_applies(BlockType t, int64_t n, int64_t k) {
  return has_vnni() && kernels(t) && n > 0 && n % kGroupRows == 0 && k > 0 && k % kernels(t)->elems == 0;
}

std::shared_ptr<const Repacked16> repack(BlockType t, const uint8_t* w, int64_t n, int64_t k) {
  const Kernels& kern = *kernels(t);
  // Weak entries: the copy lives as long as a kernel holds it; a new model's bytes at a reused
  // address find an expired entry and repack.
  static std::mutex mutex;
  static std::map<CacheKey, std::weak_ptr<const Repacked16>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto& slot = cache[CacheKey{w, n, k, t}];
  if (auto hit = slot.lock()) return hit;
  auto r = std::make_shared<Repacked16>();
  const int64_t nblk = k / kern.elems, rb = nblk * kern.src_bytes, groups = n / kGroupRows;
  r->memory = host_alloc(static_cast<size_t>(groups * nblk * kern.group_bytes), false, "repacked weights");
  r->data = static_cast<const uint8_t*>(r->memory.get());
  r->type = t, r->n = n, r->k = k, r->group_block_bytes = kern.group_bytes;
  auto* out = static_cast<uint8_t*>(r->memory.get());
  rlx::parallel_for(groups, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t gi = lo; gi < hi; ++gi)
      for (int64_t b = 0; b < nblk; ++b) {
        uint8_t* dst = out + (gi * nblk + b) * kern.group_bytes;
        for (int r16 = 0; r16 < kGroupRows; ++r16) kern.pack(dst, w + (gi * kGroupRows + r16) * rb + b * kern.src_bytes, r16);
      }
  });
  slot = r;
  for (auto it = cache.begin(); it != cache.end();) it = it->second.expired() ? cache.erase(it) : std::next(it);
  return r;
}

void matmul_repacked(const Repacked16& w, const int8_t* q, const float* d, const float* s, int64_t M, float* y) {
  const Kernels& kern = *kernels(w.type);
  const int64_t N = w.n, K = w.k, nblk = K / 32, groups = N / kGroupRows, gb = w.group_block_bytes, wblk = K / kern.elems;
  // Σq of every block of x (or every 16 values, for a kernel whose groups are 16 long): −offset·Σq
  // is the integer dot's starting value.
  thread_local std::vector<int32_t> qsum;
  const int64_t span = kern.sum_span, nsum = M * K / span;
  qsum.resize(static_cast<size_t>(nsum));
  for (int64_t i = 0; i < nsum; ++i) {
    int32_t t = 0;
    for (int j = 0; j < span; ++j) t += q[span * i + j];
    qsum[static_cast<size_t>(i)] = t;
  }
  // Groups are handed out ~64 KiB of weights at a time: a thread that gets less of the CPU (a
  // busy machine) takes fewer of them instead of holding everyone back. Each group meets every
  // row of x while its bytes are in L1/L2.
  const int64_t block = std::max<int64_t>(1, 65536 / (wblk * gb));
  const int32_t* sums = qsum.data();  // the thread-local of this thread, read by the workers
  std::atomic<int64_t> next{0};
  rlx::parallel_for(groups >= 2 * block ? num_threads() : 1, 1, [&](int64_t, int64_t) {
    for (int64_t lo; (lo = next.fetch_add(block, std::memory_order_relaxed)) < groups;) {
      int64_t hi = std::min(groups, lo + block);
      for (int64_t gi = lo; gi < hi; ++gi) {
        const uint8_t* g = w.data + gi * wblk * gb;
        for (int64_t m0 = 0; m0 < M; m0 += kRows) {
          int mm = static_cast<int>(std::min<int64_t>(kRows, M - m0));
          kern.dot[mm - 1](g, wblk, q + m0 * K, d + m0 * nblk, s + m0 * nblk, sums + m0 * (K / span), K, y + m0 * N + gi * kGroupRows, N);
        }
      }
    }
  });
}

}  // namespace rlx::backends::cpu::q8
