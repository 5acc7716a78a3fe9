#include "runtime/host_executable.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "passes/memory_plan.h"
#include "runtime/collective.h"
#include "runtime/comm_thread.h"
#include "rlx/error.h"
#include "util/flags.h"
#include "util/host_memory.h"
#include "util/host_memory.h"
#include "util/profile.h"
#include "util/strings.h"

namespace rlx::runtime {

namespace {

using ir::Placement;

struct Step {
  int node;
  HostKernel kernel;
  std::string label;  // RLX_CPU_PROFILE: "dot_general f32[32,128,1536] ← f32[32,128,384], f32[384,1536]"
  // A collective with work after it that does not need its result: it runs on the run's
  // communication thread while those kernels do.
  bool collective = false, async = false;
  std::vector<size_t> reads;  // the buffers (root values) the step reads: waited for when pending
};

std::string type_text(const ir::Type& t) { return cat(dtype_name(t.dtype), shape_str(t.shape)); }

std::string step_label(const ir::Node& n, const ir::Graph& g) {
  std::string s = ir::op_keyword(n.op);
  if (!n.outputs.empty()) s += " " + type_text(g.type(n.outputs[0]));
  s += " <-";
  for (size_t i = 0; i < n.inputs.size(); ++i) s += cat(i ? ", " : " ", type_text(g.type(n.inputs[i])));
  return s;
}

// Scratch state of one run: the arena and the views handed to kernels. Pooled so that
// concurrent runs never share one and steady-state runs allocate nothing here.
struct RunContext {
  std::shared_ptr<void> arena;
  std::vector<void*> ptr;  // per value
  std::vector<std::vector<HostView>> in, out;  // per step
  std::unique_ptr<CommThread> comm;  // made at the first asynchronous collective
  std::vector<int64_t> pending;      // per value: the comm ticket that writes it (0: none)
};

class HostExecutable : public Executable {
 public:
  HostExecutable(const ir::Graph& lir, const KernelLookup& lookup) : lir_(lir), profiling_(flags().RLX_CPU_PROFILE) {
    // Under a memory limit, a run that cannot fit fails here, when the model compiles, saying why.
    size_t output_bytes = 0;
    for (ir::ValueId v : lir_.outputs()) output_bytes += dtype_bytes(lir_.type(v).dtype, shape_numel(lir_.type(v).shape).try_value().value_or(0));
    check_memory_limit(static_cast<size_t>(std::max<int64_t>(lir_.arena_bytes, 0)) + output_bytes,
                       cat("graph @", lir_.name, " on ", lir_.device, " (", byte_size_text(static_cast<size_t>(std::max<int64_t>(lir_.arena_bytes, 0))),
                           " of activations in its arena and ", byte_size_text(output_bytes), " of outputs for these input shapes)"),
                       "a smaller batch or sequence length (the arena scales with them), fewer layers, or a quantized weight type (rlx quantize) needs less");
    for (int i = 0; i < lir_.num_nodes(); ++i) {
      const ir::Node& n = lir_.node(i);
      if (n.op == ir::Op::constant) continue;
      bool all_views = true;
      for (ir::ValueId v : n.outputs) all_views = all_views && lir_.placement[static_cast<size_t>(v)].kind == Placement::Kind::view;
      if (all_views) continue;  // reshape of contiguous memory: no work
      HostKernel k = lookup(n, lir_);
      if (!k)
        throw Error(ErrorKind::internal, cat("device ", lir_.device, " has no kernel for ", ir::op_keyword(n.op), " although it claimed it"));
      steps_.push_back({i, std::move(k), profiling_ ? step_label(n, lir_) : std::string()});
      for (ir::ValueId v : n.inputs) steps_.back().reads.push_back(root_of(v));
    }
    for (size_t s = 0; s < steps_.size(); ++s) {
      const ir::Node& n = lir_.node(steps_[s].node);
      if (!ir::has_trait(n.op, ir::kCollective)) continue;
      steps_[s].collective = true;
      bool next_needs_it = s + 1 == steps_.size();
      if (!next_needs_it)
        for (size_t r : steps_[s + 1].reads)
          for (ir::ValueId o : n.outputs) next_needs_it = next_needs_it || r == static_cast<size_t>(o);
      steps_[s].async = !next_needs_it && flags().RLX_COLLECTIVE_OVERLAP;
    }
    for (size_t v = 0; v < lir_.num_values(); ++v) {
      const ir::Value& val = lir_.value(static_cast<ir::ValueId>(v));
      shapes_.push_back(shape_values(val.type.shape));
    }
  }

