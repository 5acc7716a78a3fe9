// dequantize on the device: ggml blocks decoded to f32, one block per thread. The decoders are
// util/quant_blocks.cpp's, bit for bit (ported to device code; keep the two in step).
#include "backends/cuda/common.cuh"

namespace rlx::backends::cuda {

namespace {

constexpr int kQK = 32;    // elements in a Q4_0 … Q8_0 block
constexpr int kQK_K = 256; // elements in a K-quant super-block

__device__ float half_at(const uint8_t* p) {
  uint16_t h;
  memcpy(&h, p, 2);
  return __half2float(__ushort_as_half(h));
}

// block_q4_0 { half d; u8 qs[16]; }: element j is the low nibble of qs[j], j+16 the high one.
__device__ void q4_0(const uint8_t* b, float* y) {
  float d = half_at(b);
  const uint8_t* qs = b + 2;
  for (int j = 0; j < kQK / 2; ++j) {
    y[j] = static_cast<float>((qs[j] & 0x0f) - 8) * d;
    y[j + kQK / 2] = static_cast<float>((qs[j] >> 4) - 8) * d;
  }
}

// block_q4_1 { half d; half m; u8 qs[16]; }
__device__ void q4_1(const uint8_t* b, float* y) {
  float d = half_at(b), m = half_at(b + 2);
  const uint8_t* qs = b + 4;
  for (int j = 0; j < kQK / 2; ++j) {
    y[j] = static_cast<float>(qs[j] & 0x0f) * d + m;
    y[j + kQK / 2] = static_cast<float>(qs[j] >> 4) * d + m;
  }
}

// block_q5_0 { half d; u8 qh[4]; u8 qs[16]; }: qh bit j is the fifth bit of element j.
__device__ void q5_0(const uint8_t* b, float* y) {
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
__device__ void q5_1(const uint8_t* b, float* y) {
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
__device__ void q8_0(const uint8_t* b, float* y) {
  float d = half_at(b);
  for (int j = 0; j < kQK; ++j) y[j] = static_cast<float>(static_cast<int8_t>(b[2 + j])) * d;
}

// block_q2_K { u8 scales[16]; u8 qs[64]; half d; half dmin; }: 16 groups of 16; each scales
// byte holds a 4-bit scale (low) and 4-bit min (high); 2-bit quants, 4 per byte, where byte l
// of a 32-byte run holds groups at shifts 0, 2, 4, 6.
__device__ void q2_k(const uint8_t* b, float* y) {
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
__device__ void q3_k(const uint8_t* b, float* y) {
  const uint8_t* hm = b;
  const uint8_t* q = b + 32;
  const uint8_t* s = b + 96;
  float d_all = half_at(b + 108);
  int scale[16];
  for (int i = 0; i < 16; ++i) {
    int low = i < 8 ? (s[i] & 0x0f) : (s[i - 8] >> 4);
    int high = (s[8 + i % 4] >> (2 * (i / 4))) & 3;
    scale[i] = (low | (high << 4)) - 32;
  }
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
__device__ void scale_min_k4(int j, const uint8_t* q, int* sc, int* mn) {
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
__device__ void q4_k(const uint8_t* b, float* y) {
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
__device__ void q5_k(const uint8_t* b, float* y) {
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
__device__ void q6_k(const uint8_t* b, float* y) {
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
__device__ void q8_k(const uint8_t* b, float* y) {
  float d;
  memcpy(&d, b, 4);
  for (int j = 0; j < kQK_K; ++j) y[j] = d * static_cast<float>(static_cast<int8_t>(b[4 + j]));
}

__device__ void f16(const uint8_t* b, float* y) { *y = half_at(b); }

__device__ void bf16(const uint8_t* b, float* y) {
  uint16_t h;
  memcpy(&h, b, 2);
  *y = __bfloat162float(__ushort_as_bfloat16(h));
}

// The order of quant::BlockType (util/quant_blocks.h).
enum class Block : int { q4_0, q4_1, q5_0, q5_1, q8_0, q2_k, q3_k, q4_k, q5_k, q6_k, q8_k, f16, bf16 };

__device__ __forceinline__ void decode(int t, const uint8_t* b, float* y) {
  switch (static_cast<Block>(t)) {
    case Block::q4_0: q4_0(b, y); break;
    case Block::q4_1: q4_1(b, y); break;
    case Block::q5_0: q5_0(b, y); break;
    case Block::q5_1: q5_1(b, y); break;
    case Block::q8_0: q8_0(b, y); break;
    case Block::q2_k: q2_k(b, y); break;
    case Block::q3_k: q3_k(b, y); break;
    case Block::q4_k: q4_k(b, y); break;
    case Block::q5_k: q5_k(b, y); break;
    case Block::q6_k: q6_k(b, y); break;
    case Block::q8_k: q8_k(b, y); break;
    case Block::f16: f16(b, y); break;
    default: bf16(b, y); break;
  }
}

__global__ void dequantize_kernel(int t, const uint8_t* src, float* y, int64_t blocks, int64_t bytes, int64_t elems) {
  RLX_GRID_STRIDE(i, blocks) decode(t, src + i * bytes, y + i * elems);
}

}  // namespace

void launch_dequantize(int block_type, const void* src, float* y, int64_t blocks, int64_t block_bytes, int64_t block_elems, cudaStream_t s) {
  if (blocks == 0) return;
  dequantize_kernel<<<grid_for(blocks, 128), 128, 0, s>>>(block_type, static_cast<const uint8_t*>(src), y, blocks, block_bytes, block_elems);
}

}  // namespace rlx::backends::cuda
