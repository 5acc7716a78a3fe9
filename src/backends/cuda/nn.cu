// Native kernels for the hot HIR ops (softmax, layer/RMS norm, RoPE, embedding) and the
// simple ones that need no library (direct convolution, integer GEMM). Storage is f32, f16 or
// bf16; the math is f32 with warp/block reductions.
#include <type_traits>
#include "backends/cuda/common.cuh"
#include "backends/cuda/rope_tile.cuh"

namespace rlx::backends::cuda {

namespace {

template <class T>
__device__ __forceinline__ float ld(const T* p, int64_t i) {
  return to_f32(p[i]);
}

// ---- softmax: one warp per row of a contiguous last axis, or one thread per strided line
template <class T>
__global__ void softmax_warp_kernel(const T* x, T* y, int64_t rows, int64_t n, bool log) {
  RLX_AFTER_PRODUCERS();
  int64_t row = static_cast<int64_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
  int lane = threadIdx.x & 31;
  if (row >= rows) return;
  const T* xr = x + row * n;
  T* yr = y + row * n;
  float m = -INFINITY;
#pragma unroll 4
  for (int64_t j = lane; j < n; j += 32) m = fmaxf(m, ld(xr, j));
  m = warp_max(m);
  float s = 0;
#pragma unroll 4
  for (int64_t j = lane; j < n; j += 32) s += __expf(ld(xr, j) - m);
  s = warp_sum(s);
  float inv = 1.0f / s, ls = logf(s);
  for (int64_t j = lane; j < n; j += 32) {
    float v = ld(xr, j) - m;
    yr[j] = from_f32<T>(log ? v - ls : __expf(v) * inv);
  }
}

template <class T>
__global__ void softmax_block_kernel(const T* x, T* y, int64_t n, bool log) {
  RLX_AFTER_PRODUCERS();
  __shared__ float scratch[32];
  const T* xr = x + blockIdx.x * n;
  T* yr = y + blockIdx.x * n;
  float m = -INFINITY;
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) m = fmaxf(m, ld(xr, j));
  m = block_reduce<true>(m, scratch);
  float s = 0;
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) s += __expf(ld(xr, j) - m);
  s = block_reduce<false>(s, scratch);
  float inv = 1.0f / s, ls = logf(s);
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
    float v = ld(xr, j) - m;
    yr[j] = from_f32<T>(log ? v - ls : __expf(v) * inv);
  }
}

template <class T>
__global__ void softmax_strided_kernel(const T* x, T* y, int64_t outer, int64_t n, int64_t inner, bool log) {
  RLX_AFTER_PRODUCERS();
  RLX_GRID_STRIDE(line, outer * inner) {
    int64_t base = (line / inner) * n * inner + line % inner;
    float m = -INFINITY;
    for (int64_t j = 0; j < n; ++j) m = fmaxf(m, ld(x, base + j * inner));
    float s = 0;
    for (int64_t j = 0; j < n; ++j) s += __expf(ld(x, base + j * inner) - m);
    float inv = 1.0f / s, ls = logf(s);
    for (int64_t j = 0; j < n; ++j) {
      float v = ld(x, base + j * inner) - m;
      y[base + j * inner] = from_f32<T>(log ? v - ls : __expf(v) * inv);
    }
  }
}

// ---- layer / RMS norm: one warp per row (many rows of up to 1024 elements) or one block per row
// Y: the stored type (x's, or the half type a following cast would give: from_f32<Y> of the f32
// value is that cast).
template <class T, class Y, bool kWarp>
__global__ void norm_kernel(const T* x, const T* g, const T* b, Y* y, int64_t rows, int64_t inner, float eps, bool rms) {
  RLX_AFTER_PRODUCERS();
  __shared__ float scratch[32];
  int64_t row;
  int lane, width;
  if (kWarp) {
    row = static_cast<int64_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
    lane = threadIdx.x & 31;
    width = 32;
    if (row >= rows) return;
  } else {
    row = blockIdx.x;
    lane = threadIdx.x;
    width = blockDim.x;
  }
  auto reduce = [&](float v) { return kWarp ? warp_sum(v) : block_reduce<false>(v, scratch); };
  const T* xr = x + row * inner;
  Y* yr = y + row * inner;
  float mean = 0;
  if (!rms) {
    float s = 0;
#pragma unroll 4
    for (int64_t j = lane; j < inner; j += width) s += ld(xr, j);
    mean = reduce(s) / static_cast<float>(inner);
  }
  float sq = 0;
#pragma unroll 4
  for (int64_t j = lane; j < inner; j += width) {
    float c = ld(xr, j) - mean;
    sq += c * c;
  }
  float inv = rsqrtf(reduce(sq) / static_cast<float>(inner) + eps);
#pragma unroll 4
  for (int64_t j = lane; j < inner; j += width) {
    float v = (ld(xr, j) - mean) * inv;
    if (g) v *= ld(g, j);
    if (b) v += ld(b, j);
    yr[j] = from_f32<Y>(to_f32(from_f32<T>(v)));
  }
}

