// Decomposition without a device: every HIR op becomes MIR primitives (autodiff and codegen
// targets work on pure MIR).
#pragma once
#include "ir/graph.h"

namespace rlx::passes {

ir::Graph decompose(const ir::Graph& g);

}  // namespace rlx::passes
