// RoPE's work split for any schedule: rope_pairs rotates a grid-stride share of the pairs,
// norm_rope_row one row (Qwen3's rms-normed q or k head) a warp. nn.cu's kernels and the decode
// megakernel (megakernel.cu) run the same code, so both compute the same bits.
#pragma once
#include <type_traits>

#include "backends/cuda/common.cuh"

namespace rlx::backends::cuda {

// Where row `row` of x goes: the same row of y, or (appending to a cache of r.C rows) row
// positions[s] of its [.., C, D] block; -1 (and the error word set) for a position off the cache.
__device__ __forceinline__ int64_t rope_out_row(const RopeSpec& r, int64_t row, int64_t p, ErrorWord* err, int node) {
  if (!r.C) return row;
  if (p < 0 || p >= r.C) {
    report_index_error(err, node, p, r.C);
    return -1;
  }
  return row / r.S * r.C + p;
}

// 1/θ^(2k/dims) in f32 as the definition computes it: from the host's table, else with the
// power taken in f64 and rounded once (CUDA's powf may be 2 ulps off the host's, and a position
// of 4000 turns one ulp of the frequency into 1e-4 of the angle).
__device__ __forceinline__ float rope_inv_freq(const RopeSpec& r, int64_t k) {
  if (r.table) return r.inv_freq[k];
  float e = static_cast<float>(2 * k) / static_cast<float>(r.dims);
  return 1.0f / static_cast<float>(pow(static_cast<double>(r.theta), static_cast<double>(e)));
}

// The rotated pair of (xa, xb) by (c, sn). Half types round where the definition does — cos/sin
// in T, each product and the sum stored in T (its decomposition; Hugging Face casts cos/sin to
// the activations' dtype) — which matters where the two products nearly cancel; f32 rounds once.
template <class T>
__device__ __forceinline__ void rotate_pair(double xa, double xb, double c, double sn, T& ya, T& yb) {
  if constexpr (std::is_same_v<T, float>) {
    ya = static_cast<float>(xa * c - xb * sn);
    yb = static_cast<float>(xb * c + xa * sn);
  } else {
    auto in_t = [](double v) { return static_cast<double>(to_f32(from_f32<T>(static_cast<float>(v)))); };
    c = in_t(c);
    sn = in_t(sn);
    ya = from_f32<T>(static_cast<float>(in_t(xa * c) - in_t(xb * sn)));
    yb = from_f32<T>(static_cast<float>(in_t(xb * c) + in_t(xa * sn)));
  }
}

// One thread per rotated pair (a row's frequency k): one angle and one sincos for its two
// outputs; the unrotated tail of a partial rope is copied. I: the index type (32-bit where the
// tensor allows it — 64-bit divisions cost more than the rest of the kernel).
// The pairs i = start, start + stride, … of the whole tensor (a grid-stride loop's share).
template <class T, class I>
__device__ __forceinline__ void rope_pairs(const T* x, const void* pos, Dt pos_dt, T* y, const RopeSpec& r, ErrorWord* err, int node, I start, I stride) {
  const I D = static_cast<I>(r.D), P = static_cast<I>(r.dims / 2), per_row = P + D - static_cast<I>(r.dims);
  const I n = static_cast<I>(r.total / r.D) * per_row;
  for (I i = start; i < n; i += stride) {
    I row = i / per_row, k = i - row * per_row, base = row * D;
    // positions [B, S] are indexed by the first dim of x
    I s = row % static_cast<I>(r.S);
    int64_t pi = r.batched_positions ? (static_cast<int64_t>(base) / r.batch_elems) * r.S + s : s;
    int64_t p = load_i64(pos, pos_dt, pi);
    int64_t out_row = rope_out_row(r, row, p, err, node);
    if (out_row < 0) continue;
    T* yr = y + out_row * r.D;
    if (k >= P) {
      I f = static_cast<I>(r.dims) + (k - P);
      yr[f] = x[base + f];
      continue;
    }
    // frequencies and angles in f32, as the definition (and Hugging Face) computes them
    float inv = rope_inv_freq(r, k);
    float ang = static_cast<float>(p) * inv;
    double sn, c;
    sincos(static_cast<double>(ang), &sn, &c);
    I a = r.interleaved ? 2 * k : k, b = r.interleaved ? 2 * k + 1 : k + static_cast<I>(r.half);
    double xa = to_f32(x[base + a]), xb = to_f32(x[base + b]);
    rotate_pair<T>(xa, xb, c, sn, yr[a], yr[b]);
  }
}

// rope of rms_norm(x)·g (Qwen3's q and k norms): one warp per row of D features takes the
// row's mean square, then rotates its pairs as rope_kernel does. The normalized values are
// rounded to T first, as the separate rms_norm would store them.
// The calling warp's row.
template <class T>
__device__ __forceinline__ void norm_rope_row(const T* x, const T* g, float eps, const void* pos, Dt pos_dt, T* y, const RopeSpec& r, ErrorWord* err,
                                              int node, int64_t row) {
  const int lane = threadIdx.x & 31;
  const int64_t rows = r.total / r.D;
  if (row >= rows) return;
  const int64_t D = r.D, P = r.dims / 2, base = row * D;
  const int64_t sq_row = row % r.S;
  const int64_t pi = r.batched_positions ? (base / r.batch_elems) * r.S + sq_row : sq_row;
  const int64_t pos_i = load_i64(pos, pos_dt, pi);
  const int64_t out_row = rope_out_row(r, row, pos_i, err, node);
  if (out_row < 0) return;
  T* yr = y + out_row * D;
  float sq = 0;
  for (int64_t j = lane; j < D; j += 32) {
    float v = to_f32(x[base + j]);
    sq += v * v;
  }
  const float inv_rms = rsqrtf(warp_sum(sq) / static_cast<float>(D) + eps);
  auto normed = [&](int64_t j) { return to_f32(from_f32<T>(to_f32(x[base + j]) * inv_rms * to_f32(g[j]))); };
  for (int64_t f = r.dims + lane; f < D; f += 32) yr[f] = from_f32<T>(normed(f));
  const float p = static_cast<float>(pos_i);
  for (int64_t k = lane; k < P; k += 32) {
    float inv = rope_inv_freq(r, k);
    double sn, c;
    sincos(static_cast<double>(p * inv), &sn, &c);
    int64_t a = r.interleaved ? 2 * k : k, b = r.interleaved ? 2 * k + 1 : k + r.half;
    double xa = normed(a), xb = normed(b);
    rotate_pair<T>(xa, xb, c, sn, yr[a], yr[b]);
  }
}

}  // namespace rlx::backends::cuda
