// dequantize on the device: ggml blocks decoded to f32, one block per thread. The decoders are
// util/quant_blocks.cpp's, bit for bit (ported to device code; keep the two in step).
#include <type_traits>

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

__global__ void dequantize_bf16_kernel(int t, const uint8_t* src, __nv_bfloat16* y, int64_t blocks, int64_t bytes, int64_t elems) {
  float buf[kQK_K];
  RLX_GRID_STRIDE(i, blocks) {
    decode(t, src + i * bytes, buf);
    for (int64_t j = 0; j < elems; ++j) y[i * elems + j] = __float2bfloat16_rn(buf[j]);
  }
}

// ---- dequant_matmul for a few rows (decode): `split` warps per output column n read W's row
// n once between them, straight from its packed bytes, each keeping one sum per row of x.
// Splitting a row over warps keeps enough loads in flight when W has few rows (N = 1024 of
// K = 3072: one warp a row leaves the H200 at a quarter of its read bandwidth).

constexpr int kGemvWarps = 8;  // warps per block: kGemvWarps / split columns
constexpr int kGemvEarly = 4;  // 16-byte weight chunks per lane loaded before x is waited for

// The warps' partial sums of column n → y[m, n] (+ addend[m, n], added to the rounded product
// as the separate add would). GLU: `up` holds the sums of row N + n too, and the column is
// silu(gate) · up, each rounded to y's type as the separate silu and mul would round them.
template <bool GLU, int MR>
__device__ __forceinline__ void store_row_sums(float (&acc)[MR], float (&up)[MR], int M, int64_t N, int64_t n, void* y, bool y_bf16,
                                               const void* addend, int split) {
  __shared__ float part[kGemvWarps][MR], part_up[GLU ? kGemvWarps : 1][MR];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
#pragma unroll
  for (int m = 0; m < MR; ++m) {
    if (m >= M) break;
    acc[m] = warp_sum(acc[m]);
    if constexpr (GLU) up[m] = warp_sum(up[m]);
    if (split > 1 && lane == 0) {
      part[warp][m] = acc[m];
      if constexpr (GLU) part_up[warp][m] = up[m];
    }
  }
  if (split > 1) __syncthreads();  // split is the same for the whole block
  if (lane != 0 || warp % split != 0 || n >= N) return;
#pragma unroll
  for (int m = 0; m < MR; ++m) {  // unrolled: acc stays in registers
    if (m >= M) break;
    float v = acc[m];
    for (int w = 1; w < split; ++w) v += part[warp + w][m];
    if constexpr (GLU) {
      float u = up[m];
      for (int w = 1; w < split; ++w) u += part_up[warp + w][m];
      if (y_bf16) {
        v = round_bf16(v);
        v = round_bf16(round_bf16(v / (1.0f + expf(-v))) * round_bf16(u));
      } else {
        v = v / (1.0f + expf(-v)) * u;
      }
    }
    if (y_bf16) {
      __nv_bfloat16 r = __float2bfloat16_rn(v);
      if (addend) r = __float2bfloat16_rn(__bfloat162float(r) + __bfloat162float(static_cast<const __nv_bfloat16*>(addend)[m * N + n]));
      static_cast<__nv_bfloat16*>(y)[m * N + n] = r;
    } else {
      static_cast<float*>(y)[m * N + n] = addend ? v + static_cast<const float*>(addend)[m * N + n] : v;
    }
  }
}

__device__ __forceinline__ void load8(const float* p, float* v) {
  float4 a = *reinterpret_cast<const float4*>(p), b = *reinterpret_cast<const float4*>(p + 4);
  v[0] = a.x; v[1] = a.y; v[2] = a.z; v[3] = a.w; v[4] = b.x; v[5] = b.y; v[6] = b.z; v[7] = b.w;
}
__device__ __forceinline__ void load8(const __nv_bfloat16* p, float* v) {
  uint4 u = *reinterpret_cast<const uint4*>(p);
  const __nv_bfloat16* h = reinterpret_cast<const __nv_bfloat16*>(&u);
#pragma unroll
  for (int j = 0; j < 8; ++j) v[j] = __bfloat162float(h[j]);
}

