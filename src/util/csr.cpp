#include "util/csr.h"

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx {

void check_csr(const std::string& op, const int64_t* row_ptr, int64_t rows, const int64_t* col_idx, int64_t nnz, int64_t cols, bool strictly_sorted) {
  if (row_ptr[0] != 0 || row_ptr[rows] != nnz)
    throw Error(ErrorKind::runtime, cat(op, ": row_ptr must run from 0 to nnz = ", nnz, ", got ", row_ptr[0], " … ", row_ptr[rows]));
  for (int64_t i = 0; i < rows; ++i) {
    if (row_ptr[i + 1] < row_ptr[i]) throw Error(ErrorKind::runtime, cat(op, ": row_ptr decreases at row ", i));
    if (!col_idx) continue;  // row_ptr alone
    for (int64_t p = row_ptr[i]; p < row_ptr[i + 1]; ++p) {
      if (col_idx[p] < 0 || col_idx[p] >= cols) throw Error(ErrorKind::runtime, cat(op, ": col_idx[", p, "] = ", col_idx[p], " is outside [0, ", cols, ")"));
      if (strictly_sorted && p > row_ptr[i] && col_idx[p] <= col_idx[p - 1])
        throw Error(ErrorKind::runtime, cat(op, ": the columns of row ", i, " must ascend without repeats (col_idx[", p - 1, "] = ", col_idx[p - 1], ", col_idx[", p, "] = ", col_idx[p], ")"));
    }
  }
}

}  // namespace rlx
