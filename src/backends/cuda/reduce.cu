// Reductions over any axes, cumulative sums and sorting. Floats accumulate in f64 and integers
// in wrapping int64, like the reference; max/min follow its NaN rule (a NaN wins, the first
// NaN for the arg kinds) and ties keep the first index.
#include <algorithm>
#include <climits>
#include <cstdint>

#include "backends/cuda/common.cuh"
#include "codegen/cuda_math.cuh"
#include "codegen/reduce.h"

namespace rlx::backends::cuda {

namespace {

struct Acc {
  double f;
  int64_t i;
  int64_t at;  // flat index in the reduced space of the kept element; -1 while empty
};

__device__ __forceinline__ Acc acc_init(Red k) {
  bool prod = k == Red::prod;
  return {prod ? 1.0 : 0.0, prod ? 1 : 0, -1};
}

// Does (v, j) replace the current best (c, at)? codegen/reduce.h's order. F: double for the
// generic kernels, float for the f32 line kernels.
template <class F>
__device__ __forceinline__ bool better_f(bool is_max, F v, int64_t j, F c, int64_t at) {
  return codegen::wins(codegen::DeviceFloat<F>{}, is_max, v, j, c, at);
}
__device__ __forceinline__ bool better_i(bool is_max, int64_t v, int64_t j, int64_t c, int64_t at) {
  return codegen::wins(codegen::DeviceInt{}, is_max, v, j, c, at);
}

// sum and prod: codegen's fold ops, in f64 for floats and wrapping int64 for integers (each op
// a constant, so the call is the one instruction).
constexpr Op kFoldSum = codegen::fold_op(codegen::Reduction::sum), kFoldProd = codegen::fold_op(codegen::Reduction::prod);
__device__ __forceinline__ double fold_f(Red k, double a, double v) {
  const codegen::DeviceFloat<double> m;
  return k == Red::sum ? codegen::float_op(m, kFoldSum, a, v, v) : codegen::float_op(m, kFoldProd, a, v, v);
}
__device__ __forceinline__ int64_t fold_i(Red k, int64_t a, int64_t v) {
  const codegen::DeviceInt m;
  return k == Red::sum ? codegen::int_op(m, kFoldSum, a, v, v) : codegen::int_op(m, kFoldProd, a, v, v);
}

__device__ __forceinline__ void acc_push(Acc& a, Red k, bool fl, const void* x, Dt dt, int64_t off, int64_t j) {
  if (fl) {
    double v = load_f64(x, dt, off);
    if (k == Red::sum || k == Red::prod) a.f = fold_f(k, a.f, v);
    else if (better_f(k == Red::max || k == Red::argmax, v, j, a.f, a.at)) a.f = v, a.at = j;
  } else {
    int64_t v = load_i64(x, dt, off);
    if (k == Red::sum || k == Red::prod) a.i = fold_i(k, a.i, v);
    else if (better_i(k == Red::max || k == Red::argmax, v, j, a.i, a.at)) a.i = v, a.at = j;
  }
}

__device__ __forceinline__ void acc_merge(Acc& a, const Acc& b, Red k, bool fl) {
  if (k == Red::sum || k == Red::prod) {
    a.f = fold_f(k, a.f, b.f);
    a.i = fold_i(k, a.i, b.i);
  } else if (b.at >= 0) {
    bool is_max = k == Red::max || k == Red::argmax;
    bool take = fl ? better_f(is_max, b.f, b.at, a.f, a.at) : better_i(is_max, b.i, b.at, a.i, a.at);
    if (take) a = b;
  }
}

__device__ __forceinline__ void acc_store(const Acc& a, Red k, bool fl, Dt in_dt, void* y, Dt out, int64_t o, int64_t last_len) {
  if (k == Red::argmax || k == Red::argmin) {
    store_i64(y, out, o, a.at < 0 ? 0 : a.at % last_len);
    return;
  }
  bool empty_minmax = a.at < 0 && (k == Red::max || k == Red::min);
  if (fl) {
    store_f64(y, out, o, empty_minmax ? (k == Red::max ? -INFINITY : INFINITY) : a.f);
  } else {
    int64_t v = a.i;
    if (empty_minmax) v = in_dt == Dt::boolean ? (k == Red::max ? 0 : 1) : (k == Red::max ? INT64_MIN : INT64_MAX);
    store_i64(y, out, o, v);
  }
}

// One thread per output: the reduced elements of neighbouring outputs are neighbours in memory.
__global__ void reduce_thread_kernel(Red k, Dt dt, Dt out, const void* x, void* y, const __grid_constant__ Space kept, const __grid_constant__ Strides ks, const __grid_constant__ Space red, const __grid_constant__ Strides rs,
                                     int64_t n_out, int64_t n_red) {
  RLX_AFTER_PRODUCERS();
  bool fl = is_float_dt(dt);
  int64_t last_len = red.rank ? red.shape[red.rank - 1] : 1;
  RLX_GRID_STRIDE(o, n_out) {
    int64_t base = offset_of(o, kept, ks);
    Acc a = acc_init(k);
    for (int64_t j = 0; j < n_red; ++j) acc_push(a, k, fl, x, dt, base + offset_of(j, red, rs), j);
    acc_store(a, k, fl, dt, y, out, o, last_len);
  }
}

// One block per output: the reduced elements are contiguous, so the block reads them together.
__global__ void reduce_block_kernel(Red k, Dt dt, Dt out, const void* x, void* y, const __grid_constant__ Space kept, const __grid_constant__ Strides ks, const __grid_constant__ Space red, const __grid_constant__ Strides rs,
                                    int64_t n_red) {
  RLX_AFTER_PRODUCERS();
  __shared__ Acc part[kThreads];
  bool fl = is_float_dt(dt);
  int64_t last_len = red.rank ? red.shape[red.rank - 1] : 1;
  int64_t o = blockIdx.x;
  int64_t base = offset_of(o, kept, ks);
  Acc a = acc_init(k);
#pragma unroll 4
  for (int64_t j = threadIdx.x; j < n_red; j += blockDim.x) acc_push(a, k, fl, x, dt, base + offset_of(j, red, rs), j);
  part[threadIdx.x] = a;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w >>= 1) {
    if (static_cast<int>(threadIdx.x) < w) acc_merge(part[threadIdx.x], part[threadIdx.x + w], k, fl);
    __syncthreads();
  }
  if (threadIdx.x == 0) acc_store(part[0], k, fl, dt, y, out, o, last_len);
}

// Few outputs over long contiguous runs (a gradient summed back to a scalar): each output's
// reduced elements split over gridDim.x blocks in fixed chunks, each block's Acc left in scratch,
// then merged in chunk order by block_merge_kernel — the same result on every run.
__global__ void reduce_block_split_kernel(Red k, Dt dt, const void* x, const __grid_constant__ Space kept, const __grid_constant__ Strides ks,
                                          const __grid_constant__ Space red, const __grid_constant__ Strides rs, int64_t n_red, int64_t chunk, Acc* parts) {
  RLX_AFTER_PRODUCERS();
  __shared__ Acc part[kThreads];
  bool fl = is_float_dt(dt);
  int64_t o = blockIdx.y, lo = static_cast<int64_t>(blockIdx.x) * chunk, hi = min(n_red, lo + chunk);
  int64_t base = offset_of(o, kept, ks);
  Acc a = acc_init(k);
#pragma unroll 4
  for (int64_t j = lo + threadIdx.x; j < hi; j += blockDim.x) acc_push(a, k, fl, x, dt, base + offset_of(j, red, rs), j);
  part[threadIdx.x] = a;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w >>= 1) {
    if (static_cast<int>(threadIdx.x) < w) acc_merge(part[threadIdx.x], part[threadIdx.x + w], k, fl);
    __syncthreads();
  }
  if (threadIdx.x == 0) parts[o * gridDim.x + blockIdx.x] = part[0];
}

