#include "rlx/session.h"

#include <mutex>

#include "ir/text.h"
#include "passes/pipeline.h"
#include "passes/specialize.h"
#include "rlx/error.h"
#include "runtime/registry.h"
#include "util/flags.h"
#include "util/log.h"
#include "util/strings.h"

namespace rlx {

struct CompiledModel::Impl {
  std::string device;
  runtime::Backend* backend = nullptr;
  ir::Graph mir;
  passes::DispatchReport report;
  passes::PipelineOptions pipeline;
  passes::NodeEvaluator evaluator;
  bool stopped = false;       // the pipeline stopped at pipeline.stop_after before the end
  bool compile_only = false;  // SessionOptions::compile_only
  std::mutex mu;
  struct Planned {
    ir::Graph lir;  // what the executable was built from (printed on demand: constants are large)
    std::shared_ptr<runtime::Executable> exe;
  };
  std::map<Bindings, Planned> cache;  // one executable per shape binding

  // The one lowering: MIR → LIR for these bindings, with the session's pipeline options.
  ir::Graph lower(const Bindings& b) const {
    ir::Graph lir = mir;
    passes::lower_to_lir(lir, b, pipeline, evaluator);
    return lir;
  }

  std::shared_ptr<runtime::Executable> executable_for(const Bindings& b) {
    {
      std::lock_guard<std::mutex> lock(mu);
      auto it = cache.find(b);
      if (it != cache.end()) return it->second.exe;
    }
    if (compile_only || stopped || !pipeline.stop_after.empty())
      throw Error(ErrorKind::invalid_argument, cat("this model was compiled for inspection (", compile_only ? "compile_only" : cat("stop_after=", pipeline.stop_after),
                                                   ") and cannot run; compile it without that option"));
    ir::Graph lir = lower(b);
    std::shared_ptr<runtime::Executable> exe = backend->compile(lir);
    Planned p{std::move(lir), std::move(exe)};
    std::lock_guard<std::mutex> lock(mu);
    return cache.emplace(b, std::move(p)).first->second.exe;
  }

  std::map<std::string, std::string> emit_source(const Bindings& b) {
    if (stopped || !pipeline.stop_after.empty()) throw Error(ErrorKind::invalid_argument, "this model's compilation stopped before LIR; there is nothing to emit");
    return backend->emit_source(lower(b));
  }

  std::string lir_text(const Bindings& b) {
    {
      std::lock_guard<std::mutex> lock(mu);
      auto it = cache.find(b);
      if (it != cache.end()) return ir::print_graph(it->second.lir);
    }
    if (stopped) return ir::print_graph(mir);  // stopped in the MIR stages: there is no LIR yet
    return ir::print_graph(lower(b));
  }
};

namespace {

passes::NodeEvaluator reference_evaluator() {
  runtime::Backend* ref = runtime::find_backend("reference");
  if (!ref) throw Error(ErrorKind::internal, "the reference backend is not built; constant folding needs it");
  return ref->evaluator();
}

std::string value_label(const ir::Graph& g, ir::ValueId v, size_t index, const char* kind) {
  const std::string& n = g.value(v).name;
  return n.empty() ? cat(kind, " ", index) : cat(kind, " '", n, "'");
}

}  // namespace

Session::Session(std::string device, SessionOptions options) : device_(std::move(device)), options_(std::move(options)) {
  runtime::Backend& b = runtime::backend(device_);  // unknown names fail here, listing the devices
  runtime::Availability a = b.availability();
  if (debug_at(1)) log_line(cat("device ", device_, ": ", a.available ? "available" : "unavailable (" + a.reason + ")", ", ", b.native_op_count(), " native op kinds"));
  // compile_only inspects a device built here whose hardware is elsewhere (cuda without a
  // driver); a device whose SDK is out of reach has nothing to compile for
  if (!a.available && (!options_.compile_only || b.status() == "needs hardware"))
    throw Error(ErrorKind::unsupported, cat("device ", device_, " is not available: ", a.reason));
  const std::string& qa = options_.precision.quantized_activations;
  if (qa != "auto" && qa != "q8" && qa != "f32")
    throw Error(ErrorKind::invalid_argument, cat("precision: quantized_activations must be auto, q8 or f32, got '", qa, "'"));
  if (!options_.stop_after.empty() && !passes::is_stage(options_.stop_after))
    throw Error(ErrorKind::invalid_argument, cat("stop_after: unknown pass '", options_.stop_after, "' (passes: ", join(passes::mir_stages(), " "), " ",
                                                 join(passes::lir_stages(), " "), ")"));
}

CompiledModel Session::compile(const Graph& graph) const {
  auto impl = std::make_shared<CompiledModel::Impl>();
  impl->device = device_;
  impl->backend = &runtime::backend(device_);
  impl->pipeline.dispatch.policy = passes::policy_from_name(options_.policy.empty() ? flags().RLX_POLICY : options_.policy);
  impl->pipeline.dispatch.overrides = options_.overrides;
  impl->pipeline.precision = options_.precision.compute;
  impl->pipeline.concurrent_steps = impl->backend->runs_steps_concurrently();
  impl->pipeline.stop_after = options_.stop_after;
  impl->compile_only = options_.compile_only;
  impl->evaluator = reference_evaluator();
  impl->mir = graph.ir();
  impl->stopped = passes::compile_to_mir(impl->mir, *impl->backend, impl->pipeline, impl->evaluator, impl->report);
  return CompiledModel(impl);
}

std::vector<Tensor> CompiledModel::run(const std::vector<Tensor>& inputs) const {
  std::vector<Tensor> outputs;
  run_into(inputs, outputs);
  return outputs;
}

void CompiledModel::run_into(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs) const {
  const ir::Graph& g = impl_->mir;
  if (inputs.size() != g.inputs().size())
    throw Error(ErrorKind::invalid_argument, cat("graph @", g.name, " takes ", g.inputs().size(), " inputs, got ", inputs.size()));
  std::vector<Tensor> contiguous;
  std::vector<std::vector<int64_t>> shapes;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ir::Type& want = g.type(g.inputs()[i]);
    if (!inputs[i].defined()) throw Error(ErrorKind::invalid_argument, cat(value_label(g, g.inputs()[i], i, "input"), " is an empty tensor"));
    if (inputs[i].dtype() != want.dtype)
      throw Error(ErrorKind::invalid_argument, cat(value_label(g, g.inputs()[i], i, "input"), " must be ", dtype_name(want.dtype), ", got ",
                                                   dtype_name(inputs[i].dtype())));
    if (!inputs[i].on_host() && inputs[i].device().rfind(impl_->device, 0) != 0)
      throw Error(ErrorKind::invalid_argument, cat(value_label(g, g.inputs()[i], i, "input"), " is in ", inputs[i].device(), " memory; the ",
                                                   impl_->device, " device takes ", impl_->device == "cuda" ? "cuda or host" : "host", " tensors"));
    contiguous.push_back(inputs[i].contiguous());
    shapes.push_back(inputs[i].shape());
  }
  Bindings b = passes::bind_inputs(g, shapes);
  impl_->executable_for(b)->run(contiguous, outputs);
}

