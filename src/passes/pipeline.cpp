#include "passes/pipeline.h"

#include <algorithm>
#include <chrono>

#include "ir/text.h"
#include "ops/verify.h"
#include "passes/attention_layout.h"
#include "passes/fuse.h"
#include "passes/fuse_epilogue.h"
#include "passes/fuse_glu.h"
#include "passes/fuse_cast.h"
#include "passes/fuse_norm_matmul.h"
#include "passes/fuse_norm_rope.h"
#include "passes/fuse_reduce.h"
#include "passes/fuse_rope_append.h"
#include "passes/fuse_siblings.h"
#include "passes/legalize.h"
#include "passes/memory_plan.h"
#include "passes/precision.h"
#include "passes/specialize.h"
#include "util/log.h"
#include "util/strings.h"

namespace rlx::passes {

namespace {

// The fusion passes in order: kernel-shaped rewrites first (each only where the device claims the
// fused form), then the elementwise regions and matmul epilogues over what is left.
struct FusionPass {
  const char* name;
  ir::Graph (*run)(const ir::Graph&, const KernelClaims&);
};
const FusionPass kFusionPasses[] = {
    {"fold-attention-transposes", fold_attention_transposes},
    {"fuse-norm-rope", fuse_norm_rope},
    {"fuse-rope-append", fuse_rope_append},
    {"fuse-glu", fuse_gated_matmuls},
    {"fuse-siblings", fuse_sibling_matmuls},
    {"fuse-norm-matmul", fuse_norm_into_matmuls},
    {"fuse-cast", fuse_cast_into_producer},
    {"fuse-reduce", [](const ir::Graph& g, const KernelClaims& d) { return eliminate_dead_code(fuse_reduce_prologues(g, d)); }},
    {"fuse-elementwise", fuse_elementwise},
    {"fuse-epilogue", [](const ir::Graph& g, const KernelClaims& d) { return eliminate_dead_code(fuse_matmul_epilogues(g, d)); }},
};

}  // namespace

const std::vector<std::string>& mir_stages() {
  // "fuse" names the end of fusion (every fusion pass done)
  static const std::vector<std::string> s = [] {
    std::vector<std::string> v = {"verify", "legalize", "precision", "fold", "cse", "dce"};
    for (const FusionPass& p : kFusionPasses) v.push_back(p.name);
    v.push_back("fuse");
    return v;
  }();
  return s;
}

const std::vector<std::string>& lir_stages() {
  static const std::vector<std::string> s = {"specialize", "fold-static", "cse-static", "dce-static", "plan"};
  return s;
}

bool is_stage(const std::string& name) {
  const auto& a = mir_stages();
  const auto& b = lir_stages();
  return std::find(a.begin(), a.end(), name) != a.end() || std::find(b.begin(), b.end(), name) != b.end();
}

namespace {

// RLX_DEBUG=1: how long each stage took and how big the graph came out.
class StageTimer {
 public:
  explicit StageTimer(const ir::Graph& g) : g_(g), t_(std::chrono::steady_clock::now()) {}
  void done(const char* stage) {
    auto now = std::chrono::steady_clock::now();
    if (debug_at(1))
      log_line(cat(stage, ": ", std::chrono::duration<double, std::milli>(now - t_).count(), " ms, ", g_.num_nodes(), " nodes"));
    t_ = now;
  }

 private:
  const ir::Graph& g_;
  std::chrono::steady_clock::time_point t_;
};

}  // namespace

bool compile_to_mir(ir::Graph& g, const KernelClaims& device, const PipelineOptions& opts, const NodeEvaluator& eval,
                    DispatchReport& report) {
  StageTimer timer(g);
  auto stop = [&](const char* stage) {
    timer.done(stage);
    return opts.stop_after == stage;
  };
  ops::verify(g, ir::Level::HIR);
  if (stop("verify")) return true;
  g = legalize(g, device, opts.dispatch, report);
  if (debug_at(2) || flags().RLX_DISPATCH_REPORT) log_line(report.str());
  if (stop("legalize")) return true;
  Precision prec = precision_from_name(opts.precision);
  if (prec != Precision::f32) {
    // The new casts and reduced-precision matmuls resolve like any other node.
    DispatchReport again;
    g = legalize(apply_precision(g, prec), device, opts.dispatch, again);
    // the report shows the ops the policy brought in (int8/int4 products, quantize_rows, casts)
    // beside the model's own; the rest of `again` is the model's ops resolved a second time
    std::vector<std::string> added;
    for (const auto& [op, row] : again.rows)
      if (!report.rows.count(op)) {
        report.rows[op] = row;
        added.push_back(op);
      }
    if (!added.empty()) report.rewrites.push_back(cat("--precision ", opts.precision, " brings in ", join(added, ", ")));
  }
  if (stop("precision")) return true;
  g = fold_constants(g, eval);
  if (stop("fold")) return true;
  g = eliminate_common_subexpressions(g);
  if (stop("cse")) return true;
  g = eliminate_dead_code(g);
  if (stop("dce")) return true;
  if (opts.fuse)
    for (const FusionPass& p : kFusionPasses) {
      g = p.run(g, device);
      if (stop(p.name)) return true;
    }
  return stop("fuse");
}

bool lower_to_lir(ir::Graph& g, const Bindings& bindings, const PipelineOptions& opts, const NodeEvaluator& eval) {
  StageTimer timer(g);
  auto stop = [&](const char* stage) {
    timer.done(stage);
    return opts.stop_after == stage;
  };
  std::string device = g.device;
  g = specialize(g, bindings);
  if (stop("specialize")) return true;
  g = fold_constants(g, eval);
  if (stop("fold-static")) return true;
  g = eliminate_common_subexpressions(g);
  if (stop("cse-static")) return true;
  g = eliminate_dead_code(g);
  if (stop("dce-static")) return true;
  PlanOptions plan;
  plan.keep_branches_apart = opts.concurrent_steps;
  g = plan_memory(g, plan);
  g.device = device;
  if (debug_at(4)) log_line(cat("LIR for ", device, ":\n", ir::print_graph(g)));
  return stop("plan");
}

}  // namespace rlx::passes