__global__ void block_merge_kernel(Red k, Dt dt, Dt out, void* y, const Acc* parts, int splits, int64_t n_out, int64_t last_len) {
  RLX_AFTER_PRODUCERS();
  bool fl = is_float_dt(dt);
  for (int64_t o = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; o < n_out; o += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    Acc a = parts[o * splits];
    for (int s = 1; s < splits; ++s) acc_merge(a, parts[o * splits + s], k, fl);
    acc_store(a, k, fl, dt, y, out, o, last_len);
  }
}

// max/min/argmax/argmin of f32 lines that are contiguous in memory (a greedy step's argmax over
// the vocabulary): comparisons need no f64, so blocks stream their part of a line in float4s
// (kBatch loads in flight per thread) and merge through shuffles. A long line is split over
// gridDim.x blocks, which leave (best, index) pairs in scratch for line_merge_kernel; each thread
// visits its indices in order and merges keep the lower index on ties, so a tie keeps the first.
struct LinePart {
  float v;
  int64_t at;  // -1: empty
};

__device__ __forceinline__ void line_merge(bool is_max, LinePart& a, const LinePart& b) {
  if (b.at >= 0 && better_f<float>(is_max, b.v, b.at, a.v, a.at)) a = b;
}

// The block's best into lane 0 of warp 0 (every thread passes its own).
__device__ __forceinline__ LinePart block_best(bool is_max, LinePart p) {
  for (int off = 16; off > 0; off >>= 1) line_merge(is_max, p, {__shfl_down_sync(0xffffffffu, p.v, off), __shfl_down_sync(0xffffffffu, p.at, off)});
  __shared__ LinePart warp_best[32];
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = static_cast<int>(blockDim.x >> 5);
  if (warps == 1) return p;
  if (lane == 0) warp_best[warp] = p;
  __syncthreads();
  if (warp) return p;
  p = lane < warps ? warp_best[lane] : LinePart{0.f, -1};
  for (int off = 16; off > 0; off >>= 1) line_merge(is_max, p, {__shfl_down_sync(0xffffffffu, p.v, off), __shfl_down_sync(0xffffffffu, p.at, off)});
  return p;
}

