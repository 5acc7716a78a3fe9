// Memory planning and scheduling to LIR: liveness over the node order, in-place reuse for
// elementwise ops, views for reshapes, and arena offsets where no two live buffers overlap.
#pragma once
#include "ir/graph.h"

namespace rlx::passes {

constexpr int64_t kArenaAlignment = 64;

struct PlanOptions {
  bool in_place = true;  // let elementwise outputs reuse a dying input's buffer
  bool views = true;     // let reshapes alias their input
};

// Needs static shapes. Returns the LIR graph: same nodes, every value placed.
ir::Graph plan_memory(const ir::Graph& g, const PlanOptions& opts = {});

// The root a value's bytes belong to, following views (for executors and checks).
ir::ValueId placement_root(const ir::Graph& lir, ir::ValueId v);

}  // namespace rlx::passes
