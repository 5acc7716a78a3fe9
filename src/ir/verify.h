// Structural verification: SSA order, arity, attribute schema, level legality.
// Type checking lives in src/ops/verify.h (it needs each op's inference rule).
#pragma once
#include <string>
#include <vector>

#include "ir/graph.h"

namespace rlx::ir {

// "node #12 mir.add loc("fc1")": how error messages point at a node.
std::string describe_node(const Graph& g, int node_index);
// Appends one message per problem found; never throws.
void verify_structure(const Graph& g, std::vector<std::string>& problems);
// Legality of the ops for a level: MIR allows HIR ops only where a device claimed them
// natively; LIR needs static shapes and a placement for every value.
void verify_level(const Graph& g, Level level, std::vector<std::string>& problems);

}  // namespace rlx::ir