// W in bf16 or f16 with K a multiple of 8: 16-byte loads of 8 weights. MR: the rows of x it
// keeps sums for (1 for a decode step: far fewer registers, so more blocks an SM and the gated
// GEMV's 384 blocks in one wave).
// Plain GEMVs keep five blocks an SM (≤ 51 registers): the LM head streams 311 MB through this
// kernel and loses a fifth of its read bandwidth at four.
template <int MR, bool GLU, bool NORM>
constexpr int gemv_blocks_per_sm() {
  if (MR == 1) return GLU ? 3 : 5;
  return GLU ? 1 : NORM ? 4 : 5;
}

template <typename XT, bool WBF16, bool GLU, bool NORM, int MR>
__global__ void __launch_bounds__(kGemvWarps * 32, gemv_blocks_per_sm<MR, GLU, NORM>()) gemv_half_kernel(const XT* __restrict__ x, const uint4* __restrict__ w, void* y, bool y_bf16, int M, int64_t N, int K, bool round_w,
                                 const void* addend, int split, const XT* __restrict__ norm_g, float eps) {
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int64_t n = static_cast<int64_t>(blockIdx.x) * (kGemvWarps / split) + warp / split;
  const uint4* row = w + n * (K / 8);
  const uint4* row_up = GLU ? w + (N + n) * (K / 8) : row;  // GLU: the up projection's row
  const int c0 = (warp % split) * 32 + lane, step = 32 * split, chunks = n < N ? K / 8 : 0;
  // The first weights are in flight before the kernel waits for x (they are constants): with a
  // programmatic launch their loads overlap the kernel before this one.
  uint4 early[kGemvEarly], early_up[GLU ? kGemvEarly : 1];
#pragma unroll
  for (int e = 0; e < kGemvEarly; ++e) {
    early[e] = c0 + e * step < chunks ? __ldg(row + c0 + e * step) : make_uint4(0, 0, 0, 0);
    if constexpr (GLU) early_up[e] = c0 + e * step < chunks ? __ldg(row_up + c0 + e * step) : make_uint4(0, 0, 0, 0);
  }
  RLX_AFTER_PRODUCERS();
  // norm_g: x's rows are rms_norm(x)·g, normalized as they are read (the block takes each row's
  // mean square once)
  __shared__ float inv_rms[MR];
  if constexpr (NORM) {
    __shared__ float part_sq[kGemvWarps][MR];
#pragma unroll
    for (int m = 0; m < MR; ++m) {
      if (m >= M) break;
      float sq = 0;
      for (int k = threadIdx.x; k < K; k += blockDim.x) {
        float v = to_f32(x[static_cast<int64_t>(m) * K + k]);
        sq += v * v;
      }
      sq = warp_sum(sq);
      if (lane == 0) part_sq[warp][m] = sq;
    }
    __syncthreads();
    if (threadIdx.x < M) {
      float t = 0;
      for (int v = 0; v < kGemvWarps; ++v) t += part_sq[v][threadIdx.x];
      inv_rms[threadIdx.x] = rsqrtf(t / static_cast<float>(K) + eps);
    }
    __syncthreads();
  }
  float acc[MR] = {}, acc_up[MR] = {};
  // up_tag: std::true_type for the up row's sums (a compile-time choice keeps both in registers)
  auto chunk = [&](const uint4& u, int c, auto up_tag) {
    float(&sum)[MR] = decltype(up_tag)::value ? acc_up : acc;
    float wf[8];
    if constexpr (WBF16) {
      const __nv_bfloat16* h = reinterpret_cast<const __nv_bfloat16*>(&u);
#pragma unroll
      for (int j = 0; j < 8; ++j) wf[j] = __bfloat162float(h[j]);
    } else {
      const __half* h = reinterpret_cast<const __half*>(&u);
#pragma unroll
      for (int j = 0; j < 8; ++j) wf[j] = round_w ? round_bf16(__half2float(h[j])) : __half2float(h[j]);
    }
#pragma unroll
    for (int m = 0; m < MR; ++m) {
      if (m >= M) break;
      float xv[8];
      load8(x + static_cast<int64_t>(m) * K + c * 8, xv);
      if constexpr (NORM) {  // as the norm kernel computes and stores them: (x · inv_rms) · g in x's type
        float gv[8];
        load8(norm_g + c * 8, gv);
#pragma unroll
        for (int j = 0; j < 8; ++j) xv[j] = to_f32(from_f32<XT>(xv[j] * inv_rms[m] * gv[j]));
      }
#pragma unroll
      for (int j = 0; j < 8; ++j) sum[m] = fmaf(wf[j], xv[j], sum[m]);
    }
  };
#pragma unroll
  for (int e = 0; e < kGemvEarly; ++e)
    if (c0 + e * step < chunks) {
      chunk(early[e], c0 + e * step, std::false_type{});
      if constexpr (GLU) chunk(early_up[e], c0 + e * step, std::true_type{});
    }
#pragma unroll 4
  for (int c = c0 + kGemvEarly * step; c < chunks; c += step) {
    chunk(__ldg(row + c), c, std::false_type{});
    if constexpr (GLU) chunk(__ldg(row_up + c), c, std::true_type{});
  }
  store_row_sums<GLU, MR>(acc, acc_up, M, N, n, y, y_bf16, addend, split);
}

