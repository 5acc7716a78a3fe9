// Sibling matmuls: dequant_matmuls of one row x over constant weights of one layout (a decode
// step's q, k and v projections) become one dequant_matmul over the weights stacked by rows,
// followed by slices of its output, where the device claims the larger product. Each slice reads
// one aligned run of the product's bytes, so the memory plan makes it a view: three GEMV
// kernels become one that reads x once, and the chain to attention is one kernel shorter.
// Only single-row products are joined: with more rows the slices would be strided copies.
#pragma once
#include "ir/graph.h"
#include "passes/dispatch.h"

namespace rlx::passes {

ir::Graph fuse_sibling_matmuls(const ir::Graph& g, const KernelClaims& device);

}  // namespace rlx::passes
