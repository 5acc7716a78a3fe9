// ggml's block formats decoded, bit for bit as ggml-common.h / ggml-quants.c define them, in
// one place for every consumer: the host (util/quant_blocks.cpp: file readers and the cpu
// kernels) and the cuda kernels (the same functions compiled for the device). Layouts (bytes
// within one block) are from ggml-common.h; each comment gives the struct so the offsets below
// can be checked against it.
#pragma once
#include <cstdint>
#include <cstring>

#include "util/host_device.h"
#include "util/quant_blocks.h"

#include "util/half.h"
#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

namespace rlx::quant {

constexpr int kQK = 32;     // elements in a Q4_0 … Q8_0 block
constexpr int kQK_K = 256;  // elements in a K-quant super-block

RLX_HD float f16_bits_to_f32(uint16_t h) {
#if defined(__CUDA_ARCH__)
  return __half2float(__ushort_as_half(h));
#else
  return f16_to_f32(h);
#endif
}

RLX_HD float bf16_bits_to_f32(uint16_t h) {
#if defined(__CUDA_ARCH__)
  return __bfloat162float(__ushort_as_bfloat16(h));
#else
  return bf16_to_f32(h);
#endif
}

RLX_HD float half_at(const uint8_t* p) {
  uint16_t h;
  memcpy(&h, p, 2);
  return f16_bits_to_f32(h);
}

// block_q4_0 { half d; u8 qs[16]; }: element j is the low nibble of qs[j], j+16 the high one.
RLX_HD_FN void decode_q4_0(const uint8_t* b, float* y) {
  float d = half_at(b);
  const uint8_t* qs = b + 2;
  for (int j = 0; j < kQK / 2; ++j) {
    y[j] = static_cast<float>((qs[j] & 0x0f) - 8) * d;
    y[j + kQK / 2] = static_cast<float>((qs[j] >> 4) - 8) * d;
  }
}

// block_q4_1 { half d; half m; u8 qs[16]; }
RLX_HD_FN void decode_q4_1(const uint8_t* b, float* y) {
  float d = half_at(b), m = half_at(b + 2);
  const uint8_t* qs = b + 4;
  for (int j = 0; j < kQK / 2; ++j) {
    y[j] = static_cast<float>(qs[j] & 0x0f) * d + m;
    y[j + kQK / 2] = static_cast<float>(qs[j] >> 4) * d + m;
  }
}

// block_q5_0 { half d; u8 qh[4]; u8 qs[16]; }: qh bit j is the fifth bit of element j.
RLX_HD_FN void decode_q5_0(const uint8_t* b, float* y) {
  float d = half_at(b);
  uint32_t qh;
  memcpy(&qh, b + 2, 4);
  const uint8_t* qs = b + 6;
  for (int j = 0; j < kQK / 2; ++j) {
    int h0 = ((qh >> j) & 1) << 4, h1 = ((qh >> (j + 16)) & 1) << 4;
    y[j] = static_cast<float>(((qs[j] & 0x0f) | h0) - 16) * d;
    y[j + kQK / 2] = static_cast<float>(((qs[j] >> 4) | h1) - 16) * d;
  }
}

// block_q5_1 { half d; half m; u8 qh[4]; u8 qs[16]; }
RLX_HD_FN void decode_q5_1(const uint8_t* b, float* y) {
  float d = half_at(b), m = half_at(b + 2);
  uint32_t qh;
  memcpy(&qh, b + 4, 4);
  const uint8_t* qs = b + 8;
  for (int j = 0; j < kQK / 2; ++j) {
    int h0 = ((qh >> j) & 1) << 4, h1 = ((qh >> (j + 16)) & 1) << 4;
    y[j] = static_cast<float>((qs[j] & 0x0f) | h0) * d + m;
    y[j + kQK / 2] = static_cast<float>((qs[j] >> 4) | h1) * d + m;
  }
}

// block_q8_0 { half d; i8 qs[32]; }
RLX_HD_FN void decode_q8_0(const uint8_t* b, float* y) {
  float d = half_at(b);
  for (int j = 0; j < kQK; ++j) y[j] = static_cast<float>(static_cast<int8_t>(b[2 + j])) * d;
}

// block_q2_K { u8 scales[16]; u8 qs[64]; half d; half dmin; }: 16 groups of 16; each scales
// byte holds a 4-bit scale (low) and 4-bit min (high); 2-bit quants, 4 per byte, where byte l
// of a 32-byte run holds groups at shifts 0, 2, 4, 6.
RLX_HD_FN void decode_q2_k(const uint8_t* b, float* y) {
  const uint8_t* scales = b;
  const uint8_t* q = b + 16;
  float d = half_at(b + 80), dmin = half_at(b + 82);
  int is = 0;
  for (int n = 0; n < kQK_K; n += 128) {
    for (int shift = 0; shift < 8; shift += 2) {
      for (int half = 0; half < 2; ++half) {
        uint8_t sc = scales[is++];
        float dl = d * static_cast<float>(sc & 0x0f), ml = dmin * static_cast<float>(sc >> 4);
        for (int l = 0; l < 16; ++l) *y++ = dl * static_cast<float>((q[l + 16 * half] >> shift) & 3) - ml;
      }
    }
    q += 32;
  }
}

// block_q3_K { u8 hmask[32]; u8 qs[64]; u8 scales[12]; half d; }: 16 signed 6-bit scales
// (minus 32), low 4 bits in scales[0..7] (low nibble first for groups 0-7, high for 8-15) and
// high 2 bits in scales[8..11]; a quant is 2 low bits plus a high bit that, when clear,
// subtracts 4.
// Q3_K's signed scale of group i (0-15) from its 12 packed scale bytes.
RLX_HD int q3_k_scale(const uint8_t* s, int i) {
  int low = i < 8 ? (s[i] & 0x0f) : (s[i - 8] >> 4);
  int high = (s[8 + i % 4] >> (2 * (i / 4))) & 3;
  return (low | (high << 4)) - 32;
}

RLX_HD_FN void decode_q3_k(const uint8_t* b, float* y) {
  const uint8_t* hm = b;
  const uint8_t* q = b + 32;
  const uint8_t* s = b + 96;
  float d_all = half_at(b + 108);
  int scale[16];
  for (int i = 0; i < 16; ++i) scale[i] = q3_k_scale(s, i);
  int is = 0;
  uint8_t m = 1;
  for (int n = 0; n < kQK_K; n += 128) {
    for (int shift = 0; shift < 8; shift += 2) {
      for (int half = 0; half < 2; ++half) {
        float dl = d_all * static_cast<float>(scale[is++]);
        for (int l = 0; l < 16; ++l) {
          int k = l + 16 * half;
          int v = ((q[k] >> shift) & 3) - ((hm[k] & m) ? 0 : 4);
          *y++ = dl * static_cast<float>(v);
        }
      }
      m = static_cast<uint8_t>(m << 1);
    }
    q += 32;
  }
}

// The 12-byte scale/min packing shared by Q4_K and Q5_K: 8 six-bit scales and 8 six-bit mins.
RLX_HD_FN void scale_min_k4(int j, const uint8_t* q, int* sc, int* mn) {
  if (j < 4) {
    *sc = q[j] & 63;
    *mn = q[j + 4] & 63;
  } else {
    *sc = (q[j + 4] & 0x0f) | ((q[j - 4] >> 6) << 4);
    *mn = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}

// block_q4_K { half d; half dmin; u8 scales[12]; u8 qs[128]; }: 8 groups of 32; each 32-byte
// run of qs holds two groups (low nibbles, then high nibbles).
RLX_HD_FN void decode_q4_k(const uint8_t* b, float* y) {
  float d = half_at(b), dmin = half_at(b + 2);
  const uint8_t* scales = b + 4;
  const uint8_t* q = b + 16;
  for (int j = 0; j < 4; ++j) {
    int sc, mn;
    scale_min_k4(2 * j, scales, &sc, &mn);
    float d1 = d * static_cast<float>(sc), m1 = dmin * static_cast<float>(mn);
    scale_min_k4(2 * j + 1, scales, &sc, &mn);
    float d2 = d * static_cast<float>(sc), m2 = dmin * static_cast<float>(mn);
    for (int l = 0; l < 32; ++l) *y++ = d1 * static_cast<float>(q[l] & 0x0f) - m1;
    for (int l = 0; l < 32; ++l) *y++ = d2 * static_cast<float>(q[l] >> 4) - m2;
    q += 32;
  }
}

// block_q5_K { half d; half dmin; u8 scales[12]; u8 qh[32]; u8 qs[128]; }: like Q4_K plus a
// fifth bit per element; group g takes its high bits from bit g of qh[l].
RLX_HD_FN void decode_q5_k(const uint8_t* b, float* y) {
  float d = half_at(b), dmin = half_at(b + 2);
  const uint8_t* scales = b + 4;
  const uint8_t* qh = b + 16;
  const uint8_t* ql = b + 48;
  for (int j = 0; j < 4; ++j) {
    int sc, mn;
    scale_min_k4(2 * j, scales, &sc, &mn);
    float d1 = d * static_cast<float>(sc), m1 = dmin * static_cast<float>(mn);
    scale_min_k4(2 * j + 1, scales, &sc, &mn);
    float d2 = d * static_cast<float>(sc), m2 = dmin * static_cast<float>(mn);
    uint8_t u1 = static_cast<uint8_t>(1u << (2 * j)), u2 = static_cast<uint8_t>(2u << (2 * j));
    for (int l = 0; l < 32; ++l) *y++ = d1 * static_cast<float>((ql[l] & 0x0f) + ((qh[l] & u1) ? 16 : 0)) - m1;
    for (int l = 0; l < 32; ++l) *y++ = d2 * static_cast<float>((ql[l] >> 4) + ((qh[l] & u2) ? 16 : 0)) - m2;
    ql += 32;
  }
}

// block_q6_K { u8 ql[128]; u8 qh[64]; i8 scales[16]; half d; }: 6-bit quants minus 32; element
// i uses scales[i / 16]. Per 128 elements: ql[l] and ql[l+32] give the low nibbles of
// elements l, l+32 (low) and l+64, l+96 (high); qh[l] gives their top 2 bits at shifts 0,2,4,6.
RLX_HD_FN void decode_q6_k(const uint8_t* b, float* y) {
  const uint8_t* ql = b;
  const uint8_t* qh = b + 128;
  const auto* sc = reinterpret_cast<const int8_t*>(b + 192);
  float d = half_at(b + 208);
  for (int n = 0; n < kQK_K; n += 128) {
    for (int l = 0; l < 32; ++l) {
      int is = l / 16;
      int q1 = ((ql[l] & 0x0f) | (((qh[l] >> 0) & 3) << 4)) - 32;
      int q2 = ((ql[l + 32] & 0x0f) | (((qh[l] >> 2) & 3) << 4)) - 32;
      int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
      int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
      y[l] = d * static_cast<float>(sc[is + 0]) * static_cast<float>(q1);
      y[l + 32] = d * static_cast<float>(sc[is + 2]) * static_cast<float>(q2);
      y[l + 64] = d * static_cast<float>(sc[is + 4]) * static_cast<float>(q3);
      y[l + 96] = d * static_cast<float>(sc[is + 6]) * static_cast<float>(q4);
    }
    y += 128;
    ql += 64;
    qh += 32;
    sc += 8;
  }
}

// block_q8_K { float d; i8 qs[256]; i16 bsums[16]; }: bsums are sums for dot products only.
RLX_HD_FN void decode_q8_k(const uint8_t* b, float* y) {
  float d;
  memcpy(&d, b, 4);
  for (int j = 0; j < kQK_K; ++j) y[j] = d * static_cast<float>(static_cast<int8_t>(b[4 + j]));
}

// IQ4_NL and IQ4_XS: 4-bit indices into one non-linear grid of 16 values (ggml's
// kvalues_iq4nl), denser near zero where weights cluster.
RLX_HD int iq4_grid(int i) {
  constexpr int8_t kGrid[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
  return kGrid[i];
}

// block_iq4_nl { half d; u8 qs[16]; }: element j is grid[low nibble of qs[j]]·d, j + 16 the high one.
RLX_HD_FN void decode_iq4_nl(const uint8_t* b, float* y) {
  float d = half_at(b);
  const uint8_t* qs = b + 2;
  for (int j = 0; j < kQK / 2; ++j) {
    y[j] = d * static_cast<float>(iq4_grid(qs[j] & 0x0f));
    y[j + kQK / 2] = d * static_cast<float>(iq4_grid(qs[j] >> 4));
  }
}

// block_iq4_xs { half d; u16 scales_h; u8 scales_l[4]; u8 qs[128]; }: 8 groups of 32, each an
// IQ4_NL block without its own d: a 6-bit scale ls (low 4 bits in nibble g % 2 of scales_l[g / 2],
// high 2 bits at bit 2g of scales_h) gives d·(ls − 32).
RLX_HD int iq4_xs_scale(const uint8_t* b, int g) {  // ls − 32 of group g (0-7)
  const int scales_h = b[2] | (b[3] << 8);
  return (((b[4 + g / 2] >> (4 * (g % 2))) & 0x0f) | (((scales_h >> (2 * g)) & 3) << 4)) - 32;
}

RLX_HD_FN void decode_iq4_xs(const uint8_t* b, float* y) {
  float d = half_at(b);
  const uint8_t* qs = b + 8;
  for (int g = 0; g < 8; ++g) {
    const float dl = d * static_cast<float>(iq4_xs_scale(b, g));
    for (int j = 0; j < 16; ++j) {
      y[32 * g + j] = dl * static_cast<float>(iq4_grid(qs[16 * g + j] & 0x0f));
      y[32 * g + j + 16] = dl * static_cast<float>(iq4_grid(qs[16 * g + j] >> 4));
    }
  }
}

RLX_HD void decode_f16(const uint8_t* b, float* y) { *y = half_at(b); }

RLX_HD void decode_bf16(const uint8_t* b, float* y) {
  uint16_t h;
  memcpy(&h, b, 2);
  *y = bf16_bits_to_f32(h);
}

// One block of type t at b → block_elems(t) floats at y.
RLX_HD void decode_block(BlockType t, const uint8_t* b, float* y) {
  switch (t) {
    case BlockType::q4_0: decode_q4_0(b, y); break;
    case BlockType::q4_1: decode_q4_1(b, y); break;
    case BlockType::q5_0: decode_q5_0(b, y); break;
    case BlockType::q5_1: decode_q5_1(b, y); break;
    case BlockType::q8_0: decode_q8_0(b, y); break;
    case BlockType::q2_k: decode_q2_k(b, y); break;
    case BlockType::q3_k: decode_q3_k(b, y); break;
    case BlockType::q4_k: decode_q4_k(b, y); break;
    case BlockType::q5_k: decode_q5_k(b, y); break;
    case BlockType::q6_k: decode_q6_k(b, y); break;
    case BlockType::q8_k: decode_q8_k(b, y); break;
    case BlockType::f16: decode_f16(b, y); break;
    case BlockType::bf16: decode_bf16(b, y); break;
    case BlockType::iq4_nl: decode_iq4_nl(b, y); break;
    case BlockType::iq4_xs: decode_iq4_xs(b, y); break;
  }
}

}  // namespace rlx::quant