  void run(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs) override {
    if (inputs.size() != lir_.inputs().size())
      throw Error(ErrorKind::invalid_argument, cat("expected ", lir_.inputs().size(), " inputs, got ", inputs.size()));
    std::unique_ptr<RunContext> ctx = acquire();
    size_t nv = lir_.num_values();
    for (size_t v = 0; v < nv; ++v) {
      const Placement& p = lir_.placement[v];
      switch (p.kind) {
        case Placement::Kind::input: ctx->ptr[v] = inputs[static_cast<size_t>(p.index)].data(); break;
        case Placement::Kind::arena: ctx->ptr[v] = static_cast<uint8_t*>(ctx->arena.get()) + p.offset; break;
        case Placement::Kind::constant:
          ctx->ptr[v] = lir_.node(lir_.value(static_cast<ir::ValueId>(v)).node).attrs.tensor("value").data();
          break;
        default: break;
      }
    }
    for (size_t v = 0; v < nv; ++v)
      if (lir_.placement[v].kind == Placement::Kind::view) {
        auto id = static_cast<ir::ValueId>(v);
        ctx->ptr[v] = static_cast<uint8_t*>(ctx->ptr[static_cast<size_t>(passes::placement_root(lir_, id))]) + passes::placement_offset(lir_, id);
      }
    try {
      run_steps(*ctx);
    } catch (...) {
      if (ctx->comm) try { ctx->comm->wait_all(); } catch (...) {}  // nothing may still write the arena
      release(std::move(ctx));
      throw;
    }
    outputs.resize(lir_.outputs().size());
    for (size_t k = 0; k < outputs.size(); ++k) {
      ir::ValueId v = lir_.outputs()[k];
      DType dt = lir_.type(v).dtype;
      const std::vector<int64_t>& shape = shapes_[static_cast<size_t>(v)];
      Tensor& o = outputs[k];
      if (!o.defined()) o = Tensor::empty(dt, shape);  // every byte is copied in below
      else if (o.dtype() != dt || o.shape() != shape || !o.is_contiguous())
        throw Error(ErrorKind::invalid_argument, cat("output ", k, " of graph @", lir_.name, " is ", dtype_name(dt), " of ", shape.size(),
                                                     " dims; the tensor given for it does not match (or is not contiguous)"));
      // memmove: an output may be an input whose buffer another output was computed from
      if (o.nbytes()) std::memmove(o.data(), ctx->ptr[static_cast<size_t>(v)], o.nbytes());
    }
    release(std::move(ctx));
  }

 private:
  void run_steps(RunContext& ctx) {
    ctx.pending.assign(lir_.num_values(), 0);
    bool submitted = false;
    for (size_t s = 0; s < steps_.size(); ++s) {
      const ir::Node& n = lir_.node(steps_[s].node);
      for (size_t k = 0; k < n.inputs.size(); ++k) ctx.in[s][k].data = ctx.ptr[static_cast<size_t>(n.inputs[k])];
      for (size_t k = 0; k < n.outputs.size(); ++k) ctx.out[s][k].data = ctx.ptr[static_cast<size_t>(n.outputs[k])];
      for (size_t r : steps_[s].reads)
        if (int64_t t = ctx.pending[r]) {
          ctx.comm->wait(t);
          ctx.pending[r] = 0;
        }
      if (steps_[s].collective && (steps_[s].async || submitted)) {
        // Every collective of a run after the first asynchronous one goes through the same
        // thread, so the ranks' engine sees them in graph order; the synchronous ones wait.
        if (!ctx.comm) ctx.comm = std::make_unique<CommThread>();
        int64_t t = ctx.comm->submit(collective_start(n, ctx.in[s][0], ctx.out[s][0]));
        submitted = true;
        if (!steps_[s].async) {
          ctx.comm->wait(t);
          continue;
        }
        for (ir::ValueId o : n.outputs) ctx.pending[static_cast<size_t>(o)] = t;
        continue;
      }
      if (!profiling_) {
        steps_[s].kernel(KernelArgs{n, ctx.in[s], ctx.out[s]});
        continue;
      }
      auto t0 = std::chrono::steady_clock::now();
      steps_[s].kernel(KernelArgs{n, ctx.in[s], ctx.out[s]});
      profile_add(lir_.device.c_str(), steps_[s].label, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    if (submitted) ctx.comm->wait_all();  // the outputs are read next
  }

  size_t root_of(ir::ValueId v) const {
    return lir_.placement[static_cast<size_t>(v)].kind == Placement::Kind::view ? static_cast<size_t>(passes::placement_root(lir_, v))
                                                                                 : static_cast<size_t>(v);
  }

  std::unique_ptr<RunContext> acquire() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!pool_.empty()) {
        auto c = std::move(pool_.back());
        pool_.pop_back();
        return c;
      }
    }
    auto c = std::make_unique<RunContext>();
    size_t bytes = static_cast<size_t>(std::max<int64_t>(lir_.arena_bytes, 64));
    c->arena = host_alloc(bytes, false, cat("the arena of graph @", lir_.name).c_str());
    c->ptr.assign(lir_.num_values(), nullptr);
    for (const auto& st : steps_) {
      const ir::Node& n = lir_.node(st.node);
      std::vector<HostView> in, out;
      for (ir::ValueId v : n.inputs) in.push_back(view_of(v));
      for (ir::ValueId v : n.outputs) out.push_back(view_of(v));
      c->in.push_back(std::move(in));
      c->out.push_back(std::move(out));
    }
    return c;
  }
  HostView view_of(ir::ValueId v) const {
    HostView h;
    h.dtype = lir_.type(v).dtype;
    h.shape = shapes_[static_cast<size_t>(v)];
    h.numel = 1;
    for (int64_t d : h.shape) h.numel *= d;
    return h;
  }
  void release(std::unique_ptr<RunContext> c) {
    std::lock_guard<std::mutex> lock(mu_);
    pool_.push_back(std::move(c));
  }

  ir::Graph lir_;
  bool profiling_;
  std::vector<Step> steps_;
  std::vector<std::vector<int64_t>> shapes_;
  std::mutex mu_;
  std::vector<std::unique_ptr<RunContext>> pool_;
};

}  // namespace

std::unique_ptr<Executable> make_host_executable(const ir::Graph& lir, const KernelLookup& lookup) {
  return std::make_unique<HostExecutable>(lir, lookup);
}

}  // namespace rlx::runtime
