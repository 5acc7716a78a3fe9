// Shape specialization: binds symbolic dims to values, giving a graph with static shapes.
#pragma once
#include "ir/graph.h"
#include "rlx/shape.h"

namespace rlx::passes {

// Every symbol of the graph must be bound; throws rlx::Error naming the missing ones.
ir::Graph specialize(const ir::Graph& g, const Bindings& bindings);

// Binds the symbols of the graph's input types from concrete input shapes. Throws
// rlx::Error(invalid_argument) naming the input, the dim, the expected and the given size.
Bindings bind_inputs(const ir::Graph& g, const std::vector<std::vector<int64_t>>& shapes);

}  // namespace rlx::passes
