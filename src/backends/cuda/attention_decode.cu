// Attention for decode: a few query rows (Sq ≤ kDecodeMaxRows) over a long cache of keys.
//
// On sm_90 a cluster of up to 8 blocks shares each (row, head): every block scores its own share
// of the keys with an online softmax over its warps, and the first block of the cluster merges
// the blocks' partial results through distributed shared memory. A decode step's attention is
// otherwise 16 heads on 16 SMs, each warp walking a long chain of dependent loads, shuffles and
// exponentials (ncu on the H200: 9 µs with 0.18 instructions issued per scheduler cycle).
// Elsewhere one block per (row, head) splits the keys over its warps.
//
// Each lane holds a 32-strided slice of q, of the key and value rows and of the output; a warp
// loads kDecodeKeys keys (their values and bias entries too) before it uses any of them.
#include <cooperative_groups.h>

#include "backends/cuda/common.cuh"

namespace rlx::backends::cuda {

namespace {

constexpr int kDecodeWarps = 16, kDecodeKeys = 4, kDecodeMaxRows = 4;
constexpr int kClusterWarps = 8, kMaxCluster = 8;

// One warp's online softmax over keys j0, j0 + stride, … (kDecodeKeys at a time) of [lo, hi).
template <class T, int SD, int SV>
struct DecodeWarp {
  float qv[SD];
  float m = -INFINITY, l = 0;
  float acc[SV];

  __device__ void run(const T* q, const T* kb, const T* vb, const void* bias, Dt bias_dt, int64_t bias_row, const AttentionSpec& a,
                      int64_t j0, int64_t stride, int64_t hi) {
    // the rounding of compute=bf16/f16 decided once, not per element (the common f32 path
    // then carries no per-element selects)
    if (a.round_bf16 || a.round_f16) walk<true>(q, kb, vb, bias, bias_dt, bias_row, a, j0, stride, hi);
    else walk<false>(q, kb, vb, bias, bias_dt, bias_row, a, j0, stride, hi);
  }

