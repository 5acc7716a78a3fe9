// The values an output depends on (itself included): what the quantizers copy or rebuild of a
// graph, leaving the rest (a loss, its labels) behind.
#pragma once
#include <set>

#include "ir/graph.h"

namespace rlx::quant {

inline std::set<ir::ValueId> values_needed_by(const ir::Graph& g, ir::ValueId output) {
  std::vector<int> producer(g.num_values(), -1);
  for (int i = 0; i < g.num_nodes(); ++i)
    for (ir::ValueId v : g.node(i).outputs) producer[static_cast<size_t>(v)] = i;
  std::set<ir::ValueId> needed;
  std::vector<ir::ValueId> stack = {output};
  while (!stack.empty()) {
    ir::ValueId v = stack.back();
    stack.pop_back();
    if (!needed.insert(v).second) continue;
    if (int p = producer[static_cast<size_t>(v)]; p >= 0)
      for (ir::ValueId in : g.node(p).inputs) stack.push_back(in);
  }
  return needed;
}

}  // namespace rlx::quant
