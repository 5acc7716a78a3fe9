#include "science/sparse/csr.h"

#include "util/csr.h"
#include "util/thread_pool.h"

namespace rlx::science {

void CsrView::check(const char* what) const { check_csr(what, row_ptr, rows, col_idx, nnz(), cols, true); }

void spmv(const CsrView& a, const double* x, double* y) {
  parallel_for(a.rows, 2048, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      double s = 0;
      for (int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) s += a.values[p] * x[a.col_idx[p]];
      y[i] = s;
    }
  });
}

Csr poisson_2d(int64_t n) {
  Csr a;
  a.rows = a.cols = n * n;
  a.row_ptr.reserve(static_cast<size_t>(n * n + 1));
  a.col_idx.reserve(static_cast<size_t>(5 * n * n));
  a.values.reserve(static_cast<size_t>(5 * n * n));
  a.row_ptr.push_back(0);
  auto put = [&](int64_t c, double v) {
    a.col_idx.push_back(c);
    a.values.push_back(v);
  };
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      int64_t idx = i * n + j;
      if (i > 0) put(idx - n, -1);
      if (j > 0) put(idx - 1, -1);
      put(idx, 4);
      if (j + 1 < n) put(idx + 1, -1);
      if (i + 1 < n) put(idx + n, -1);
      a.row_ptr.push_back(static_cast<int64_t>(a.col_idx.size()));
    }
  return a;
}

}  // namespace rlx::science