__device__ __forceinline__ void line_store(bool is_max, bool arg, void* y, Dt out, int64_t o, const LinePart& p) {
  if (arg) store_i64(y, out, o, p.at < 0 ? 0 : p.at);
  else store_f64(y, out, o, p.at < 0 ? (is_max ? -INFINITY : INFINITY) : static_cast<double>(p.v));
}

// W consecutive floats of a line, loaded at once (W = 4: one float4; the line is 16-byte aligned).
template <int W>
struct Floats {
  float f[W];
  __device__ __forceinline__ void load(const float* line, int64_t q) {
    if constexpr (W == 4) {
      float4 t = __ldg(reinterpret_cast<const float4*>(line) + q);
      f[0] = t.x, f[1] = t.y, f[2] = t.z, f[3] = t.w;
    } else {
      f[0] = __ldg(line + q);
    }
  }
};

// grid (splits, lines): block (s, o) takes elements [s·chunk, (s+1)·chunk) of line o, W at a
// time (W = 4: chunk and n are multiples of 4).
template <int W>
__global__ void __launch_bounds__(1024) reduce_line_f32_kernel(bool is_max, bool arg, const float* x, void* y, Dt out,
                                                               const __grid_constant__ Space kept, const __grid_constant__ Strides ks, int64_t n,
                                                               int64_t chunk, LinePart* parts) {
  RLX_AFTER_PRODUCERS();
  const int64_t o = blockIdx.y, lo = static_cast<int64_t>(blockIdx.x) * chunk, hi = min(n, lo + chunk);
  const float* line = x + offset_of(o, kept, ks);
  LinePart best{0.f, -1};
  constexpr int kBatch = 8;
  const int64_t stride = blockDim.x, qlo = lo / W, qhi = hi / W;
  for (int64_t q0 = qlo + threadIdx.x; q0 < qhi; q0 += kBatch * stride) {
    Floats<W> v[kBatch];
#pragma unroll
    for (int u = 0; u < kBatch; ++u)
      if (q0 + u * stride < qhi) v[u].load(line, q0 + u * stride);
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
      int64_t q = q0 + u * stride;
      if (q >= qhi) continue;
#pragma unroll
      for (int e = 0; e < W; ++e)
        if (better_f<float>(is_max, v[u].f[e], W * q + e, best.v, best.at)) best.v = v[u].f[e], best.at = W * q + e;
    }
  }
  best = block_best(is_max, best);
  if (threadIdx.x) return;
  if (gridDim.x == 1) line_store(is_max, arg, y, out, o, best);
  else parts[o * gridDim.x + blockIdx.x] = best;
}

// One warp per line merges its splits' bests.
__global__ void line_merge_kernel(bool is_max, bool arg, const LinePart* parts, int splits, void* y, Dt out) {
  RLX_AFTER_PRODUCERS();
  const int64_t o = blockIdx.x;
  LinePart best{0.f, -1};
  for (int k = threadIdx.x; k < splits; k += 32) line_merge(is_max, best, parts[o * splits + k]);
  best = block_best(is_max, best);
  if (threadIdx.x == 0) line_store(is_max, arg, y, out, o, best);
}

