// Memory planning and scheduling to LIR: liveness over the node order, in-place reuse for
// elementwise ops, views for reshapes and for slices that read one aligned run of their input's
// bytes (the q, k and v thirds of one projection), and arena offsets where no two live buffers
// overlap.
#pragma once
#include "ir/graph.h"

namespace rlx::passes {

constexpr int64_t kArenaAlignment = 64;

struct PlanOptions {
  bool in_place = true;  // let elementwise outputs reuse a dying input's buffer
  bool views = true;     // let reshapes and contiguous slices alias their input
  // Bytes are shared (a later buffer over an earlier one's, or an in-place output) only where
  // every node touching the earlier buffer is an ancestor of the node that writes the later one:
  // a device that overlaps independent steps orders them by the bytes they share, and reuse
  // across independent branches (a training step's loss and accuracy beside its gradient) would
  // chain them. Graphs of more than kBranchPlanMaxNodes nodes plan without it.
  bool keep_branches_apart = false;
  // Off for a graph whose nodes stand for a code generator's kernel calls (codegen/cortexm plans
  // its arena over one node per call): only their outputs, liveness and views matter, and they
  // are not IR ops to verify.
  bool verify = true;
  // Every buffer starts at a multiple of this (a power of two): 64 for caches and vector loads;
  // a microcontroller's arena packs tighter.
  int64_t alignment = kArenaAlignment;
};
constexpr int kBranchPlanMaxNodes = 4096;  // the ancestry is n² bits, the placement checks pairs

// Needs static shapes. Returns the LIR graph: same nodes, every value placed.
ir::Graph plan_memory(const ir::Graph& g, const PlanOptions& opts = {});

// The root a value's bytes belong to, following views (for executors and checks).
ir::ValueId placement_root(const ir::Graph& lir, ir::ValueId v);
// Where a value's bytes start within its root's (nonzero only through slice views).
int64_t placement_offset(const ir::Graph& lir, ir::ValueId v);
// The bytes of a value that is a constant of the program or a view into one; null otherwise.
const void* constant_bytes(const ir::Graph& lir, ir::ValueId v);

}  // namespace rlx::passes
