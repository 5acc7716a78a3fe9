// A rotated key written into its cache: scatter(c, positions, rope(x, positions, …)) along the
// rows axis becomes one rope with append_axis and c as its last input, where the device claims
// it. The rope then writes each rotated row straight into the cache (in place when the cache is
// donated), and a decode step's key chain to attention is one kernel shorter.
#pragma once
#include "ir/graph.h"
#include "passes/dispatch.h"

namespace rlx::passes {

ir::Graph fuse_rope_append(const ir::Graph& g, const KernelClaims& device);

}  // namespace rlx::passes
