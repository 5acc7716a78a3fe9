// Helpers shared by the type-inference rules.
#pragma once
#include <algorithm>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::ops {

[[noreturn]] inline void type_error(ir::Op op, const std::string& msg) {
  throw Error(ErrorKind::invalid_graph, cat(ir::op_keyword(op), ": ", msg));
}

// Negative axes count from the end.
int64_t normalize_axis(ir::Op op, int64_t axis, size_t rank, const char* what = "axis");
std::vector<int64_t> normalize_axes(ir::Op op, const std::vector<int64_t>& axes, size_t rank);

// numpy broadcasting of two shapes; symbolic dims must be equal unless one side is 1.
Shape broadcast_shapes(ir::Op op, const Shape& a, const Shape& b);

void require_same_dtype(ir::Op op, const std::vector<ir::Type>& in, size_t first, size_t last);
void require_dtype(ir::Op op, const ir::Type& t, bool ok, const char* what, const char* role = "input");
void require_rank(ir::Op op, const ir::Type& t, size_t rank, const char* role = "input");

// Output dim of a sliding window: floor((size + pad_lo + pad_hi - dilation*(k-1) - 1) / stride) + 1.
// Symbolic sizes are allowed only with stride 1; arithmetic past int64 is a type error.
Dim window_out_dim(ir::Op op, const Dim& size, int64_t pad_lo, int64_t pad_hi, int64_t kernel, int64_t stride, int64_t dilation);

}  // namespace rlx::ops
