// scatter's per-column work for any schedule: movement.cu's kernel runs it over a grid-stride
// loop, the decode megakernel (megakernel.cu) over its blocks' tiles.
#pragma once
#include "backends/cuda/common.cuh"

namespace rlx::backends::cuda {

__device__ __forceinline__ int64_t load_index(const void* idx, Dt dt, int64_t k) {
  return dt == Dt::i32 ? static_cast<const int32_t*>(idx)[k] : static_cast<const int64_t*>(idx)[k];
}

// reduce: 0 none, 1 add, 2 max, 3 min — applied in index order, as the reference does.
// Columns col = start, start + stride, … of the outer × inner ones, each through every update.
__device__ __forceinline__ void scatter_cols(Dt dt, int reduce, void* y, const void* idx, Dt idx_dt, const void* upd, int64_t outer, int64_t n, int64_t K,
                                             int64_t inner, ErrorWord* err, int node, int64_t start, int64_t stride) {
  bool fl = is_float_dt(dt);
  for (int64_t col = start; col < outer * inner; col += stride) {
    int64_t o = col / inner, i = col % inner;
    for (int64_t k = 0; k < K; ++k) {
      int64_t j = load_index(idx, idx_dt, k);
      if (j < 0 || j >= n) {
        report_index_error(err, node, j, n);
        return;
      }
      int64_t d = (o * n + j) * inner + i, g = (o * K + k) * inner + i;
      if (reduce == 0) {
        if (fl) store_f64(y, dt, d, load_f64(upd, dt, g));
        else store_i64(y, dt, d, load_i64(upd, dt, g));
      } else if (fl) {
        double cur = load_f64(y, dt, d), v = load_f64(upd, dt, g);
        store_f64(y, dt, d, reduce == 1 ? cur + v : reduce == 2 ? (cur < v ? v : cur) : (v < cur ? v : cur));  // std::max / std::min
      } else {
        int64_t cur = load_i64(y, dt, d), v = load_i64(upd, dt, g);
        store_i64(y, dt, d, reduce == 1 ? wrap_add(cur, v) : reduce == 2 ? (cur > v ? cur : v) : (cur < v ? cur : v));
      }
    }
  }
}

}  // namespace rlx::backends::cuda
