// Which steps of an LIR run become megakernels (megakernel.h): the stretches of consecutive
// steps that are ops of one kernel variant, and for each op the earlier ops of its stretch it
// waits for. Host-only bookkeeping, apart from the executable that uploads and launches it.
#pragma once
#include <string>
#include <vector>

#include "backends/cuda/megakernel.h"
#include "backends/cuda/step_order.h"

namespace rlx::backends::cuda {

struct MegaStretch {
  size_t first = 0, end = 0;  // steps [first, end)
  int x = 0, w = 0;           // the kernel variant (megakernel_needs)
};

// Whether a step of this kind may be a megakernel op under RLX_CUDA_MEGAKERNEL_OPS ("all" or
// a list of gemv, rope, scatter, attention, binary); throws on a name not in that list.
bool megakernel_kind_chosen(MegaKind kind);
bool megakernel_kind_chosen(MegaKind kind, const std::string& list);

// ops[i]: step i as a megakernel op where ok[i]; acc[i]: the bytes step i reads and writes (its
// scratch left out: ops use none). Every stretch of at least min_run steps is returned, its ops'
// deps, need and first_block filled for a grid of `grid` blocks.
std::vector<MegaStretch> plan_mega_stretches(std::vector<MegaOp>& ops, const std::vector<bool>& ok, const std::vector<StepAccess>& acc, int grid,
                                             int min_run);

}  // namespace rlx::backends::cuda
