// rope(view(rms_norm(x, g)), pos) → rope(view(x), pos, g) with norm_eps, where the device claims
// it: Qwen3 normalizes each head's q and k over head_dim and rotates them right after, and a
// device that does both in one kernel saves a pass over q and k (two kernels a layer). The
// views between them (reshapes, transposes that keep the last axis last) commute with a norm
// over the last axis, so they move in front of it.
#pragma once
#include "ir/graph.h"
#include "passes/dispatch.h"

namespace rlx::passes {

ir::Graph fuse_norm_rope(const ir::Graph& g, const KernelClaims& device);

}  // namespace rlx::passes
