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

#include "backends/cuda/attention_decode_tile.cuh"

namespace rlx::backends::cuda {

namespace {

constexpr int kDecodeWarps = 16;
constexpr int kClusterWarps = 8, kMaxCluster = 8;

// One block per (row, head, batch); its warps split the keys.
template <class T, int SD, int SV>
__global__ void attention_decode_kernel(const T* q, const T* k, const T* v, const void* bias, Dt bias_dt, T* y, const __grid_constant__ AttentionSpec a) {
  RLX_AFTER_PRODUCERS();
  attention_decode_row<T, SD, SV, kDecodeWarps>(q, k, v, bias, bias_dt, y, a, blockIdx.x, blockIdx.y, blockIdx.z);
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
