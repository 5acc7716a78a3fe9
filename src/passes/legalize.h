// Legalization: resolves every node of a graph for one device under the dispatch contract.
#pragma once
#include "ir/graph.h"
#include "passes/dispatch.h"

namespace rlx::passes {

// Returns the graph with every node native on `device` (HIR ops either claimed or decomposed,
// rewrites applied). Fills `report`. Throws rlx::Error(unsupported) listing every node that
// could not be resolved, with the report, before anything runs.
ir::Graph legalize(const ir::Graph& g, const KernelClaims& device, const DispatchOptions& opts, DispatchReport& report);

}  // namespace rlx::passes
