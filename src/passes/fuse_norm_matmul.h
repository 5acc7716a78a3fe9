// rms_norm(x, g) read only by dequant_matmuls becomes their prologue: each takes x and g with
// norm_eps and normalizes x as it reads it, where the device claims that. A decode step's
// projections read a single row; normalizing it inside each GEMV costs a few hundred loads from
// L2 and saves a kernel (the layer's input norm, the MLP's norm, the final norm).
#pragma once
#include "ir/graph.h"
#include "passes/dispatch.h"

namespace rlx::passes {

ir::Graph fuse_norm_into_matmuls(const ir::Graph& g, const KernelClaims& device);

}  // namespace rlx::passes