// The line path and its split: lines of f32 extremes only; long lines over few outputs are split
// so that enough blocks stream them (one block is bound by its own issue rate).
struct LinePlan {
  bool use = false;
  int splits = 1;
  int64_t chunk = 0;
};

LinePlan plan_line(Red kind, Dt dt, const Space& kept, const Space& red, const Strides& rs) {
  LinePlan p;
  bool extremum = kind == Red::max || kind == Red::min || kind == Red::argmax || kind == Red::argmin;
  int64_t n_out = 1, n = red.rank == 1 ? red.shape[0] : 0;
  for (int d = 0; d < kept.rank; ++d) n_out *= kept.shape[d];
  if (!extremum || dt != Dt::f32 || red.rank != 1 || rs.s[0] != 1 || n < 64) return p;
  p.use = true;
  constexpr int64_t kPerBlock = 4096;  // elements a block takes at least
  if (n_out < 128 && n >= 2 * kPerBlock) p.splits = static_cast<int>(std::min<int64_t>(256, n / kPerBlock));
  p.chunk = (n + p.splits - 1) / p.splits;
  p.chunk = (p.chunk + 3) / 4 * 4;
  return p;
}

// Neighbouring outputs are neighbours in memory (a sum over the batch axis, say): a block
// takes 32 outputs across its x threads and splits their reduced elements over 32 y threads.
__global__ void reduce_cols_kernel(Red k, Dt dt, Dt out, const void* x, void* y, const __grid_constant__ Space kept, const __grid_constant__ Strides ks, const __grid_constant__ Space red, const __grid_constant__ Strides rs, int64_t n_out,
                                   int64_t n_red) {
  RLX_AFTER_PRODUCERS();
  __shared__ Acc part[32][33];
  bool fl = is_float_dt(dt);
  int64_t last_len = red.rank ? red.shape[red.rank - 1] : 1;
  int tx = threadIdx.x, ty = threadIdx.y;
  int64_t o = static_cast<int64_t>(blockIdx.x) * 32 + tx;
  Acc a = acc_init(k);
  if (o < n_out) {
    int64_t base = offset_of(o, kept, ks);
#pragma unroll 4
    for (int64_t j = ty; j < n_red; j += 32) acc_push(a, k, fl, x, dt, base + offset_of(j, red, rs), j);
  }
  part[ty][tx] = a;
  __syncthreads();
  for (int w = 16; w > 0; w >>= 1) {
    if (ty < w) acc_merge(part[ty][tx], part[ty + w][tx], k, fl);
    __syncthreads();
  }
  if (ty == 0 && o < n_out) acc_store(part[0][tx], k, fl, dt, y, out, o, last_len);
}

__global__ void cumsum_kernel(Dt dt, const void* x, void* y, int64_t outer, int64_t n, int64_t inner, bool exclusive, bool reverse) {
  bool fl = is_float_dt(dt);
  RLX_GRID_STRIDE(line, outer * inner) {
    int64_t base = (line / inner) * n * inner + line % inner;
    double sf = 0;
    int64_t si = 0;
    for (int64_t t = 0; t < n; ++t) {
      int64_t j = base + (reverse ? n - 1 - t : t) * inner;
      if (fl) {
        double v = load_f64(x, dt, j);
        if (exclusive) store_f64(y, dt, j, sf);
        sf += v;
        if (!exclusive) store_f64(y, dt, j, sf);
      } else {
        int64_t v = load_i64(x, dt, j);
        if (exclusive) store_i64(y, dt, j, si);
        si = wrap_add(si, v);
        if (!exclusive) store_i64(y, dt, j, si);
      }
    }
  }
}

// An order-preserving unsigned key: NaN above everything, -0 equal to +0.
__device__ __forceinline__ uint64_t sort_key(const void* x, Dt dt, int64_t off) {
  if (is_float_dt(dt)) {
    double d = load_f64(x, dt, off);
    if (d != d) return ~uint64_t{0};
    if (d == 0) d = 0;
    uint64_t b = static_cast<uint64_t>(__double_as_longlong(d));
    return (b >> 63) ? ~b : (b | (uint64_t{1} << 63));
  }
  return static_cast<uint64_t>(load_i64(x, dt, off)) ^ (uint64_t{1} << 63);
}

