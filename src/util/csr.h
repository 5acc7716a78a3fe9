// Validation of a CSR matrix's index arrays before a kernel trusts them (they come from users'
// files and tensors): row_ptr from 0 to nnz without decreasing, every column inside [0, cols), and
// — where a solver needs it — columns strictly ascending within each row. Throws rlx::Error
// (runtime) naming the op and the first bad entry. col_idx may be null (row_ptr checked alone).
#pragma once
#include <cstdint>
#include <string>

namespace rlx {

void check_csr(const std::string& op, const int64_t* row_ptr, int64_t rows, const int64_t* col_idx, int64_t nnz, int64_t cols, bool strictly_sorted);

}  // namespace rlx
