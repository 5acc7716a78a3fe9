// Index maps shared by the devices' schedules: how an operand's elements are addressed over an
// iteration space. Broadcasting (numpy's rule: dims aligned at the right, size-1 dims repeat)
// is a stride of 0; collapsing merges the dims every operand walks contiguously, so kernels
// loop over as few dims as the data allows. (The reference backend keeps its own, naive.)
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "util/strides.h"

namespace rlx::codegen {

using rlx::contiguous_strides;

// Element strides of a contiguous `in` over the dims of `out` it broadcasts to (0 where it repeats).
std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& out, const std::vector<int64_t>& in);

// Drops size-1 dims of `shape` and merges each dim into the one before it where every operand's
// strides allow (stride[d-1] == stride[d] · shape[d]); `strides` (one vector per operand, over
// `shape`'s dims) are rewritten to match.
void collapse_dims(std::vector<int64_t>& shape, const std::vector<std::vector<int64_t>*>& strides);

// A possibly negative axis counted from the end → its index in [0, rank).
inline int64_t normalize_axis(int64_t axis, size_t rank) { return axis < 0 ? axis + static_cast<int64_t>(rank) : axis; }

}  // namespace rlx::codegen