template <class T, class I>
__global__ void rope_kernel(const T* x, const void* pos, Dt pos_dt, T* y, const __grid_constant__ RopeSpec r, ErrorWord* err, int node) {
  RLX_AFTER_PRODUCERS();
  rope_pairs<T, I>(x, pos, pos_dt, y, r, err, node, static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x, static_cast<I>(gridDim.x) * blockDim.x);
}

// rope of rms_norm(x)·g (Qwen3's q and k norms): one warp per row of D features.
template <class T>
__global__ void norm_rope_kernel(const T* x, const T* g, float eps, const void* pos, Dt pos_dt, T* y, const __grid_constant__ RopeSpec r,
                                 ErrorWord* err, int node) {
  RLX_AFTER_PRODUCERS();
  norm_rope_row<T>(x, g, eps, pos, pos_dt, y, r, err, node, static_cast<int64_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32);
}

template <class T>
__global__ void embedding_kernel(const T* table, const void* ids, Dt id_dt, T* y, int64_t n_ids, int64_t V, int64_t D, ErrorWord* err,
                                 int node) {
  RLX_AFTER_PRODUCERS();
  RLX_GRID_STRIDE(i, n_ids * D) {
    int64_t k = i, d = coord_step(k, D);
    int64_t id = load_i64(ids, id_dt, k);
    if (id < 0 || id >= V) {
      report_index_error(err, node, id, V);
      y[i] = T{};
      continue;
    }
    y[i] = table[id * D + d];
  }
}

__global__ void conv_kernel(Dt dt, const void* x, const void* w, void* y, const __grid_constant__ ConvSpec c, int64_t total) {
  bool fl = is_float_dt(dt);
  int64_t Cg = c.C / c.groups, Og = c.O / c.groups;
  int64_t in_sp = 1, out_sp = 1, k_sp = 1;
  for (int s = 0; s < c.sp; ++s) in_sp *= c.in[s], out_sp *= c.out[s], k_sp *= c.k[s];
  RLX_GRID_STRIDE(o, total) {
    int64_t pos = o % out_sp, oc = (o / out_sp) % c.O, n = o / (out_sp * c.O), g = oc / Og;
    int64_t ocoord[3] = {0, 0, 0};
    for (int s = c.sp - 1; s >= 0; --s) {
      ocoord[s] = pos % c.out[s];
      pos /= c.out[s];
    }
    double accf = 0;
    int64_t acci = 0;
    for (int64_t ci = 0; ci < Cg; ++ci) {
      int64_t xbase = (n * c.C + g * Cg + ci) * in_sp, wbase = (oc * Cg + ci) * k_sp;
      for (int64_t kk = 0; kk < k_sp; ++kk) {
        int64_t rem = kk, xoff = 0, stride = 1;
        bool inside = true;
        int64_t kc[3];
        for (int s = c.sp - 1; s >= 0; --s) {
          kc[s] = rem % c.k[s];
          rem /= c.k[s];
        }
        for (int s = c.sp - 1; s >= 0; --s) {
          int64_t p = ocoord[s] * c.stride[s] - c.pad[s] + kc[s] * c.dil[s];
          inside = inside && p >= 0 && p < c.in[s];
          xoff += p * stride;
          stride *= c.in[s];
        }
        if (!inside) continue;
        if (fl) accf += load_f64(x, dt, xbase + xoff) * load_f64(w, dt, wbase + kk);
        else acci = wrap_add(acci, wrap_mul(load_i64(x, dt, xbase + xoff), load_i64(w, dt, wbase + kk)));
      }
    }
    if (fl) store_f64(y, dt, o, accf);
    else store_i64(y, dt, o, acci);
  }
}

__global__ void gemm_naive_kernel(Dt in, Dt out, const void* a, const void* b, void* c, const __grid_constant__ GemmSpec g, int64_t total) {
  bool fl = is_float_dt(in);
  RLX_GRID_STRIDE(o, total) {
    int64_t n = o % g.N, m = (o / g.N) % g.M, bb = o / (g.N * g.M);
    int64_t pa = bb * g.a_b + m * g.a_m, pb = bb * g.b_b + n * g.b_n;
    double accf = 0;
    int64_t acci = 0;
    for (int64_t k = 0; k < g.K; ++k) {
      if (fl) accf += load_f64(a, in, pa + k * g.a_k) * load_f64(b, in, pb + k * g.b_k);
      else acci = wrap_add(acci, wrap_mul(load_i64(a, in, pa + k * g.a_k), load_i64(b, in, pb + k * g.b_k)));
    }
    if (fl) store_f64(c, out, o, accf);
    else if (is_float_dt(out)) store_f64(c, out, o, static_cast<double>(acci));
    else store_i64(c, out, o, acci);
  }
}

template <class F>
void by_float(Dt dt, F&& f) {
  switch (dt) {
    case Dt::f16: f(__half{}); break;
    case Dt::bf16: f(__nv_bfloat16{}); break;
    default: f(float{}); break;
  }
}

}  // namespace

