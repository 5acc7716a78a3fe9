// Gated matmuls: mul(silu(x·Wgᵀ), x·Wuᵀ) with both products dequant_matmuls of one x over
// constant weights of one layout becomes a single dequant_matmul with glu=silu over the two
// weights stacked (gate rows, then up rows), where the device claims it. A SwiGLU MLP's first
// half then reads x once and its weights in one pass, and the activation is applied as the
// products are stored (decode: one GEMV kernel instead of two GEMVs and an elementwise pass).
#pragma once
#include "ir/graph.h"
#include "passes/dispatch.h"

namespace rlx::passes {

ir::Graph fuse_gated_matmuls(const ir::Graph& g, const KernelClaims& device);

}  // namespace rlx::passes