// Bitonic sort of (key, index) pairs in shared memory: the index tie-break makes it stable.
__global__ void sort_kernel(Dt dt, int elem_bytes, const void* x, void* vals, void* inds, Dt ind_dt, int64_t n, int64_t inner, int64_t k,
                            bool descending, int P) {
  __shared__ uint64_t key[kMaxSortLine];
  __shared__ int32_t idx[kMaxSortLine];
  int64_t line = blockIdx.x;
  int64_t o = line / inner, i = line % inner;
  int64_t base = o * n * inner + i;
  for (int t = threadIdx.x; t < P; t += blockDim.x) {
    if (t < n) {
      uint64_t kk = sort_key(x, dt, base + t * inner);
      key[t] = descending ? ~kk : kk;
    } else {
      key[t] = ~uint64_t{0};
    }
    idx[t] = t;
  }
  __syncthreads();
  for (int size = 2; size <= P; size <<= 1) {
    for (int stride = size >> 1; stride > 0; stride >>= 1) {
      for (int t = threadIdx.x; t < P; t += blockDim.x) {
        int u = t ^ stride;
        if (u > t) {
          bool up = (t & size) == 0;
          bool gt = key[t] > key[u] || (key[t] == key[u] && idx[t] > idx[u]);
          if (gt == up) {
            uint64_t tk = key[t];
            key[t] = key[u];
            key[u] = tk;
            int32_t ti = idx[t];
            idx[t] = idx[u];
            idx[u] = ti;
          }
        }
      }
      __syncthreads();
    }
  }
  int64_t obase = o * k * inner + i;
  for (int t = threadIdx.x; t < k; t += blockDim.x) {
    int64_t src = base + static_cast<int64_t>(idx[t]) * inner, dst = obase + static_cast<int64_t>(t) * inner;
    switch (elem_bytes) {
      case 1: static_cast<uint8_t*>(vals)[dst] = static_cast<const uint8_t*>(x)[src]; break;
      case 2: static_cast<uint16_t*>(vals)[dst] = static_cast<const uint16_t*>(x)[src]; break;
      case 4: static_cast<uint32_t*>(vals)[dst] = static_cast<const uint32_t*>(x)[src]; break;
      default: static_cast<uint64_t*>(vals)[dst] = static_cast<const uint64_t*>(x)[src]; break;
    }
    store_i64(inds, ind_dt, dst, idx[t]);
  }
}

int elem_size(Dt dt) {
  switch (dt) {
    case Dt::f16:
    case Dt::bf16:
    case Dt::i16: return 2;
    case Dt::f32:
    case Dt::i32: return 4;
    case Dt::f64:
    case Dt::i64:
    case Dt::c64: return 8;
    default: return 1;
  }
}

}  // namespace

// How many blocks share each output of a block-per-output reduction: more than one only where
// the outputs are too few to fill the GPU and each is long.
int block_splits(const Space& kept, const Space& red) {
  int64_t n_out = 1, n_red = 1;
  for (int d = 0; d < kept.rank; ++d) n_out *= kept.shape[d];
  for (int d = 0; d < red.rank; ++d) n_red *= red.shape[d];
  constexpr int64_t kPerBlock = 16384;
  if (n_out >= 128 || n_red < 2 * kPerBlock) return 1;
  return static_cast<int>(std::min<int64_t>(512 / std::max<int64_t>(n_out, 1) + 1, n_red / kPerBlock));
}

size_t reduce_scratch_bytes(Red kind, Dt dt, const Space& kept, const Strides&, const Space& red, const Strides& rs) {
  int64_t n_out = 1;
  for (int d = 0; d < kept.rank; ++d) n_out *= kept.shape[d];
  LinePlan p = plan_line(kind, dt, kept, red, rs);
  if (p.use) return p.splits == 1 ? 0 : static_cast<size_t>(n_out * p.splits) * sizeof(LinePart);
  bool inner_reduced = red.rank > 0 && rs.s[red.rank - 1] == 1;
  int splits = inner_reduced ? block_splits(kept, red) : 1;
  return splits == 1 ? 0 : static_cast<size_t>(n_out * splits) * sizeof(Acc);
}

