// The decode GEMV's tiles: one block's share of dequant_matmul for a few rows of x — the
// columns `tile` covers, read straight from W's packed rows. quant.cu's kernels run a tile a
// block; the decode megakernel (megakernel.cu) runs the same tiles, so both compute the same
// bits.
#pragma once
#include <type_traits>

#include "backends/cuda/common.cuh"
#include "util/gguf_blocks.h"

namespace rlx::backends::cuda {

// ---- dequant_matmul for a few rows (decode): `split` warps per output column n read W's row
// n once between them, straight from its packed bytes, each keeping one sum per row of x.
// Splitting a row over warps keeps enough loads in flight when W has few rows (N = 1024 of
// K = 3072: one warp a row leaves the H200 at a quarter of its read bandwidth).

constexpr int kGemvWarps = kGemvWarpsPerBlock;  // warps per block: kGemvWarps / split columns
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

// `tile`: which kGemvWarps / split columns (blockIdx.x of the kernel); `wait()` is called once
// the first weights are in flight, before x is read.
template <typename XT, bool WBF16, bool GLU, bool NORM, int MR, class Wait>
__device__ __forceinline__ void gemv_half_tile(int64_t tile, const XT* x, const uint4* w, void* y, bool y_bf16, int M, int64_t N, int K, bool round_w,
                                               const void* addend, int split, const XT* norm_g, float eps, Wait wait) {
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int64_t n = tile * (kGemvWarps / split) + warp / split;
  const uint4* row = w + n * (K / 8);
  const uint4* row_up = GLU ? w + (N + n) * (K / 8) : row;  // GLU: the up projection's row
  const int c0 = (warp % split) * 32 + lane, step = 32 * split, chunks = n < N ? K / 8 : 0;
  // The first weights are in flight before the tile waits for x (they are constants): with a
  // programmatic launch their loads overlap the kernel before this one; in the megakernel, the
  // op before this one.
  uint4 early[kGemvEarly], early_up[GLU ? kGemvEarly : 1];
#pragma unroll
  for (int e = 0; e < kGemvEarly; ++e) {
    early[e] = c0 + e * step < chunks ? __ldg(row + c0 + e * step) : make_uint4(0, 0, 0, 0);
    if constexpr (GLU) early_up[e] = c0 + e * step < chunks ? __ldg(row_up + c0 + e * step) : make_uint4(0, 0, 0, 0);
  }
  wait();
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
template <typename XT, class Wait>
__device__ __forceinline__ void gemv_blocks_tile(int64_t tile, int t, const XT* x, const uint8_t* w, void* y, bool y_bf16, int M, int64_t N, int K,
                                                 int64_t row_bytes, int bb, int be, bool round_w, const void* addend, int split, Wait wait) {
  wait();
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int64_t n = tile * (kGemvWarps / split) + warp / split;
  const uint8_t* row = w + n * row_bytes;
  float acc[kGemvMaxRows] = {};
  float buf[quant::kQK_K];
  for (int b = (warp % split) * 32 + lane; n < N && b < K / be; b += 32 * split) {
    if (static_cast<quant::BlockType>(t) == quant::BlockType::q8_0) quant::decode_q8_0(row + static_cast<int64_t>(b) * bb, buf);  // the common one, inlined
    else quant::decode_block(static_cast<quant::BlockType>(t), row + static_cast<int64_t>(b) * bb, buf);
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

}  // namespace rlx::backends::cuda
