// Matmul epilogues: a dot_general whose only reader is an elementwise region (or one
// elementwise op) of the same shape becomes mir.fused_dot, where the device claims it — the
// bias, activation, residual and cast then run on the product before it is stored. A
// dequant_matmul whose only reader is add(·, r) takes r as its addend input, where the device
// claims that (a decode step's residual adds, stored with the GEMV's product).
#pragma once
#include "ir/graph.h"
#include "passes/dispatch.h"

namespace rlx::passes {

ir::Graph fuse_matmul_epilogues(const ir::Graph& g, const KernelClaims& device);

}  // namespace rlx::passes
