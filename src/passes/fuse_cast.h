// A cast to a half type (the operand of the half-precision matmuls after it) folds into the op
// that made the value, where the device claims that op storing the type itself (out=):
// - a norm: its other readers (a post-LN transformer's residual) keep the norm as it was, and
//   the half-typed copy is a second norm beside it, so the matmuls wait for one kernel instead
//   of two in a row and the two norms run side by side;
// - attention, read only by the cast (through reshapes): it stores the half type, and the
//   reshapes carry it.
#pragma once
#include "ir/graph.h"
#include "passes/dispatch.h"

namespace rlx::passes {

ir::Graph fuse_cast_into_producer(const ir::Graph& g, const KernelClaims& device);

}  // namespace rlx::passes
