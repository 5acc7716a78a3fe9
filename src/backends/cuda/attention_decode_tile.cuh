// Attention for decode, the work of one warp (an online softmax over a strided share of the
// keys) and of one block (its warps' results merged for one query row and head). The decode
// kernels (attention_decode.cu) and the decode megakernel (megakernel.cu) schedule these.
#pragma once
#include "backends/cuda/common.cuh"

namespace rlx::backends::cuda {

constexpr int kDecodeKeys = 4, kDecodeMaxRows = 4;

// One warp's online softmax over keys j0, j0 + stride, … (KEYS at a time, their loads all in
// flight before any is used) of [lo, hi).
template <class T, int SD, int SV, int KEYS = kDecodeKeys>
struct DecodeWarp {
  float qv[SD];
  float m = -INFINITY, l = 0;
  float acc[SV];

  // The rounding of compute=bf16/f16 decided once, not per element (the common f32 path then
  // carries no per-element selects): walk's ROUND 0 none, 1 the spec's.
  __device__ void run(const T* q, const T* kb, const T* vb, const void* bias, Dt bias_dt, int64_t bias_row, const AttentionSpec& a,
                      int64_t j0, int64_t stride, int64_t hi) {
    if (a.round_bf16 || a.round_f16) walk<1>(q, kb, vb, bias, bias_dt, bias_row, a, j0, stride, hi);
    else walk<0>(q, kb, vb, bias, bias_dt, bias_row, a, j0, stride, hi);
  }
  // One walk for either (ROUND 2: the spec's rounding chosen per element): half the code, for
  // the megakernel, whose every op's code competes for the SMs' instruction caches.
  __device__ void run_compact(const T* q, const T* kb, const T* vb, const void* bias, Dt bias_dt, int64_t bias_row, const AttentionSpec& a,
                              int64_t j0, int64_t stride, int64_t hi) {
    walk<2>(q, kb, vb, bias, bias_dt, bias_row, a, j0, stride, hi);
  }

