// A norm followed by a cast to another float type (the half-precision operand of the matmuls
// after it) becomes a norm that stores that type itself (out=), where the device claims it. A
// norm read by both the cast and something else (a post-LN transformer's residual) stays for
// the others, and the half-typed copy is a second norm beside it: the matmuls then wait for one
// kernel instead of two in a row, and the two norms run side by side.
#pragma once
#include "ir/graph.h"
#include "passes/dispatch.h"

namespace rlx::passes {

ir::Graph fuse_norm_cast(const ir::Graph& g, const KernelClaims& device);

}  // namespace rlx::passes