void launch_reduce(Red kind, Dt dt, Dt out, const void* x, void* y, const Space& kept, const Strides& ks, const Space& red,
                   const Strides& rs, void* scratch, cudaStream_t s) {
  int64_t n_out = 1, n_red = 1;
  for (int d = 0; d < kept.rank; ++d) n_out *= kept.shape[d];
  for (int d = 0; d < red.rank; ++d) n_red *= red.shape[d];
  if (n_out == 0) return;
  // The innermost reduced dim is contiguous in memory: a block per output reads it coalesced.
  bool inner_reduced = red.rank > 0 && rs.s[red.rank - 1] == 1;
  bool outputs_adjacent = kept.rank > 0 && ks.s[kept.rank - 1] == 1;
  if (LinePlan p = plan_line(kind, dt, kept, red, rs); p.use) {
    bool vec = n_red % 4 == 0 && reinterpret_cast<uintptr_t>(x) % 16 == 0;
    for (int d = 0; d < kept.rank; ++d) vec = vec && (kept.shape[d] == 1 || ks.s[d] % 4 == 0);
    int64_t loads = vec ? p.chunk / 4 : p.chunk;
    unsigned threads = static_cast<unsigned>(std::min<int64_t>(p.splits > 1 ? 256 : 1024, std::max<int64_t>(32, (loads / 8 + 31) / 32 * 32)));
    bool is_max = kind == Red::max || kind == Red::argmax, arg = kind == Red::argmax || kind == Red::argmin;
    auto* xf = static_cast<const float*>(x);
    auto* parts = static_cast<LinePart*>(scratch);
    dim3 grid(static_cast<unsigned>(p.splits), static_cast<unsigned>(n_out));
    if (vec) launch_after(reduce_line_f32_kernel<4>, grid, threads, 0, s, is_max, arg, xf, y, out, kept, ks, n_red, p.chunk, parts);
    else launch_after(reduce_line_f32_kernel<1>, grid, threads, 0, s, is_max, arg, xf, y, out, kept, ks, n_red, p.chunk, parts);
    if (p.splits > 1) launch_after(line_merge_kernel, static_cast<unsigned>(n_out), 32, 0, s, is_max, arg, static_cast<const LinePart*>(parts), p.splits, y, out);
  } else if (inner_reduced && n_red >= 64) {
    int splits = block_splits(kept, red);
    if (splits > 1) {
      int64_t chunk = (n_red + splits - 1) / splits;
      int64_t last_len = red.rank ? red.shape[red.rank - 1] : 1;
      auto* parts = static_cast<Acc*>(scratch);
      launch_after(reduce_block_split_kernel, dim3(static_cast<unsigned>(splits), static_cast<unsigned>(n_out)), kThreads, 0, s, kind, dt, x, kept, ks, red, rs,
                   n_red, chunk, parts);
      launch_after(block_merge_kernel, grid_for(n_out), kThreads, 0, s, kind, dt, out, y, static_cast<const Acc*>(parts), splits, n_out, last_len);
    } else {
      launch_after(reduce_block_kernel, static_cast<unsigned>(n_out), kThreads, 0, s, kind, dt, out, x, y, kept, ks, red, rs, n_red);
    }
  } else if (outputs_adjacent && n_red >= 16) {
    launch_after(reduce_cols_kernel, static_cast<unsigned>((n_out + 31) / 32), dim3(32, 32), 0, s, kind, dt, out, x, y, kept, ks, red, rs, n_out, n_red);
  } else {
    launch_after(reduce_thread_kernel, grid_for(n_out), kThreads, 0, s, kind, dt, out, x, y, kept, ks, red, rs, n_out, n_red);
  }
}

void launch_cumsum(Dt dt, const void* x, void* y, int64_t outer, int64_t n, int64_t inner, bool exclusive, bool reverse, cudaStream_t s) {
  if (outer * inner == 0 || n == 0) return;
  cumsum_kernel<<<grid_for(outer * inner), kThreads, 0, s>>>(dt, x, y, outer, n, inner, exclusive, reverse);
}

void launch_sort(Dt dt, const void* x, void* vals, void* inds, Dt ind_dt, int64_t outer, int64_t n, int64_t inner, int64_t k,
                 bool descending, cudaStream_t s) {
  if (outer * inner == 0 || k == 0) return;
  int P = 1;
  while (P < n) P <<= 1;
  sort_kernel<<<static_cast<unsigned>(outer * inner), 256, 0, s>>>(dt, elem_size(dt), x, vals, inds, ind_dt, n, inner, k, descending, P);
}

}  // namespace rlx::backends::cuda