  template <int ROUND>
  __device__ __forceinline__ void walk(const T* q, const T* kb, const T* vb, const void* bias, Dt bias_dt, int64_t bias_row, const AttentionSpec& a,
                                       int64_t j0, int64_t stride, int64_t hi) {
    const int lane = threadIdx.x & 31;
    const int D = static_cast<int>(a.D), Dv = static_cast<int>(a.Dv);
    auto rnd = [&](float x) {
      if constexpr (ROUND == 1) return a.round_bf16 ? round_bf16(x) : round_f16(x);
      else if constexpr (ROUND == 2) return a.round_bf16 ? round_bf16(x) : a.round_f16 ? round_f16(x) : x;
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
      float kv[KEYS][SD], vv[KEYS][SV], bv[KEYS];
#pragma unroll
      for (int u = 0; u < KEYS; ++u) {
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
      float sc[KEYS], mx = m;
#pragma unroll
      for (int u = 0; u < KEYS; ++u) {
        float dot = 0;
#pragma unroll
        for (int t = 0; t < SD; ++t) dot = fmaf(qv[t], rnd(kv[u][t]), dot);
        sc[u] = dot;
      }
#pragma unroll
      for (int u = 0; u < KEYS; ++u) sc[u] = warp_sum(sc[u]);
#pragma unroll
      for (int u = 0; u < KEYS; ++u) {
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
      for (int u = 0; u < KEYS; ++u) {
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

// The keys of share `split` of S of [lo, hi): equal shares, each a whole number of the warps'
// strides (so every share's warps take the keys the way one block over all of them would).
__device__ __forceinline__ void key_share(int64_t& lo, int64_t& hi, int split, int S, int64_t step) {
  const int64_t chunk = ((hi - lo + S - 1) / S + step - 1) / step * step;
  lo = min(hi, lo + split * chunk);
  hi = min(hi, lo + chunk);
}

// Query row i of head h and batch b by the block's W warps, which split the keys; with S > 1
// shares (the megakernel's long caches), over share `split` of them: the block leaves its
// (m, l, acc) in part[row·S + split] and the last of the row's S blocks to finish (count[row],
// which it sets back to 0) merges them into y.
// COMPACT: one walk for every rounding, KEYS keys a step (DecodeWarp) — the megakernel's code size
// and registers; the decode kernel keeps the specialized walks.
template <class T, int SD, int SV, int W, int KEYS = kDecodeKeys, bool COMPACT = false>
__device__ __forceinline__ void attention_decode_row(const T* q, const T* k, const T* v, const void* bias, Dt bias_dt, T* y, const AttentionSpec& a,
                                                     int64_t i, int64_t h, int64_t b, int split = 0, int S = 1, float* part = nullptr,
                                                     unsigned* count = nullptr) {
  __shared__ float sm[W], sl[W];
  __shared__ float sacc[W][SV * 32];
  __shared__ float bm, bl, bacc[SV * 32];
  __shared__ bool last;
  const int warp = threadIdx.x >> 5;
  const int64_t hk = h / (a.H / a.Hk);
  int64_t lo, hi;
  key_range(a, i, lo, hi);
  if (S > 1) key_share(lo, hi, split, S, W * KEYS);
  DecodeWarp<T, SD, SV, KEYS> w;
  const T *qr = q + b * a.q_b + h * a.q_h + i * a.q_s, *kr = k + b * a.k_b + hk * a.k_h, *vr = v + b * a.v_b + hk * a.v_h;
  const int64_t bias_row = b * a.bias_s[0] + h * a.bias_s[1] + i * a.bias_s[2];
  if constexpr (COMPACT) w.run_compact(qr, kr, vr, bias, bias_dt, bias_row, a, lo + warp * KEYS, W * KEYS, hi);
  else w.run(qr, kr, vr, bias, bias_dt, bias_row, a, lo + warp * KEYS, W * KEYS, hi);
  merge_warps(w, sm, sl, sacc, a.Dv, &bm, &bl, bacc);
  __syncthreads();
  const int64_t out = b * a.y_b + h * a.y_h + i * a.y_s;
  if (S == 1) {
    // a row with no allowed key is NaN, like the definition's softmax over nothing
    for (int64_t d = threadIdx.x; d < a.Dv; d += blockDim.x) store_as(y, out + d, bl > 0 ? bacc[d] / bl : __int_as_float(0x7fc00000), a.y_dt);
    return;
  }
  const int64_t row = (b * a.H + h) * a.Sq + i, width = 2 + a.Dv;
  float* mine = part + (row * S + split) * width;
  for (int64_t d = threadIdx.x; d < a.Dv; d += blockDim.x) mine[2 + d] = bacc[d];
  if (threadIdx.x == 0) {
    mine[0] = bm;
    mine[1] = bl;
  }
  __syncthreads();  // every thread's stores before thread 0's fence and count
  if (threadIdx.x == 0) {
    __threadfence();
    last = atomicAdd(count + row, 1u) == static_cast<unsigned>(S - 1);
  }
  __syncthreads();
  if (!last) return;
  __threadfence();  // the other shares' stores, seen through L2 (__ldcg: not this SM's L1)
  const float* all = part + row * S * width;
  float M = -INFINITY, L = 0;
  for (int s = 0; s < S; ++s) M = fmaxf(M, __ldcg(all + s * width));
  if (M != -INFINITY)
    for (int s = 0; s < S; ++s) {
      const float ms = __ldcg(all + s * width);
      if (ms != -INFINITY) L += __expf(ms - M) * __ldcg(all + s * width + 1);
    }
  for (int64_t d = threadIdx.x; d < a.Dv; d += blockDim.x) {
    float o = 0;
    if (M != -INFINITY)
      for (int s = 0; s < S; ++s) {
        const float ms = __ldcg(all + s * width);
        if (ms != -INFINITY) o += __expf(ms - M) * __ldcg(all + s * width + 2 + d);
      }
    store_as(y, out + d, L > 0 ? o / L : __int_as_float(0x7fc00000), a.y_dt);
  }
  if (threadIdx.x == 0) count[row] = 0;  // ready for the next launch
}

}  // namespace rlx::backends::cuda