void launch_softmax(Dt dt, const void* x, void* y, int64_t outer, int64_t n, int64_t inner, bool log, cudaStream_t s) {
  if (outer * n * inner == 0) return;
  by_float(dt, [&](auto t) {
    using T = decltype(t);
    const T* xp = static_cast<const T*>(x);
    T* yp = static_cast<T*>(y);
    if (inner > 1) launch_after(softmax_strided_kernel<T>, grid_for(outer * inner), kThreads, 0, s, xp, yp, outer, n, inner, log);
    else if (n <= 1024) launch_after(softmax_warp_kernel<T>, static_cast<unsigned>((outer + 3) / 4), 128, 0, s, xp, yp, outer, n, log);
    else launch_after(softmax_block_kernel<T>, static_cast<unsigned>(outer), 1024, 0, s, xp, yp, n, log);
  });
}

void launch_norm(Dt dt, const void* x, const void* gamma, const void* beta, Dt out, void* y, int64_t rows, int64_t inner, float eps, bool rms,
                 cudaStream_t s) {
  if (rows * inner == 0) return;
  auto go = [&](auto t, auto o) {
    using T = decltype(t);
    using Y = decltype(o);
    auto xp = static_cast<const T*>(x), gp = static_cast<const T*>(gamma), bp = static_cast<const T*>(beta);
    auto yp = static_cast<Y*>(y);
    // A warp per row needs many rows to fill the GPU; a few rows (decode: one) get a block each,
    // ~4 elements per thread, instead of one warp walking the whole row.
    if (inner <= 1024 && rows >= 1024) {
      launch_after(norm_kernel<T, Y, true>, static_cast<unsigned>((rows + 3) / 4), 128, 0, s, xp, gp, bp, yp, rows, inner, eps, rms);
    } else {
      int threads = static_cast<int>(std::min<int64_t>(512, std::max<int64_t>(32, (inner / 4 + 31) / 32 * 32)));
      launch_after(norm_kernel<T, Y, false>, static_cast<unsigned>(rows), threads, 0, s, xp, gp, bp, yp, rows, inner, eps, rms);
    }
  };
  // a norm stored in another type: f32 x into half (what the claim admits)
  if (dt == Dt::f32 && out == Dt::f16) go(float{}, __half{});
  else if (dt == Dt::f32 && out == Dt::bf16) go(float{}, __nv_bfloat16{});
  else by_float(dt, [&](auto t) { go(t, t); });
}

void launch_rope(Dt dt, const void* x, const void* pos, Dt pos_dt, void* y, const RopeSpec& r, const void* norm_g, float eps, ErrorWord* err, int node,
                 cudaStream_t s) {
  if (r.total == 0) return;
  by_float(dt, [&](auto t) {
    using T = decltype(t);
    if (norm_g) {
      int64_t rows = r.total / r.D;
      launch_after(norm_rope_kernel<T>, static_cast<unsigned>((rows + 3) / 4), 128, 0, s, static_cast<const T*>(x), static_cast<const T*>(norm_g), eps, pos,
                   pos_dt, static_cast<T*>(y), r, err, node);
      return;
    }
    int64_t threads = r.total / r.D * (r.D - r.dims / 2);
    if (r.total < (int64_t{1} << 31) && r.total / r.S * r.C < (int64_t{1} << 31))
      launch_after(rope_kernel<T, int32_t>, grid_for(threads), kThreads, 0, s, static_cast<const T*>(x), pos, pos_dt, static_cast<T*>(y), r, err, node);
    else
      launch_after(rope_kernel<T, int64_t>, grid_for(threads), kThreads, 0, s, static_cast<const T*>(x), pos, pos_dt, static_cast<T*>(y), r, err, node);
  });
}

void launch_embedding(Dt dt, const void* table, const void* ids, Dt id_dt, void* y, int64_t n_ids, int64_t V, int64_t D, ErrorWord* err,
                      int node, cudaStream_t s) {
  if (n_ids * D == 0) return;
  by_float(dt, [&](auto t) {
    using T = decltype(t);
    launch_after(embedding_kernel<T>, grid_for(n_ids * D), kThreads, 0, s, static_cast<const T*>(table), ids, id_dt, static_cast<T*>(y), n_ids, V, D,
                                                                 err, node);
  });
}

void launch_conv(Dt dt, const void* x, const void* w, void* y, const ConvSpec& c, cudaStream_t s) {
  int64_t total = c.N * c.O;
  for (int i = 0; i < c.sp; ++i) total *= c.out[i];
  if (total == 0) return;
  conv_kernel<<<grid_for(total), kThreads, 0, s>>>(dt, x, w, y, c, total);
}

void launch_gemm_naive(Dt in, Dt out, const void* a, const void* b, void* c, const GemmSpec& g, cudaStream_t s) {
  int64_t total = g.batch * g.M * g.N;
  if (total == 0) return;
  gemm_naive_kernel<<<grid_for(total), kThreads, 0, s>>>(in, out, a, b, c, g, total);
}

}  // namespace rlx::backends::cuda
