// Reverse-mode automatic differentiation on the IR. HIR ops with their own gradient rule stay
// (so fused kernels survive into training); the others are decomposed first.
#pragma once
#include <vector>

#include "ir/graph.h"

namespace rlx::passes {

// A graph with the same inputs whose outputs are the original outputs followed by the
// gradient of output `loss` (a float scalar) with respect to each input in `wrt` (in order).
// Throws rlx::Error naming the op and node when a value the loss depends on flows through an
// op without a gradient rule.
ir::Graph value_and_grad(const ir::Graph& g, size_t loss, const std::vector<ir::ValueId>& wrt);

}  // namespace rlx::passes
