// Graph clean-up passes: constant folding, common-subexpression elimination, dead code.
#pragma once
#include <functional>

#include "ir/graph.h"
#include "rlx/tensor.h"

namespace rlx::passes {

// Evaluates one node on constant inputs (the reference backend provides it).
using NodeEvaluator =
    std::function<std::vector<Tensor>(ir::Op op, const ir::Attrs& attrs, const std::vector<Tensor>& in, const std::vector<ir::Type>& out)>;

// Replaces nodes whose inputs are all constants (and iota) by constants, when their static
// outputs hold at most `max_elements` elements (big broadcasts stay lazy).
ir::Graph fold_constants(const ir::Graph& g, const NodeEvaluator& eval, int64_t max_elements = 1 << 16);
ir::Graph eliminate_common_subexpressions(const ir::Graph& g);
ir::Graph eliminate_dead_code(const ir::Graph& g);

}  // namespace rlx::passes
