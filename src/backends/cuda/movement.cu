// Data movement: one strided copy for transpose / broadcast / slice / concat, pad, gather and
// scatter. Elements are moved by size (1, 2, 4 or 8 bytes), so every dtype but i4 is covered.
#include "backends/cuda/scatter_tile.cuh"

namespace rlx::backends::cuda {

namespace {

template <class T>
__global__ void strided_copy_kernel(const T* src, int64_t src_base, const __grid_constant__ Strides ss, T* dst, int64_t dst_base, const __grid_constant__ Strides ds, const __grid_constant__ Space sp, int64_t n) {
  RLX_AFTER_PRODUCERS();
  RLX_GRID_STRIDE(i, n) {
    int64_t is = src_base, id = dst_base, r = i;
    for (int d = sp.rank - 1; d > 0; --d) {
      int64_t c = coord_step(r, sp.shape[d]);
      is += c * ss.s[d];
      id += c * ds.s[d];
    }
    if (sp.rank > 0) is += r * ss.s[0], id += r * ds.s[0];
    dst[id] = src[is];
  }
}

template <class T>
__global__ void pad_kernel(const T* x, T* y, const __grid_constant__ Space out, const __grid_constant__ PadSpec p, int64_t n) {
  RLX_AFTER_PRODUCERS();
  T value;
  memcpy(&value, &p.value, sizeof(T));
  RLX_GRID_STRIDE(i, n) {
    int64_t r = i, src = 0;
    bool inside = true;
    for (int d = out.rank - 1; d >= 0; --d) {
      int64_t c = coord_step(r, out.shape[d]);
      int64_t q = c - p.lo[d], len = p.in_shape[d];
      if (p.interior[d] > 0 && q >= 0) {
        if (q % (p.interior[d] + 1) != 0) inside = false;
        q /= p.interior[d] + 1;
      }
      if (q < 0 || q >= len) {
        if (p.mode == 0) inside = false;
        else if (p.mode == 2) q = q < 0 ? 0 : len - 1;
        else q = q < 0 ? -q : 2 * (len - 1) - q;  // reflect, edge not repeated
      }
      src += q * p.in_stride[d];
    }
    y[i] = inside ? x[src] : value;
  }
}

template <class T>
__global__ void gather_kernel(const T* x, const void* idx, Dt idx_dt, T* y, int64_t outer, int64_t n, int64_t K, int64_t inner,
                              ErrorWord* err, int node) {
  RLX_AFTER_PRODUCERS();
  int64_t total = outer * K * inner;
  RLX_GRID_STRIDE(g, total) {
    int64_t i = g % inner, k = (g / inner) % K, o = g / (inner * K);
    int64_t j = load_index(idx, idx_dt, k);
    if (j < 0 || j >= n) {
      report_index_error(err, node, j, n);
      y[g] = T{};
      continue;
    }
    y[g] = x[(o * n + j) * inner + i];
  }
}

__global__ void scatter_kernel(Dt dt, int reduce, void* y, const void* idx, Dt idx_dt, const void* upd, int64_t outer, int64_t n, int64_t K,
                               int64_t inner, ErrorWord* err, int node) {
  RLX_AFTER_PRODUCERS();
  scatter_cols(dt, reduce, y, idx, idx_dt, upd, outer, n, K, inner, err, node, static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x,
               static_cast<int64_t>(gridDim.x) * blockDim.x);
}

// last[k] = 1 when no later index repeats idx[k]: of updates to the same index the last one
// wins (as in the sequential definition). Once per launch, not once per updated element (a
// 512-row KV-cache write checked 512 indices for each of its 500k elements: 89 µs).
// One block per index: its threads compare the later ones in parallel.
__global__ void scatter_last_kernel(const void* idx, Dt idx_dt, int64_t K, uint8_t* last) {
  RLX_AFTER_PRODUCERS();
  int64_t k = blockIdx.x;
  int64_t j = load_index(idx, idx_dt, k);
  int dup = 0;
  for (int64_t k2 = k + 1 + threadIdx.x; k2 < K && !dup; k2 += blockDim.x) dup = load_index(idx, idx_dt, k2) == j;
  dup = __syncthreads_or(dup);
  if (threadIdx.x == 0) last[k] = !dup;
}

// Assignment with one thread per updated element, stored where last[k] says so.
template <class T>
__global__ void scatter_set_kernel(T* y, const void* idx, Dt idx_dt, const T* upd, int64_t outer, int64_t n, int64_t K, int64_t inner,
                                   const uint8_t* last, ErrorWord* err, int node) {
  RLX_AFTER_PRODUCERS();
  RLX_GRID_STRIDE(g, outer * K * inner) {
    int64_t i = g % inner, ok = g / inner, k = ok % K, o = ok / K;
    int64_t j = load_index(idx, idx_dt, k);
    if (j < 0 || j >= n) {
      report_index_error(err, node, j, n);
      continue;
    }
    if (last[k]) y[(o * n + j) * inner + i] = upd[g];
  }
}

int dt_bytes(Dt d) {
  switch (d) {
    case Dt::i8: case Dt::u8: case Dt::boolean: return 1;
    case Dt::f16: case Dt::bf16: case Dt::i16: return 2;
    case Dt::f32: case Dt::i32: return 4;
    default: return 8;  // f64, c64, i64
  }
}

template <class F>
void by_size(int bytes, F&& f) {
  switch (bytes) {
    case 1: f(uint8_t{}); break;
    case 2: f(uint16_t{}); break;
    case 4: f(uint32_t{}); break;
    case 8: f(uint64_t{}); break;
    default: f(uint4{}); break;  // c128: 16 bytes, 16-aligned as every tensor is
  }
}

}  // namespace

void launch_strided_copy(int elem_bytes, const void* src, int64_t src_base, const Strides& ss, void* dst, int64_t dst_base,
                         const Strides& ds, const Space& sp, cudaStream_t s) {
  int64_t n = 1;
  for (int d = 0; d < sp.rank; ++d) n *= sp.shape[d];
  if (n == 0) return;
  by_size(elem_bytes, [&](auto t) {
    using T = decltype(t);
    launch_after(strided_copy_kernel<T>, grid_for(n), kThreads, 0, s, static_cast<const T*>(src), src_base, ss, static_cast<T*>(dst), dst_base, ds, sp, n);
  });
}

void launch_pad(int elem_bytes, const void* x, void* y, const Space& out, const PadSpec& p, cudaStream_t s) {
  int64_t n = 1;
  for (int d = 0; d < out.rank; ++d) n *= out.shape[d];
  if (n == 0) return;
  by_size(elem_bytes, [&](auto t) {
    using T = decltype(t);
    launch_after(pad_kernel<T>, grid_for(n), kThreads, 0, s, static_cast<const T*>(x), static_cast<T*>(y), out, p, n);
  });
}

void launch_gather(int elem_bytes, const void* x, const void* idx, Dt idx_dt, void* y, int64_t outer, int64_t n, int64_t K, int64_t inner,
                   ErrorWord* err, int node, cudaStream_t s) {
  int64_t total = outer * K * inner;
  if (total == 0) return;
  by_size(elem_bytes, [&](auto t) {
    using T = decltype(t);
    launch_after(gather_kernel<T>, grid_for(total), kThreads, 0, s, static_cast<const T*>(x), idx, idx_dt, static_cast<T*>(y), outer, n, K, inner, err, node);
  });
}

void launch_scatter(Dt dt, int reduce, void* y, const void* idx, Dt idx_dt, const void* upd, int64_t outer, int64_t n, int64_t K,
                    int64_t inner, ErrorWord* err, int node, cudaStream_t s, uint8_t* last) {
  if (outer * inner == 0 || K == 0) return;
  if (reduce == 0 && K > 1 && last) {  // plain stores: every update in parallel (a KV cache's new rows)
    int64_t total = outer * K * inner;
    launch_after(scatter_last_kernel, static_cast<unsigned>(K), 128, 0, s, idx, idx_dt, K, last);
    by_size(dt_bytes(dt), [&](auto t) {
      using T = decltype(t);
      launch_after(scatter_set_kernel<T>, grid_for(total), kThreads, 0, s, static_cast<T*>(y), idx, idx_dt, static_cast<const T*>(upd), outer, n, K, inner, last,
                                                                 err, node);
    });
    return;
  }
  launch_after(scatter_kernel, grid_for(outer * inner), kThreads, 0, s, dt, reduce, y, idx, idx_dt, upd, outer, n, K, inner, err, node);
}

}  // namespace rlx::backends::cuda
