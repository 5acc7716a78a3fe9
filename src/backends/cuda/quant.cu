// dequantize on the device: ggml blocks decoded to f32, one block per thread, by the decoders the
// host uses too (util/gguf_blocks.h, compiled here for the device).
#include <type_traits>

#include "backends/cuda/common.cuh"
#include "backends/cuda/gemv_tile.cuh"
#include "util/gguf_blocks.h"

namespace rlx::backends::cuda {

namespace {

using quant::BlockType;
using quant::kQK_K;
// The order of quant::BlockType (util/quant_blocks.h), as the launchers receive it.
using Block = BlockType;

__device__ __forceinline__ void decode(int t, const uint8_t* b, float* y) { quant::decode_block(static_cast<BlockType>(t), b, y); }

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

// ---- dequant_matmul for a few rows (decode): a tile of gemv_tile.cuh a block.

template <typename XT, bool WBF16, bool GLU, bool NORM, int MR>
__global__ void __launch_bounds__(kGemvWarps * 32, gemv_blocks_per_sm<MR, GLU, NORM>()) gemv_half_kernel(const XT* __restrict__ x, const uint4* __restrict__ w, void* y, bool y_bf16, int M, int64_t N, int K, bool round_w,
                                 const void* addend, int split, const XT* __restrict__ norm_g, float eps) {
  gemv_half_tile<XT, WBF16, GLU, NORM, MR>(blockIdx.x, x, w, y, y_bf16, M, N, K, round_w, addend, split, norm_g, eps, [] { RLX_AFTER_PRODUCERS(); });
}

template <typename XT>
__global__ void gemv_blocks_kernel(int t, const XT* __restrict__ x, const uint8_t* __restrict__ w, void* y, bool y_bf16, int M, int64_t N, int K,
                                   int64_t row_bytes, int bb, int be, bool round_w, const void* addend, int split) {
  gemv_blocks_tile<XT>(blockIdx.x, t, x, w, y, y_bf16, M, N, K, row_bytes, bb, be, round_w, addend, split, [] { RLX_AFTER_PRODUCERS(); });
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

int gemv_split(int64_t N, int64_t chunks) {
  int split = 1;
  while (split < kGemvWarps && N * split * 2 <= 4096 && chunks / (2 * split) >= 32) split *= 2;
  return split;
}

void launch_dequant_gemv(int block_type, Dt xdt, const void* x, const void* w, Dt ydt, void* y, const void* addend, int64_t M, int64_t N, int64_t K, int64_t block_bytes,
                         int64_t block_elems, bool glu, const void* norm_g, float eps, cudaStream_t s) {
  if (M == 0 || N == 0) return;
  Block t = static_cast<Block>(block_type);
  const bool half = (t == Block::bf16 || t == Block::f16) && K % 8 == 0;
  // Warps per column: up to 4096 warps in all (measured on the H200: N = 1024 rows run best split
  // 4 ways, 2048 and 3072 rows whole), while every lane keeps a 16-byte chunk or a block of its own.
  const int64_t chunks = half ? K / 8 : K / block_elems;
  const int split = gemv_split(N, chunks);
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
