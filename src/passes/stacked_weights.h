// Packed weights stacked by rows (u8[Σ rows, row bytes]) for the passes that turn several
// products over one x into one (a SwiGLU's gate and up, a layer's q, k and v). A stack is shared
// by every graph built from the same parts (a runner's prefill and decode graphs), so host and
// device hold it once; it lives as long as a graph holds it.
#pragma once
#include <vector>

#include "rlx/tensor.h"

namespace rlx::passes {

Tensor stacked_rows(const std::vector<Tensor>& parts, int64_t row_bytes);

}  // namespace rlx::passes
