// Fused attention with an online softmax (flash-style, f32 math): a block holds up to 8 query
// rows of one (batch, head), one warp per row, and walks the keys in tiles of 32 staged in
// shared memory. Each lane scores one key of a tile; the probabilities are broadcast by
// shuffles and each lane accumulates its slice of the output row. Scores, masks, softcap and
// bias never touch device memory.
#include "backends/cuda/common.cuh"

namespace rlx::backends::cuda {

namespace {

constexpr int kTile = 32, kMaxRows = 8;

// SL: 32-wide slices of the output row each lane accumulates (⌈Dv / 32⌉, rounded up to 1, 2, 4, 8)
template <class T, int SL>
__global__ void attention_kernel(const T* q, const T* k, const T* v, const void* bias, Dt bias_dt, T* y, const __grid_constant__ AttentionSpec a) {
  extern __shared__ float smem[];
  const int rows = blockDim.x / 32, warp = threadIdx.x / 32, lane = threadIdx.x & 31;
  const int64_t D = a.D, Dv = a.Dv;
  float* qs = smem;                      // [rows][D]
  float* ks = qs + rows * D;             // [kTile][D + 1]
  float* vs = ks + kTile * (D + 1);      // [kTile][Dv]
  const int64_t b = blockIdx.z, h = blockIdx.y, hk = h / (a.H / a.Hk);
  const int64_t i0 = static_cast<int64_t>(blockIdx.x) * rows, i = i0 + warp;
  const bool active = i < a.Sq;
  auto rnd = [&](float x) { return a.round_bf16 ? round_bf16(x) : a.round_f16 ? round_f16(x) : x; };

  for (int e = threadIdx.x; e < rows * D; e += blockDim.x) {
    int r = e / static_cast<int>(D), d = e % static_cast<int>(D);
    qs[e] = i0 + r < a.Sq ? rnd(to_f32(q[b * a.q_b + h * a.q_h + (i0 + r) * a.q_s + d])) : 0.0f;
  }
  // the key range this block needs: the union of its rows' ranges
  int64_t last_row = min(i0 + rows, a.Sq) - 1;
  int64_t pos_first = i0 + a.Sk - a.Sq, pos_last = last_row + a.Sk - a.Sq;
  int64_t j_begin = 0, j_end = a.Sk;
  if (a.mask == 1 || a.mask == 2) j_end = min(a.Sk, pos_last + 1);
  if (a.mask == 2) j_begin = max(int64_t{0}, pos_first - a.window + 1);
  const int64_t pos = i + a.Sk - a.Sq;
  int64_t lo = 0, hi = a.Sk;
  if (a.mask == 1 || a.mask == 2) hi = min(a.Sk, pos + 1);
  if (a.mask == 2) lo = max(int64_t{0}, pos - a.window + 1);

  float m = -INFINITY, l = 0;
  float acc[SL];
#pragma unroll
  for (int t = 0; t < SL; ++t) acc[t] = 0;

  for (int64_t c0 = j_begin - (j_begin % kTile); c0 < j_end; c0 += kTile) {
    __syncthreads();
#pragma unroll 8
    for (int e = threadIdx.x; e < kTile * D; e += blockDim.x) {
      int r = e / static_cast<int>(D), d = e % static_cast<int>(D);
      int64_t j = c0 + r;
      ks[r * (D + 1) + d] = j < a.Sk ? rnd(to_f32(k[b * a.k_b + hk * a.k_h + j * a.k_s + d])) : 0.0f;
    }
#pragma unroll 8
    for (int e = threadIdx.x; e < kTile * Dv; e += blockDim.x) {
      int r = e / static_cast<int>(Dv), d = e % static_cast<int>(Dv);
      int64_t j = c0 + r;
      vs[e] = j < a.Sk ? rnd(to_f32(v[b * a.v_b + hk * a.v_h + j * a.v_s + d])) : 0.0f;
    }
    __syncthreads();
    if (!active) continue;
    const int64_t j = c0 + lane;
    float s = -INFINITY;
    if (j >= lo && j < hi) {
      const float* qr = qs + warp * D;
      const float* kr = ks + lane * (D + 1);
      float dot = 0;
      for (int64_t d = 0; d < D; ++d) dot = fmaf(qr[d], kr[d], dot);
      s = dot * a.scale;
      if (a.softcap > 0) s = a.softcap * tanhf(s / a.softcap);
      if (bias) s += static_cast<float>(load_f64(bias, bias_dt, b * a.bias_s[0] + h * a.bias_s[1] + i * a.bias_s[2] + j * a.bias_s[3]));
    }
    float m_new = fmaxf(m, warp_max(s));
    if (m_new == -INFINITY) continue;  // nothing allowed yet
    float p = s == -INFINITY ? 0.0f : __expf(s - m_new);
    float corr = m == -INFINITY ? 0.0f : __expf(m - m_new);
    l = l * corr + warp_sum(p);
    m = m_new;
    float pr = rnd(p);
#pragma unroll
    for (int t = 0; t < SL; ++t) acc[t] *= corr;
    for (int jj = 0; jj < kTile; ++jj) {
      float pj = __shfl_sync(0xffffffffu, pr, jj);
      if (pj == 0.0f) continue;  // uniform across the warp
      const float* vr = vs + jj * Dv;
#pragma unroll
      for (int t = 0; t < SL; ++t) {
        int64_t d = t * 32 + lane;
        if (d < Dv) acc[t] = fmaf(pj, vr[d], acc[t]);
      }
    }
  }
  if (!active) return;
  // a row with no allowed key is NaN, like the definition's softmax over nothing
  float inv = l > 0 ? 1.0f / l : __int_as_float(0x7fc00000);
#pragma unroll
  for (int t = 0; t < SL; ++t) {
    int64_t d = t * 32 + lane;
    if (d < Dv) store_as(y, b * a.y_b + h * a.y_h + i * a.y_s + d, acc[t] * inv, a.y_dt);
  }
}

template <class T, int SL>
void launch_sl(const void* q, const void* k, const void* v, const void* bias, Dt bias_dt, void* y, const AttentionSpec& a, cudaStream_t s) {
  int rows = static_cast<int>(a.Sq < kMaxRows ? a.Sq : kMaxRows);
  size_t smem = sizeof(float) * static_cast<size_t>(rows * a.D + kTile * (a.D + 1) + kTile * a.Dv);
  static bool raised = false;  // more than 48 KB of shared memory must be asked for once
  if (!raised) {
    cudaFuncSetAttribute(attention_kernel<T, SL>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                         static_cast<int>(sizeof(float) * (kMaxRows * kMaxHeadDim + kTile * (kMaxHeadDim + 1) + kTile * kMaxHeadDim)));
    raised = true;
  }
  dim3 grid(static_cast<unsigned>((a.Sq + rows - 1) / rows), static_cast<unsigned>(a.H), static_cast<unsigned>(a.B));
  attention_kernel<T, SL><<<grid, rows * 32, smem, s>>>(static_cast<const T*>(q), static_cast<const T*>(k), static_cast<const T*>(v), bias,
                                                        bias_dt, static_cast<T*>(y), a);
}

template <class T>
void launch_typed(const void* q, const void* k, const void* v, const void* bias, Dt bias_dt, void* y, const AttentionSpec& a, cudaStream_t s) {
  if (a.Dv <= 32) launch_sl<T, 1>(q, k, v, bias, bias_dt, y, a, s);
  else if (a.Dv <= 64) launch_sl<T, 2>(q, k, v, bias, bias_dt, y, a, s);
  else if (a.Dv <= 128) launch_sl<T, 4>(q, k, v, bias, bias_dt, y, a, s);
  else launch_sl<T, 8>(q, k, v, bias, bias_dt, y, a, s);
}

}  // namespace

void launch_attention(Dt dt, const void* q, const void* k, const void* v, const void* bias, Dt bias_dt, void* y, const AttentionSpec& a,
                      void* scratch, cudaStream_t s) {
  if (a.B * a.H * a.Sq == 0) return;
  if (attention_uses_decode(a)) {
    launch_attention_decode(dt, q, k, v, bias, bias_dt, y, a, s);
    return;
  }
  if (launch_attention_mma(dt, q, k, v, bias, bias_dt, y, a, scratch, s)) return;
  switch (dt) {
    case Dt::f16: launch_typed<__half>(q, k, v, bias, bias_dt, y, a, s); break;
    case Dt::bf16: launch_typed<__nv_bfloat16>(q, k, v, bias, bias_dt, y, a, s); break;
    default: launch_typed<float>(q, k, v, bias, bias_dt, y, a, s); break;
  }
}

}  // namespace rlx::backends::cuda
