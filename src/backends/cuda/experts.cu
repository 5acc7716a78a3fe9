// expert_matmul on the device: one warp per (choice, output row), reading the chosen expert's
// row of W once — straight from its packed blocks or f32 values — with x's row, and reducing
// across the warp. A decode step's T·A choices each stream their expert's matrix once (what a
// dense layer's GEMV does with its one matrix); prefill re-reads an expert's rows for each of
// its tokens, mostly from L2.
#include <type_traits>

#include "backends/cuda/common.cuh"
#include "util/gguf_blocks.h"

namespace rlx::backends::cuda {

namespace {

constexpr int kWarps = 8;  // output rows per block

// t < 0: W is f32 [E, N, K]; else packed rows of `row_bytes` bytes of type t. bf16 x (XT)
// multiplies the weights rounded to bf16, as the op defines.
template <typename XT>
__global__ void expert_matmul_kernel(int t, const XT* __restrict__ x, bool per_choice, const int64_t* __restrict__ idx,
                                     const uint8_t* __restrict__ w, float* __restrict__ y, int64_t E, int64_t A, int64_t N, int64_t K,
                                     int64_t row_bytes, int bb, int be, ErrorWord* err, int node) {
  RLX_AFTER_PRODUCERS();
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int64_t n = static_cast<int64_t>(blockIdx.y) * kWarps + warp;
  const int64_t c = blockIdx.x;  // the choice: token c / A, its (c % A)-th expert
  if (n >= N) return;
  const int64_t e = idx[c];
  if (e < 0 || e >= E) {
    if (lane == 0) {
      report_index_error(err, node, e, E);
      y[c * N + n] = 0.0f;
    }
    return;
  }
  const XT* xr = x + (per_choice ? c : c / A) * K;
  constexpr bool kRound = !std::is_same<XT, float>::value;
  float acc = 0;
  if (t < 0) {
    const float* row = reinterpret_cast<const float*>(w) + (e * N + n) * K;
    for (int64_t k = lane; k < K; k += 32) {
      float wv = __ldg(row + k);
      acc = fmaf(kRound ? round_bf16(wv) : wv, to_f32(xr[k]), acc);
    }
  } else {
    const uint8_t* row = w + (e * N + n) * row_bytes;
    float buf[quant::kQK_K];
    for (int64_t b = lane; b < K / be; b += 32) {
      if (static_cast<quant::BlockType>(t) == quant::BlockType::q8_0) quant::decode_q8_0(row + b * bb, buf);
      else quant::decode_block(static_cast<quant::BlockType>(t), row + b * bb, buf);
      const XT* xb = xr + b * be;
      for (int j = 0; j < be; ++j) acc = fmaf(kRound ? round_bf16(buf[j]) : buf[j], to_f32(xb[j]), acc);
    }
  }
  for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
  if (lane == 0) y[c * N + n] = acc;
}

}  // namespace

void launch_expert_matmul(int block_type, const void* x, bool x_bf16, bool per_choice, const int64_t* idx, const void* w, float* y, int64_t E, int64_t choices,
                          int64_t A, int64_t N, int64_t K, int64_t block_bytes, int64_t block_elems, ErrorWord* err, int node, cudaStream_t s) {
  if (choices == 0 || N == 0) return;
  dim3 grid(static_cast<unsigned>(choices), static_cast<unsigned>((N + kWarps - 1) / kWarps));
  int64_t row_bytes = block_type < 0 ? K * 4 : K / block_elems * block_bytes;
  auto go = [&](auto kernel, const auto* xp) {
    launch_after(kernel, grid, kWarps * 32, 0, s, block_type, xp, per_choice, idx, static_cast<const uint8_t*>(w), y, E, A, N, K, row_bytes,
                 static_cast<int>(block_bytes), static_cast<int>(block_elems), err, node);
  };
  if (x_bf16) go(expert_matmul_kernel<__nv_bfloat16>, static_cast<const __nv_bfloat16*>(x));
  else go(expert_matmul_kernel<float>, static_cast<const float*>(x));
}

}  // namespace rlx::backends::cuda
