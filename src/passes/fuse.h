// Elementwise fusion: chains of elementwise ops over one iteration space become a single
// mir.elementwise_region node (one pass over memory), where the device claims the region.
#pragma once
#include "ir/graph.h"
#include "passes/dispatch.h"

namespace rlx::passes {

ir::Graph fuse_elementwise(const ir::Graph& g, const KernelClaims& device);

}  // namespace rlx::passes
