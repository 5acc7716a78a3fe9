// A CSR matrix held elsewhere (tensors, a file's arrays), viewed for the host-side sparse
// algorithms: the iterative solvers and their preconditioners. Same layout as the IR's csr_* ops:
// row_ptr [rows + 1], col_idx [nnz] ascending within a row, values [nnz].
#pragma once
#include <cstdint>
#include <vector>

namespace rlx::science {

struct CsrView {
  int64_t rows = 0, cols = 0;
  const int64_t* row_ptr = nullptr;
  const int64_t* col_idx = nullptr;
  const double* values = nullptr;
  int64_t nnz() const { return rows ? row_ptr[rows] : 0; }
  // Throws rlx::Error naming the first malformed entry (util/csr.h); `what` names the caller.
  void check(const char* what) const;
};

// y = A x, rows across the thread pool.
void spmv(const CsrView& a, const double* x, double* y);

// The 2D Poisson matrix (5-point stencil, Dirichlet) on an n × n grid: 4 on the diagonal, −1 to
// each neighbour — the standard test problem (and what rlx bench poisson solves).
struct Csr {
  std::vector<int64_t> row_ptr, col_idx;
  std::vector<double> values;
  int64_t rows = 0, cols = 0;
  CsrView view() const { return {rows, cols, row_ptr.data(), col_idx.data(), values.data()}; }
};
Csr poisson_2d(int64_t n);

}  // namespace rlx::science
