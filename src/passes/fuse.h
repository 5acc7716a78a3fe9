// Elementwise fusion: chains of elementwise ops over one iteration space become a single
// mir.elementwise_region node (one pass over memory), where the device claims the region.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "passes/dispatch.h"

namespace rlx::passes {

ir::Graph fuse_elementwise(const ir::Graph& g, const KernelClaims& device);

// Some single-output nodes of g (in order, producers first) as the body of a fused node: the
// values they read from elsewhere become its inputs (scalar constants are copied in), and
// `value_of` maps g's values to the body's. The caller sets the outputs.
struct FusedBody {
  ir::Graph graph;
  std::vector<ir::ValueId> inputs;  // g's values, in the order of the body's inputs
  std::map<ir::ValueId, ir::ValueId> value_of;
};
FusedBody fused_body(const ir::Graph& g, const std::vector<int>& members, const std::string& name);

}  // namespace rlx::passes
