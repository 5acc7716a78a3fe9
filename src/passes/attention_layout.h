// Folds the head transposes around attention into the op: transpose(…, [0,2,1,3]) feeding q, k
// and v (and the one undoing it on the output) become attention{layout=bshd}, where the device
// claims it — the projections' [B, S, H, D] tensors are read and written in place.
#pragma once
#include "ir/graph.h"
#include "passes/dispatch.h"

namespace rlx::passes {

ir::Graph fold_attention_transposes(const ir::Graph& g, const KernelClaims& device);

}  // namespace rlx::passes
