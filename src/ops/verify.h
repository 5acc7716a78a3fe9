// The full verifier: structure, attribute schema, inferred types, level legality.
#pragma once
#include "ir/graph.h"

namespace rlx::ops {

// Throws rlx::Error(invalid_graph) listing every problem found (up to a cap), each naming
// its node and saying what is wrong.
void verify(const ir::Graph& g, ir::Level level);
inline void verify(const ir::Graph& g) { verify(g, g.level()); }

}  // namespace rlx::ops
