// Sparse CSR by definition: the product entry by entry, and solves on the densified matrix with
// Gaussian elimination (partial pivoting) — the oracle may densify; devices never do. A malformed
// CSR (row_ptr not ascending, a column out of range) is an error naming the entry (util/csr.h).
#include <cmath>

#include "backends/reference/kernels.h"
#include "rlx/error.h"
#include "util/csr.h"
#include "util/strings.h"

namespace rlx::backends::reference {

namespace {

using ir::Op;

// Validates the index arrays (i64, as type inference requires); returns A's row count.
int64_t check(Op op, const HostView& ptr, const HostView& cols, int64_t n, bool sorted) {
  check_csr(ir::op_keyword(op), ptr.as<int64_t>(), ptr.numel - 1, cols.as<int64_t>(), cols.numel, n, sorted);
  return ptr.numel - 1;
}

void csr_matmul(const KernelArgs& a) {
  bool t = a.node.attrs.b("transpose");
  int64_t n = a.node.attrs.i("n"), k = a.in[3].shape[1];
  int64_t m = check(Op::csr_matmul, a.in[0], a.in[1], n, false);
  int64_t out_rows = t ? n : m;
  std::vector<double> y(static_cast<size_t>(out_rows * k), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = ri(a.in[0], i); p < ri(a.in[0], i + 1); ++p) {
      int64_t c = ri(a.in[1], p);
      double v = rd(a.in[2], p);
      for (int64_t j = 0; j < k; ++j) {
        if (t) y[static_cast<size_t>(c * k + j)] += v * rd(a.in[3], i * k + j);
        else y[static_cast<size_t>(i * k + j)] += v * rd(a.in[3], c * k + j);
      }
    }
  for (size_t i = 0; i < y.size(); ++i) wd(a.out[0], static_cast<int64_t>(i), y[i]);
}

void csr_solve(const KernelArgs& a) {
  int64_t n = a.in[3].shape[0], k = a.in[3].shape[1];
  check(Op::csr_solve, a.in[0], a.in[1], n, true);
  bool t = a.node.attrs.b("transpose");
  std::vector<double> d(static_cast<size_t>(n * n), 0.0), x(static_cast<size_t>(n * k));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t p = ri(a.in[0], i); p < ri(a.in[0], i + 1); ++p) {
      int64_t c = ri(a.in[1], p);
      d[static_cast<size_t>(t ? c * n + i : i * n + c)] += rd(a.in[2], p);
    }
  if (a.node.attrs.s("method") == "cholesky")  // the lower triangle, mirrored
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = i + 1; j < n; ++j) d[static_cast<size_t>(i * n + j)] = d[static_cast<size_t>(j * n + i)];
  for (int64_t i = 0; i < n * k; ++i) x[static_cast<size_t>(i)] = rd(a.in[3], i);
  for (int64_t col = 0; col < n; ++col) {
    int64_t piv = col;
    for (int64_t r = col + 1; r < n; ++r)
      if (std::fabs(d[static_cast<size_t>(r * n + col)]) > std::fabs(d[static_cast<size_t>(piv * n + col)])) piv = r;
    if (d[static_cast<size_t>(piv * n + col)] == 0) throw Error(ErrorKind::runtime, "csr_solve: the matrix is singular");
    for (int64_t j = 0; j < n; ++j) std::swap(d[static_cast<size_t>(col * n + j)], d[static_cast<size_t>(piv * n + j)]);
    for (int64_t j = 0; j < k; ++j) std::swap(x[static_cast<size_t>(col * k + j)], x[static_cast<size_t>(piv * k + j)]);
    for (int64_t r = col + 1; r < n; ++r) {
      double f = d[static_cast<size_t>(r * n + col)] / d[static_cast<size_t>(col * n + col)];
      for (int64_t j = col; j < n; ++j) d[static_cast<size_t>(r * n + j)] -= f * d[static_cast<size_t>(col * n + j)];
      for (int64_t j = 0; j < k; ++j) x[static_cast<size_t>(r * k + j)] -= f * x[static_cast<size_t>(col * k + j)];
    }
  }
  for (int64_t r = n - 1; r >= 0; --r)
    for (int64_t j = 0; j < k; ++j) {
      double s = x[static_cast<size_t>(r * k + j)];
      for (int64_t c = r + 1; c < n; ++c) s -= d[static_cast<size_t>(r * n + c)] * x[static_cast<size_t>(c * k + j)];
      x[static_cast<size_t>(r * k + j)] = s / d[static_cast<size_t>(r * n + r)];
    }
  for (size_t i = 0; i < x.size(); ++i) wd(a.out[0], static_cast<int64_t>(i), x[i]);
}

void csr_row_ids(const KernelArgs& a) {
  int64_t m = a.in[0].numel - 1, nnz = a.out[0].numel;
  check_csr("csr_row_ids", a.in[0].as<int64_t>(), m, nullptr, nnz, 0, false);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = ri(a.in[0], i); p < ri(a.in[0], i + 1); ++p) wi(a.out[0], p, i);
}

}  // namespace

void register_sparse(KernelTable& t) {
  t[static_cast<size_t>(Op::csr_matmul)] = csr_matmul;
  t[static_cast<size_t>(Op::csr_solve)] = csr_solve;
  t[static_cast<size_t>(Op::csr_row_ids)] = csr_row_ids;
}

}  // namespace rlx::backends::reference
