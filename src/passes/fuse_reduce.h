// A reduction absorbs the elementwise ops that make the value it reduces (mir.fused_reduce),
// where the device claims it: Σ x·mask, Σ x², Σ exp(x − max) are computed as they are read,
// never stored. An absorbed op that other nodes also read is computed twice — it is elementwise
// over the reduced shape, so the reduction reads its inputs instead of its value, and the
// kernel that made the value for the reduction alone disappears.
#pragma once
#include "ir/graph.h"
#include "passes/dispatch.h"

namespace rlx::passes {

ir::Graph fuse_reduce_prologues(const ir::Graph& g, const KernelClaims& device);

}  // namespace rlx::passes
