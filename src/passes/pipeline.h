// The compilation pipeline: HIR → (legalize, fold, cse, dce) → MIR for a device, then per
// shape binding → (specialize, fold, cse, dce, plan) → LIR. Each stage has a name for
// --stop-after.
#pragma once
#include <string>
#include <vector>

#include "ir/graph.h"
#include "passes/dispatch.h"
#include "passes/simplify.h"
#include "rlx/shape.h"

namespace rlx::passes {

struct PipelineOptions {
  DispatchOptions dispatch;
  std::string stop_after;  // a stage name, or "" to run everything
  bool fuse = true;        // elementwise fusion (off: every op runs as its own kernel)
  std::string precision = "f32";  // f32 | bf16 | amp (see passes/precision.h)
  bool concurrent_steps = false;  // the device overlaps independent steps (PlanOptions::keep_branches_apart)
};

// Stage names in order (device stages, then per-binding stages).
// verify legalize precision fold cse dce, each fusion pass (fold-attention-transposes,
// fuse-norm-rope, …, fuse-elementwise, fuse-epilogue) and fuse (the end of fusion)
const std::vector<std::string>& mir_stages();
const std::vector<std::string>& lir_stages();  // specialize fold-static cse-static dce-static plan
bool is_stage(const std::string& name);

// Returns true when the pipeline stopped early at opts.stop_after.
bool compile_to_mir(ir::Graph& g, const KernelClaims& device, const PipelineOptions& opts, const NodeEvaluator& eval,
                    DispatchReport& report);
bool lower_to_lir(ir::Graph& g, const Bindings& bindings, const PipelineOptions& opts, const NodeEvaluator& eval);

}  // namespace rlx::passes