  template <bool ROUND>
  __device__ __forceinline__ void walk(const T* q, const T* kb, const T* vb, const void* bias, Dt bias_dt, int64_t bias_row, const AttentionSpec& a,
                                       int64_t j0, int64_t stride, int64_t hi) {
    const int lane = threadIdx.x & 31;
    const int D = static_cast<int>(a.D), Dv = static_cast<int>(a.Dv);
    auto rnd = [&](float x) {
      if constexpr (ROUND) return a.round_bf16 ? round_bf16(x) : round_f16(x);
      else return x;
    };
    const float* bias_f32 = bias_dt == Dt::f32 ? static_cast<const float*>(bias) : nullptr;
#pragma unroll
    for (int t = 0; t < SD; ++t) {
      int d = t * 32 + lane;
      qv[t] = d < D ? rnd(to_f32(q[d])) : 0.0f;
    }
#pragma unroll
    for (int t = 0; t < SV; ++t) acc[t] = 0;
    for (; j0 < hi; j0 += stride) {
      float kv[kDecodeKeys][SD], vv[kDecodeKeys][SV], bv[kDecodeKeys];
#pragma unroll
      for (int u = 0; u < kDecodeKeys; ++u) {
        const int64_t j = j0 + u;
        const bool ok = j < hi;
        const T* kr = kb + j * a.k_s;  // one 64-bit offset a key; the lanes' are 32-bit
        const T* vr = vb + j * a.v_s;
#pragma unroll
        for (int t = 0; t < SD; ++t) {
          int d = t * 32 + lane;
          kv[u][t] = ok && d < D ? to_f32(kr[d]) : 0.0f;
        }
#pragma unroll
        for (int t = 0; t < SV; ++t) {
          int d = t * 32 + lane;
          vv[u][t] = ok && d < Dv ? to_f32(vr[d]) : 0.0f;
        }
        const int64_t bi = bias_row + j * a.bias_s[3];
        bv[u] = !ok || !bias ? 0.0f : bias_f32 ? bias_f32[bi] : static_cast<float>(load_f64(bias, bias_dt, bi));
      }
      float sc[kDecodeKeys], mx = m;
#pragma unroll
      for (int u = 0; u < kDecodeKeys; ++u) {
        float dot = 0;
#pragma unroll
        for (int t = 0; t < SD; ++t) dot = fmaf(qv[t], rnd(kv[u][t]), dot);
        sc[u] = dot;
      }
#pragma unroll
      for (int u = 0; u < kDecodeKeys; ++u) sc[u] = warp_sum(sc[u]);
#pragma unroll
      for (int u = 0; u < kDecodeKeys; ++u) {
        float s = -INFINITY;
        if (j0 + u < hi) {
          s = sc[u] * a.scale;
          if (a.softcap > 0) s = a.softcap * tanhf(s / a.softcap);
          s += bv[u];
        }
        sc[u] = s;
        mx = fmaxf(mx, s);
      }
      if (mx == -INFINITY) continue;  // nothing allowed yet
      float corr = m == -INFINITY ? 0.0f : __expf(m - mx);
      l *= corr;
#pragma unroll
      for (int t = 0; t < SV; ++t) acc[t] *= corr;
#pragma unroll
      for (int u = 0; u < kDecodeKeys; ++u) {
        float p = sc[u] == -INFINITY ? 0.0f : __expf(sc[u] - mx);
        l += p;
        float pr = rnd(p);
#pragma unroll
        for (int t = 0; t < SV; ++t) acc[t] = fmaf(pr, rnd(vv[u][t]), acc[t]);
      }
      m = mx;
    }
  }
};

// The keys row i of the query may see.
__device__ __forceinline__ void key_range(const AttentionSpec& a, int64_t i, int64_t& lo, int64_t& hi) {
  const int64_t pos = i + a.Sk - a.Sq;
  lo = 0;
  hi = a.Sk;
  if (a.mask == 1 || a.mask == 2) hi = min(a.Sk, pos + 1);
  if (a.mask == 2) lo = max(int64_t{0}, pos - a.window + 1);
}

// Every warp's (m, l, acc) through shared memory → this block's merged (m, l) and acc[Dv] in `o`.
template <class Warp, int W, int Lanes>
__device__ void merge_warps(const Warp& w, float (&sm)[W], float (&sl)[W], float (&sacc)[W][Lanes], int64_t Dv, float* om, float* ol, float* oacc) {
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  if (lane == 0) {
    sm[warp] = w.m;
    sl[warp] = w.l;
  }
#pragma unroll
  for (int t = 0; t < Lanes / 32; ++t) sacc[warp][t * 32 + lane] = w.acc[t];
  __syncthreads();
  float M = -INFINITY;
  for (int w = 0; w < W; ++w) M = fmaxf(M, sm[w]);
  for (int64_t d = threadIdx.x; d < Dv; d += blockDim.x) {
    float o = 0;
    if (M != -INFINITY)
      for (int w = 0; w < W; ++w)
        if (sm[w] != -INFINITY) o += __expf(sm[w] - M) * sacc[w][d];
    oacc[d] = o;
  }
  if (threadIdx.x == 0) {
    float L = 0;
    if (M != -INFINITY)
      for (int w = 0; w < W; ++w)
        if (sm[w] != -INFINITY) L += __expf(sm[w] - M) * sl[w];
    *om = M;
    *ol = L;
  }
}

// One block per (row, head, batch); its warps split the keys.
template <class T, int SD, int SV>
__global__ void attention_decode_kernel(const T* q, const T* k, const T* v, const void* bias, Dt bias_dt, T* y, const __grid_constant__ AttentionSpec a) {
  RLX_AFTER_PRODUCERS();
  __shared__ float sm[kDecodeWarps], sl[kDecodeWarps];
  __shared__ float sacc[kDecodeWarps][SV * 32];
  __shared__ float bm, bl, bacc[SV * 32];
  const int warp = threadIdx.x >> 5;
  const int64_t i = blockIdx.x, h = blockIdx.y, b = blockIdx.z, hk = h / (a.H / a.Hk);
  int64_t lo, hi;
  key_range(a, i, lo, hi);
  DecodeWarp<T, SD, SV> w;
  w.run(q + b * a.q_b + h * a.q_h + i * a.q_s, k + b * a.k_b + hk * a.k_h, v + b * a.v_b + hk * a.v_h, bias, bias_dt,
        b * a.bias_s[0] + h * a.bias_s[1] + i * a.bias_s[2], a, lo + warp * kDecodeKeys, kDecodeWarps * kDecodeKeys, hi);
  merge_warps(w, sm, sl, sacc, a.Dv, &bm, &bl, bacc);
  __syncthreads();
  // a row with no allowed key is NaN, like the definition's softmax over nothing
  for (int64_t d = threadIdx.x; d < a.Dv; d += blockDim.x) store_as(y, b * a.y_b + h * a.y_h + i * a.y_s + d, bl > 0 ? bacc[d] / bl : __int_as_float(0x7fc00000), a.y_dt);
}

// A cluster of blockDim.x blocks per (row, head, batch): grid (cluster, H, B·Sq).
template <class T, int SD, int SV>
__global__ void __launch_bounds__(kClusterWarps * 32) attention_decode_cluster_kernel(const T* q, const T* k, const T* v, const void* bias, Dt bias_dt, T* y,
                                                                                     const __grid_constant__ AttentionSpec a) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  RLX_AFTER_PRODUCERS();
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  __shared__ float sm[kClusterWarps], sl[kClusterWarps];
  __shared__ float sacc[kClusterWarps][SV * 32];
  __shared__ float bm, bl, bacc[SV * 32];  // this block's share, read by the cluster's first block
  const int warp = threadIdx.x >> 5;
  const int rank = static_cast<int>(cluster.block_rank()), blocks = static_cast<int>(cluster.num_blocks());
  const int64_t h = blockIdx.y, b = blockIdx.z / a.Sq, i = blockIdx.z % a.Sq, hk = h / (a.H / a.Hk);
  int64_t lo, hi;
  key_range(a, i, lo, hi);
  DecodeWarp<T, SD, SV> w;
  const int gw = rank * kClusterWarps + warp;  // the warp's place in the cluster
  w.run(q + b * a.q_b + h * a.q_h + i * a.q_s, k + b * a.k_b + hk * a.k_h, v + b * a.v_b + hk * a.v_h, bias, bias_dt,
        b * a.bias_s[0] + h * a.bias_s[1] + i * a.bias_s[2], a, lo + gw * kDecodeKeys, int64_t{blocks} * kClusterWarps * kDecodeKeys, hi);
  merge_warps(w, sm, sl, sacc, a.Dv, &bm, &bl, bacc);
  cluster.sync();  // every block's share is ready
  if (rank == 0) {
    float M = -INFINITY;
    for (int r = 0; r < blocks; ++r) M = fmaxf(M, *cluster.map_shared_rank(&bm, r));
    float L = 0;
    if (M != -INFINITY)
      for (int r = 0; r < blocks; ++r) {
        float mr = *cluster.map_shared_rank(&bm, r);
        if (mr != -INFINITY) L += __expf(mr - M) * *cluster.map_shared_rank(&bl, r);
      }
    for (int64_t d = threadIdx.x; d < a.Dv; d += blockDim.x) {
      float o = 0;
      if (M != -INFINITY)
        for (int r = 0; r < blocks; ++r) {
          float mr = *cluster.map_shared_rank(&bm, r);
          if (mr != -INFINITY) o += __expf(mr - M) * cluster.map_shared_rank(bacc, r)[d];
        }
      // a row with no allowed key is NaN, like the definition's softmax over nothing
      store_as(y, b * a.y_b + h * a.y_h + i * a.y_s + d, L > 0 ? o / L : __int_as_float(0x7fc00000), a.y_dt);
    }
  }
  cluster.sync();  // the first block is done reading the others' shared memory
#endif
}

template <class T, int SD, int SV>
void launch_sd_sv(const void* q, const void* k, const void* v, const void* bias, Dt bias_dt, void* y, const AttentionSpec& a, cudaStream_t s) {
  const T* qp = static_cast<const T*>(q);
  const T* kp = static_cast<const T*>(k);
  const T* vp = static_cast<const T*>(v);
  T* yp = static_cast<T*>(y);
  if (a.cluster > 1) {
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(static_cast<unsigned>(a.cluster), static_cast<unsigned>(a.H), static_cast<unsigned>(a.B * a.Sq));
    cfg.blockDim = dim3(kClusterWarps * 32);
    cfg.stream = s;
    cudaLaunchAttribute attr[2];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = static_cast<unsigned>(a.cluster);
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.numAttrs = 1;
    dependent_launch(cfg, attr);
    cudaLaunchKernelEx(&cfg, attention_decode_cluster_kernel<T, SD, SV>, qp, kp, vp, bias, bias_dt, yp, a);
    return;
  }
  dim3 grid(static_cast<unsigned>(a.Sq), static_cast<unsigned>(a.H), static_cast<unsigned>(a.B));
  launch_after(attention_decode_kernel<T, SD, SV>, grid, kDecodeWarps * 32, 0, s, qp, kp, vp, bias, bias_dt, yp, a);
}

template <class T, int SD>
void launch_sd(const void* q, const void* k, const void* v, const void* bias, Dt bias_dt, void* y, const AttentionSpec& a, cudaStream_t s) {
  if (a.Dv <= 32) launch_sd_sv<T, SD, 1>(q, k, v, bias, bias_dt, y, a, s);
  else if (a.Dv <= 64) launch_sd_sv<T, SD, 2>(q, k, v, bias, bias_dt, y, a, s);
  else if (a.Dv <= 128) launch_sd_sv<T, SD, 4>(q, k, v, bias, bias_dt, y, a, s);
  else launch_sd_sv<T, SD, 8>(q, k, v, bias, bias_dt, y, a, s);
}

template <class T>
void launch_typed(const void* q, const void* k, const void* v, const void* bias, Dt bias_dt, void* y, const AttentionSpec& a, cudaStream_t s) {
  if (a.D <= 32) launch_sd<T, 1>(q, k, v, bias, bias_dt, y, a, s);
  else if (a.D <= 64) launch_sd<T, 2>(q, k, v, bias, bias_dt, y, a, s);
  else if (a.D <= 128) launch_sd<T, 4>(q, k, v, bias, bias_dt, y, a, s);
  else launch_sd<T, 8>(q, k, v, bias, bias_dt, y, a, s);
}

}  // namespace

bool attention_uses_decode(const AttentionSpec& a) { return a.Sq <= kDecodeMaxRows; }

int attention_decode_cluster(const AttentionSpec& a, int cc_major) {
  if (cc_major < 9) return 1;
  // enough blocks that every warp of the cluster has at least one batch of keys
  int64_t per_block = int64_t{kClusterWarps} * kDecodeKeys;
  return static_cast<int>(std::min<int64_t>(kMaxCluster, std::max<int64_t>(1, (a.Sk + per_block - 1) / per_block)));
}

void launch_attention_decode(Dt dt, const void* q, const void* k, const void* v, const void* bias, Dt bias_dt, void* y, const AttentionSpec& a,
                             cudaStream_t s) {
  switch (dt) {
    case Dt::f16: launch_typed<__half>(q, k, v, bias, bias_dt, y, a, s); break;
    case Dt::bf16: launch_typed<__nv_bfloat16>(q, k, v, bias, bias_dt, y, a, s); break;
    default: launch_typed<float>(q, k, v, bias, bias_dt, y, a, s); break;
  }
}

}  // namespace rlx::backends::cuda
