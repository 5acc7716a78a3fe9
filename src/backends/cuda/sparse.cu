// CSR index arrays checked on the device before cuSPARSE reads them (sparse.cpp), and the row of
// each stored entry. A bad array is reported through the error word and replaced by an empty
// matrix (row pointers all zero), so the product runs on nothing instead of reading out of
// bounds — no host sync, no crash.
#include "backends/cuda/common.cuh"

namespace rlx::backends::cuda {

namespace {

// bad[0] = 1 when row_ptr is not 0 … nnz non-decreasing or a column is outside [0, n).
__global__ void csr_check_kernel(const int64_t* ptr, int64_t m, const int64_t* cols, int64_t nnz, int64_t n, int* bad, ErrorWord* err, int node) {
  RLX_AFTER_PRODUCERS();
  RLX_GRID_STRIDE(g, m + 1 + nnz) {
    if (g <= m) {
      int64_t p = ptr[g];
      bool ok = p >= 0 && p <= nnz && (g > 0 || p == 0) && (g < m || p == nnz) && (g == m || p <= ptr[g + 1]);
      if (!ok) {
        atomicExch(bad, 1);
        report_index_error(err, node, p, nnz + 1);
      }
    } else if (cols) {
      int64_t c = cols[g - m - 1];
      if (c < 0 || c >= n) {
        atomicExch(bad, 1);
        report_index_error(err, node, c, n);
      }
    }
  }
}

__global__ void csr_safe_ptr_kernel(const int64_t* ptr, int64_t m, const int* bad, int64_t* safe) {
  RLX_AFTER_PRODUCERS();
  RLX_GRID_STRIDE(i, m + 1) safe[i] = *bad ? 0 : ptr[i];
}

// One thread a row: its entries get the row's index.
__global__ void csr_row_ids_kernel(const int64_t* ptr, int64_t m, const int* bad, int64_t* rows) {
  RLX_AFTER_PRODUCERS();
  if (*bad) return;
  RLX_GRID_STRIDE(i, m)
  for (int64_t p = ptr[i]; p < ptr[i + 1]; ++p) rows[p] = i;
}

}  // namespace

void launch_csr_check(const int64_t* ptr, int64_t m, const int64_t* cols, int64_t nnz, int64_t n, int* bad, int64_t* safe_ptr, ErrorWord* err, int node,
                      cudaStream_t s) {
  cudaMemsetAsync(bad, 0, sizeof(int), s);
  launch_after(csr_check_kernel, grid_for(m + 1 + nnz), kThreads, 0, s, ptr, m, cols, nnz, n, bad, err, node);
  if (safe_ptr) launch_after(csr_safe_ptr_kernel, grid_for(m + 1), kThreads, 0, s, ptr, m, static_cast<const int*>(bad), safe_ptr);
}

void launch_csr_row_ids(const int64_t* ptr, int64_t m, const int* bad, int64_t* rows, cudaStream_t s) {
  if (m == 0) return;
  launch_after(csr_row_ids_kernel, grid_for(m), kThreads, 0, s, ptr, m, bad, rows);
}

}  // namespace rlx::backends::cuda