// Any block type: each lane decodes whole blocks of the row.
template <typename XT>
__global__ void gemv_blocks_kernel(int t, const XT* __restrict__ x, const uint8_t* __restrict__ w, void* y, bool y_bf16, int M, int64_t N, int K,
                                   int64_t row_bytes, int bb, int be, bool round_w, const void* addend, int split) {
  RLX_AFTER_PRODUCERS();
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int64_t n = static_cast<int64_t>(blockIdx.x) * (kGemvWarps / split) + warp / split;
  const uint8_t* row = w + n * row_bytes;
  float acc[kGemvMaxRows] = {};
  float buf[kQK_K];
  for (int b = (warp % split) * 32 + lane; n < N && b < K / be; b += 32 * split) {
    if (static_cast<Block>(t) == Block::q8_0) {  // the common one, without the detour through buf
      const uint8_t* q = row + static_cast<int64_t>(b) * bb;
      float d = half_at(q);
      for (int j = 0; j < kQK; ++j) buf[j] = d * static_cast<float>(static_cast<int8_t>(q[2 + j]));
    } else {
      decode(t, row + static_cast<int64_t>(b) * bb, buf);
    }
    if (round_w)
      for (int j = 0; j < be; ++j) buf[j] = round_bf16(buf[j]);
#pragma unroll
    for (int m = 0; m < kGemvMaxRows; ++m) {
      if (m >= M) break;
      const XT* xr = x + static_cast<int64_t>(m) * K + static_cast<int64_t>(b) * be;
      float a = 0;
      for (int j = 0; j < be; ++j) a = fmaf(buf[j], to_f32(xr[j]), a);
      acc[m] += a;
    }
  }
  store_row_sums<false, kGemvMaxRows>(acc, acc, M, N, n, y, y_bf16, addend, split);
}

}  // namespace

void launch_dequantize(int block_type, const void* src, float* y, int64_t blocks, int64_t block_bytes, int64_t block_elems, cudaStream_t s) {
  if (blocks == 0) return;
  dequantize_kernel<<<grid_for(blocks, 128), 128, 0, s>>>(block_type, static_cast<const uint8_t*>(src), y, blocks, block_bytes, block_elems);
}

void launch_dequantize_bf16(int block_type, const void* src, void* y, int64_t blocks, int64_t block_bytes, int64_t block_elems, cudaStream_t s) {
  if (blocks == 0) return;
  dequantize_bf16_kernel<<<grid_for(blocks, 128), 128, 0, s>>>(block_type, static_cast<const uint8_t*>(src), static_cast<__nv_bfloat16*>(y), blocks,
                                                               block_bytes, block_elems);
}