std::vector<Tensor> CompiledModel::run_named(const std::map<std::string, Tensor>& inputs) const {
  const ir::Graph& g = impl_->mir;
  std::vector<Tensor> ordered;
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const std::string& n = g.value(g.inputs()[i]).name;
    auto it = inputs.find(n);
    if (it == inputs.end()) throw Error(ErrorKind::invalid_argument, cat("missing input '", n, "'"));
    ordered.push_back(it->second);
  }
  if (inputs.size() != ordered.size()) {
    for (const auto& [name, t] : inputs) {
      bool known = false;
      for (ir::ValueId v : g.inputs()) known = known || g.value(v).name == name;
      if (!known) throw Error(ErrorKind::invalid_argument, cat("graph @", g.name, " has no input named '", name, "'"));
    }
  }
  return run(ordered);
}

bool CompiledModel::keep_on_device(const Tensor& t) const {
  if (!t.defined() || !t.is_contiguous()) throw Error(ErrorKind::invalid_argument, "keep_on_device needs a contiguous tensor");
  return impl_->backend->make_resident(t);
}

void CompiledModel::release_from_device(const Tensor& t, bool copy_back) const {
  if (t.defined()) impl_->backend->release_resident(t, copy_back);
}

const std::string& CompiledModel::device() const { return impl_->device; }

std::vector<std::string> CompiledModel::input_names() const {
  std::vector<std::string> out;
  for (size_t i = 0; i < impl_->mir.inputs().size(); ++i) {
    const std::string& n = impl_->mir.value(impl_->mir.inputs()[i]).name;
    out.push_back(n.empty() ? cat("input", i) : n);
  }
  return out;
}

std::vector<std::string> CompiledModel::output_names() const {
  std::vector<std::string> out;
  for (size_t i = 0; i < impl_->mir.outputs().size(); ++i) {
    const std::string& n = impl_->mir.value(impl_->mir.outputs()[i]).name;
    out.push_back(n.empty() ? cat("output", i) : n);
  }
  return out;
}

std::string CompiledModel::dispatch_report() const { return impl_->report.str(); }
std::string CompiledModel::dispatch_report_json() const { return impl_->report.json(); }
std::string CompiledModel::mir_text() const { return ir::print_graph(impl_->mir); }

std::string CompiledModel::lir_text(const std::map<std::string, int64_t>& bindings) const { return impl_->lir_text(bindings); }
std::map<std::string, std::string> CompiledModel::emit_source(const std::map<std::string, int64_t>& bindings) const { return impl_->emit_source(bindings); }

namespace {
DeviceInfo info_of(runtime::Backend& b) {
  runtime::Availability a = b.availability();
  return {b.name(), b.description(), a.available, a.reason, b.status(), b.native_op_count(), b.has_int8_dot_products()};
}
}  // namespace

std::vector<DeviceInfo> devices() {
  std::vector<DeviceInfo> out;
  for (runtime::Backend* b : runtime::backends()) out.push_back(info_of(*b));
  return out;
}

DeviceInfo device_info(const std::string& name) { return info_of(runtime::backend(name)); }

}  // namespace rlx