void launch_dequant_gemv(int block_type, Dt xdt, const void* x, const void* w, Dt ydt, void* y, const void* addend, int64_t M, int64_t N, int64_t K, int64_t block_bytes,
                         int64_t block_elems, bool glu, const void* norm_g, float eps, cudaStream_t s) {
  if (M == 0 || N == 0) return;
  Block t = static_cast<Block>(block_type);
  const bool half = (t == Block::bf16 || t == Block::f16) && K % 8 == 0;
  // Warps per column: up to 4096 warps in all (measured on the H200: N = 1024 rows run best split
  // 4 ways, 2048 and 3072 rows whole), while every lane keeps a 16-byte chunk or a block of its own.
  const int64_t chunks = half ? K / 8 : K / block_elems;
  int split = 1;
  while (split < kGemvWarps && N * split * 2 <= 4096 && chunks / (2 * split) >= 32) split *= 2;
  const int kWarps = kGemvWarps / split;  // columns per block
  unsigned grid = static_cast<unsigned>((N + kWarps - 1) / kWarps);
  bool xb = xdt == Dt::bf16, yb = ydt == Dt::bf16;
  // bf16 x multiplies the weights rounded to bf16 (the decomposition's cast), f32 x the exact ones
  bool round_w = xb && t != Block::bf16;
  if (half) {
    const auto* wp = static_cast<const uint4*>(w);
    int m = static_cast<int>(M), k = static_cast<int>(K);
    auto go = [&](auto kernel, const auto* xp) {
      using XT = std::remove_const_t<std::remove_pointer_t<decltype(xp)>>;
      launch_after(kernel, grid, kGemvWarps * 32, 0, s, xp, wp, y, yb, m, N, k, round_w, addend, split, static_cast<const XT*>(norm_g), eps);
    };
    // the kernel for (x type, W type, gated, normed)
    auto pick = [&](auto xtag, auto wbf16, auto gated) {
      using XT = decltype(xtag);
      const auto* xp = static_cast<const XT*>(x);
      constexpr bool W = decltype(wbf16)::value, G = decltype(gated)::value;
      if (m == 1) {
        if (norm_g) go(gemv_half_kernel<XT, W, G, true, 1>, xp);
        else go(gemv_half_kernel<XT, W, G, false, 1>, xp);
      } else {
        if (norm_g) go(gemv_half_kernel<XT, W, G, true, kGemvMaxRows>, xp);
        else go(gemv_half_kernel<XT, W, G, false, kGemvMaxRows>, xp);
      }
    };
    auto by_w = [&](auto xtag, auto gated) {
      if (t == Block::bf16) pick(xtag, std::true_type{}, gated);
      else pick(xtag, std::false_type{}, gated);
    };
    auto by_glu = [&](auto xtag) {
      if (glu) by_w(xtag, std::true_type{});
      else by_w(xtag, std::false_type{});
    };
    if (xb) by_glu(__nv_bfloat16{});
    else by_glu(float{});
    return;
  }
  int64_t row_bytes = K / block_elems * block_bytes;
  const auto* wp = static_cast<const uint8_t*>(w);
  int m = static_cast<int>(M), k = static_cast<int>(K), bb = static_cast<int>(block_bytes), be = static_cast<int>(block_elems);
  if (xb) launch_after(gemv_blocks_kernel<__nv_bfloat16>, grid, kGemvWarps * 32, 0, s, block_type, static_cast<const __nv_bfloat16*>(x), wp, y, yb, m, N, k, row_bytes, bb, be, round_w, addend, split);
  else launch_after(gemv_blocks_kernel<float>, grid, kGemvWarps * 32, 0, s, block_type, static_cast<const float*>(x), wp, y, yb, m, N, k, row_bytes, bb, be, round_w, addend, split);
}

// y[m, n] = silu(p[m, n]) · p[m, N + n] over a [M, 2N] product (in y's dtype), rounded like the
// separate silu and mul.
namespace {
template <class T>
__global__ void glu_kernel(const T* p, T* y, int64_t M, int64_t N) {
  RLX_AFTER_PRODUCERS();
  RLX_GRID_STRIDE(i, M * N) {
    int64_t m = i / N, n = i - m * N;
    float g = to_f32(p[m * 2 * N + n]), u = to_f32(p[m * 2 * N + N + n]);
    float silu = to_f32(from_f32<T>(g / (1.0f + expf(-g))));
    y[i] = from_f32<T>(silu * u);
  }
}
}  // namespace

void launch_glu(Dt dt, const void* p, void* y, int64_t M, int64_t N, cudaStream_t s) {
  if (M * N == 0) return;
  if (dt == Dt::bf16) launch_after(glu_kernel<__nv_bfloat16>, grid_for(M * N), kThreads, 0, s, static_cast<const __nv_bfloat16*>(p), static_cast<__nv_bfloat16*>(y), M, N);
  else launch_after(glu_kernel<float>, grid_for(M * N), kThreads, 0, s, static_cast<const float*>(p), static_cast<float*>(y), M, N);
}

}  // namespace rlx::backends::cuda
