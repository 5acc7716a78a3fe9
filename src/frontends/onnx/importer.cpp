// The ONNX importer: opsets per domain, lazily read initializers, graph inputs with symbolic
// dims, one converter per node (inlining subgraphs), and the up-front check that lists every
// node the importer cannot map before any weight is read.
#include "frontends/onnx/importer.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>

#include "frontends/onnx/proto.h"
#include "frontends/onnx/support.h"
#include "rlx/error.h"
#include "runtime/registry.h"
#include "util/strings.h"

namespace rlx::frontends::onnx {

namespace fs = std::filesystem;

std::string canonical_domain(const std::string& d) { return d == "ai.onnx" ? std::string() : d; }

// ---- the converter table

namespace {

const OpTable& table() {
  static const OpTable t = [] {
    OpTable r;
    register_elementwise(r);
    register_math(r);
    register_reduce(r);
    register_shape(r);
    register_index(r);
    register_nn(r);
    register_pool(r);
    register_norm(r);
    register_resize(r);
    register_sample(r);
    register_rnn(r);
    register_control(r);
    register_quant(r);
    register_loss(r);
    register_signal(r);
    register_contrib(r);
    register_sequence(r);
    register_dynamic(r);
    return r;
  }();
  return t;
}

}  // namespace

const OpEntry* find_converter(const std::string& domain, const std::string& op, int64_t opset) {
  std::string d = canonical_domain(domain);
  const OpEntry* best = nullptr;
  for (const OpEntry& e : table())
    if (d == e.domain && op == e.op && e.since <= opset && (!best || e.since > best->since)) best = &e;
  return best;
}

std::vector<std::string> supported_ops() {
  std::set<std::string> s;
  for (const OpEntry& e : table()) s.insert(std::string(e.domain).empty() ? e.op : cat(e.domain, ".", e.op));
  return {s.begin(), s.end()};
}

// ---- the importer

namespace {

passes::NodeEvaluator reference_evaluator() {
  runtime::Backend* ref = runtime::find_backend("reference");
  if (!ref) throw Error(ErrorKind::internal, "the reference backend is not built; the ONNX importer folds constants with it");
  return ref->evaluator();
}

std::string symbol_name(const std::string& raw) {
  std::string s;
  for (char c : raw) s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) s = "d_" + s;
  return s;
}

}  // namespace

Importer::Importer(std::shared_ptr<::onnx::ModelProto> model, std::string base_dir, const ImportOptions& options)
    : model_(std::move(model)),
      base_dir_(std::move(base_dir)),
      options_(options),
      graph_(std::make_shared<ir::Graph>()),
      b_(*graph_, reference_evaluator()) {
  for (const auto& o : model_->opset_import()) opsets_[canonical_domain(o.domain())] = o.version();
  if (!opsets_.count("")) opsets_[""] = model_->opset_import_size() == 0 ? 1 : opsets_[""];
}

int64_t Importer::opset(const std::string& domain) const {
  auto it = opsets_.find(canonical_domain(domain));
  if (it != opsets_.end() && it->second > 0) return it->second;
  // Contrib domains are often imported without a version; 1 is what exporters mean then.
  return 1;
}

IValue Importer::lookup(const std::string& name, const std::string& user) {
  for (size_t k = scopes_.size(); k-- > 0;) {
    Scope& s = scopes_[k];
    if (auto it = s.values.find(name); it != s.values.end()) return it->second;
    if (auto it = s.initializers.find(name); it != s.initializers.end()) {
      Tensor t = tensor_from_proto(*it->second, base_dir_, cat("initializer '", name, "'"), model_);
      std::string ctx = b_.context_name(), origin = b_.context_origin();
      b_.set_context(name, "onnx.initializer");
      ValueId v = b_.constant(t);
      b_.set_context(ctx, origin);
      graph_->value(v).name = name;
      s.values[name] = IValue::tensor(v);
      s.initializers.erase(it);
      return IValue::tensor(v);
    }
  }
  throw Error(ErrorKind::format, cat(user, " uses '", name,
                                     "', which no earlier node, input or initializer produces (a graph not in topological order, or a truncated model)"));
}

void Importer::convert_node(const ::onnx::NodeProto& n) {
  std::string domain = canonical_domain(n.domain());
  int64_t version = opset(domain);
  std::string name = n.name().empty() ? cat(n.op_type(), "_", node_counter_) : n.name();
  ++node_counter_;
  const OpEntry* e = find_converter(domain, n.op_type(), version);
  if (!e)
    throw Error(ErrorKind::unsupported, cat(domain.empty() ? "" : domain + ".", n.op_type(), " (opset ", version, ") node '", name,
                                            "': no converter for this operator"));
  std::vector<IValue> in;
  for (const auto& i : n.input()) in.push_back(i.empty() ? IValue::none() : lookup(i, cat(n.op_type(), " node '", name, "'")));
  while (!in.empty() && in.back().kind == IValue::Kind::none) in.pop_back();
  NodeCtx ctx(*this, n, version, in);
  b_.set_context(name, cat("onnx.", domain.empty() ? "" : domain + ".", n.op_type()));
  std::vector<IValue> outs;
  try {
    if (e->values) {
      outs = e->values(ctx);
    } else {
      for (size_t i = 0; i < in.size(); ++i)
        if (in[i].kind == IValue::Kind::sequence) ctx.invalid(cat("input ", i, " is a sequence; this operator takes tensors"));
      for (ValueId v : e->fn(ctx)) outs.push_back(v == kNoValue ? IValue::none() : IValue::tensor(v));
    }
  } catch (const Error& err) {
    std::string msg = err.what();
    if (msg.find(name) == std::string::npos) msg = cat(ctx.label(), ": ", msg);
    throw Error(err.kind(), msg);
  }
  for (int i = 0; i < n.output_size(); ++i) {
    if (n.output(i).empty()) continue;
    if (static_cast<size_t>(i) >= outs.size() || (outs[static_cast<size_t>(i)].kind == IValue::Kind::tensor && outs[static_cast<size_t>(i)].v == kNoValue))
      ctx.fail(cat("output ", i, " ('", n.output(i), "') is not produced by the importer"));
    scopes_.back().values[n.output(i)] = outs[static_cast<size_t>(i)];
  }
}

// At the top level a node a converter cannot map (an attribute combination it does not
// support) is recorded and its outputs poisoned, so that one error lists them all; nodes that
// read poisoned values are skipped. Inside subgraphs the first such error propagates.
void Importer::convert_nodes(const ::onnx::GraphProto& g) {
  bool top = scopes_.size() == 1;
  for (const auto& n : g.node()) {
    bool skip = false;
    for (const auto& i : n.input()) skip = skip || (!i.empty() && poisoned_.count(i));
    if (top && !skip) {
      try {
        convert_node(n);
        continue;
      } catch (const Error& e) {
        if (e.kind() != ErrorKind::unsupported) throw;
        unmapped_.push_back(e.what());
      }
    } else if (!skip) {
      convert_node(n);
      continue;
    }
    for (const auto& o : n.output())
      if (!o.empty()) poisoned_.insert(o);
  }
}

std::vector<IValue> Importer::inline_graph(const ::onnx::GraphProto& g, const std::vector<IValue>& inputs, const std::string& what) {
  if (static_cast<size_t>(g.input_size()) != inputs.size())
    throw Error(ErrorKind::format, cat(what, ": the subgraph takes ", g.input_size(), " inputs, ", inputs.size(), " are given"));
  scopes_.emplace_back();
  for (int i = 0; i < g.input_size(); ++i) scopes_.back().values[g.input(i).name()] = inputs[static_cast<size_t>(i)];
  for (const auto& init : g.initializer()) scopes_.back().initializers[init.name()] = &init;
  std::string ctx = b_.context_name(), origin = b_.context_origin();
  convert_nodes(g);
  std::vector<IValue> outs;
  for (const auto& o : g.output()) outs.push_back(lookup(o.name(), cat(what, " output")));
  scopes_.pop_back();
  b_.set_context(ctx, origin);
  return outs;
}

std::vector<ValueId> Importer::inline_subgraph(const ::onnx::GraphProto& g, const std::vector<ValueId>& inputs, const std::string& what) {
  std::vector<IValue> in;
  for (ValueId v : inputs) in.push_back(IValue::tensor(v));
  std::vector<ValueId> out;
  for (const IValue& v : inline_graph(g, in, what)) {
    if (!v.is_tensor()) throw Error(ErrorKind::unsupported, cat(what, ": a subgraph output that is a sequence or an empty optional here"));
    out.push_back(v.v);
  }
  return out;
}

// One model input as IR inputs: a tensor, a sequence of tensors ("x[0]" …) or an empty optional.
IValue Importer::graph_input(const ::onnx::ValueInfoProto& in, ImportedModel& out) {
  const std::string& name = in.name();
  const ::onnx::TypeProto* t = &in.type();
  bool optional = t->has_optional_type();
  if (optional) t = &t->optional_type().elem_type();
  auto tensor_input = [&](const ::onnx::TypeProto_Tensor& tt, const std::string& ir_name, const Tensor* given, int index) {
    auto dt = dtype_from_onnx(tt.elem_type());
    if (!dt) throw Error(ErrorKind::unsupported, cat("graph input '", name, "' has dtype ", onnx_type_name(tt.elem_type()), ", which RLX does not support"));
    Shape shape;
    if (given) {
      if (given->dtype() != *dt)
        throw Error(ErrorKind::invalid_argument, cat("input '", ir_name, "' must be ", dtype_name(*dt), ", got ", dtype_name(given->dtype())));
      shape = shape_of(given->shape());
    } else if (auto it = options_.input_shapes.find(name); it != options_.input_shapes.end()) {
      shape = shape_of(it->second);
    } else {
      if (!tt.has_shape())
        throw Error(ErrorKind::unsupported, cat("graph input '", name, "' has no shape (unknown rank); give a concrete tensor or shape for it"));
      int k = 0;
      for (const auto& d : tt.shape().dim()) {
        if (d.has_dim_value() && d.dim_value() >= 0) shape.push_back(Dim(d.dim_value()));
        else if (d.has_dim_param() && !d.dim_param().empty()) shape.push_back(Dim::symbol(symbol_name(d.dim_param())));
        else shape.push_back(Dim::symbol(symbol_name(cat(name, "_", k))));
        ++k;
      }
    }
    ValueId v = graph_->add_input({*dt, shape}, ir_name);
    out.inputs.push_back(ir_name);
    out.input_sources.emplace_back(name, index);
    if (given) b_.bind_input(v, *given);
    return v;
  };
  if (t->has_tensor_type()) {
    auto it = options_.inputs.find(name);
    if (optional && it == options_.inputs.end()) return IValue::none();
    return IValue::tensor(tensor_input(t->tensor_type(), name, it == options_.inputs.end() ? nullptr : &it->second, -1));
  }
  if (t->has_sequence_type() && t->sequence_type().elem_type().has_tensor_type()) {
    const auto& tt = t->sequence_type().elem_type().tensor_type();
    auto it = options_.sequence_inputs.find(name);
    if (it == options_.sequence_inputs.end()) {
      if (optional) return IValue::none();
      throw Error(ErrorKind::unsupported, cat("graph input '", name, "' is a sequence: give its tensors (a sequence's length is part of the graph)"));
    }
    std::vector<ValueId> items;
    for (size_t i = 0; i < it->second.size(); ++i) items.push_back(tensor_input(tt, cat(name, "[", i, "]"), &it->second[i], static_cast<int>(i)));
    auto dt = dtype_from_onnx(tt.elem_type());
    return IValue::sequence(items, dt ? *dt : DType::f32);
  }
  throw Error(ErrorKind::unsupported, cat("graph input '", name, "' is neither a tensor nor a sequence of tensors (maps are not supported)"));
}

ImportedModel Importer::run() {
  std::vector<UnsupportedNode> problems = find_unsupported(*model_);
  if (!problems.empty()) {
    std::string msg = cat(problems.size(), problems.size() == 1 ? " node" : " nodes", " of the model cannot be imported:");
    for (const auto& p : problems) msg += "\n  " + p.str();
    throw Error(ErrorKind::unsupported, msg);
  }
  const ::onnx::GraphProto& g = model_->graph();
  graph_->name = g.name().empty() ? "onnx" : symbol_name(g.name());
  scopes_.emplace_back();
  for (const auto& init : g.initializer()) scopes_.back().initializers[init.name()] = &init;
  ImportedModel out;
  out.opsets = opsets_;
  for (const auto& in : g.input()) {
    const std::string& name = in.name();
    bool given = options_.inputs.count(name) || options_.sequence_inputs.count(name);
    // Inputs with an initializer are defaults that a caller may override.
    if (scopes_.back().initializers.count(name) && !given) continue;
    scopes_.back().initializers.erase(name);
    scopes_.back().values[name] = graph_input(in, out);
  }
  for (const auto* given : {&options_.inputs}) {
    for (const auto& [name, t] : *given) {
      bool known = false;
      for (const auto& src : out.input_sources) known = known || src.first == name;
      bool declared = false;
      for (const auto& in : g.input()) declared = declared || in.name() == name;
      if (!known && !declared)
        throw Error(ErrorKind::invalid_argument, cat("the model has no input named '", name, "' (inputs: ", join(out.inputs), ")"));
    }
  }
  convert_nodes(g);
  for (const auto& n : g.node())
    for (const auto& o : n.output()) {
      auto it = scopes_.back().values.find(o);
      if (!o.empty() && it != scopes_.back().values.end() && it->second.kind == IValue::Kind::tensor && it->second.v != kNoValue)
        out.node_tensors.emplace_back(o, it->second.v);
    }
  if (!unmapped_.empty()) {
    std::string msg = cat(unmapped_.size(), unmapped_.size() == 1 ? " node" : " nodes", " of the model cannot be imported:");
    for (const auto& u : unmapped_) msg += "\n  " + u;
    throw Error(ErrorKind::unsupported, msg);
  }
  std::vector<ValueId> outs;
  for (const auto& o : g.output()) {
    IValue v = lookup(o.name(), cat("graph output '", o.name(), "'"));
    ImportedModel::OutputGroup group{o.name(), ImportedModel::OutputGroup::Kind::tensor, 1};
    auto add = [&](ValueId id, const std::string& ir_name) {
      if (graph_->value(id).name.empty()) graph_->value(id).name = ir_name;
      outs.push_back(id);
      out.outputs.push_back(ir_name);
    };
    if (v.kind == IValue::Kind::tensor) {
      add(v.v, o.name());
    } else if (v.kind == IValue::Kind::sequence) {
      group.kind = ImportedModel::OutputGroup::Kind::sequence;
      group.count = static_cast<int>(v.items.size());
      for (size_t i = 0; i < v.items.size(); ++i) add(v.items[i], cat(o.name(), "[", i, "]"));
    } else {
      group.kind = ImportedModel::OutputGroup::Kind::none;
      group.count = 0;
    }
    out.output_groups.push_back(group);
  }
  graph_->set_outputs(outs);
  for (ValueId v : b_.used_bindings()) {
    const std::string& n = graph_->value(v).name;
    if (std::find(out.specialized_inputs.begin(), out.specialized_inputs.end(), n) == out.specialized_inputs.end()) out.specialized_inputs.push_back(n);
  }
  scopes_.clear();
  out.graph = graph_;
  return out;
}

// ---- entry points

ImportedModel import_model(std::shared_ptr<::onnx::ModelProto> model, const std::string& base_dir, const ImportOptions& options) {
  Importer imp(std::move(model), base_dir, options);
  return imp.run();
}

ImportedModel import_model(const std::string& path, const ImportOptions& options) {
  auto model = load_model(path);
  std::string dir = fs::path(path).parent_path().string();
  try {
    return import_model(model, dir.empty() ? "." : dir, options);
  } catch (const Error& e) {
    throw Error(e.kind(), cat(path, ": ", e.what()));
  }
}

bool is_onnx_file(const std::string& path) { return looks_like_onnx(path); }

std::vector<Tensor> ImportedModel::feed(const ImportOptions& options) const {
  std::vector<Tensor> out;
  for (const auto& [name, index] : input_sources) {
    if (index < 0) {
      auto it = options.inputs.find(name);
      if (it == options.inputs.end()) throw Error(ErrorKind::invalid_argument, cat("no tensor for input '", name, "'"));
      out.push_back(it->second);
    } else {
      auto it = options.sequence_inputs.find(name);
      if (it == options.sequence_inputs.end() || static_cast<size_t>(index) >= it->second.size())
        throw Error(ErrorKind::invalid_argument, cat("no tensor for item ", index, " of sequence input '", name, "'"));
      out.push_back(it->second[static_cast<size_t>(index)]);
    }
  }
  return out;
}

}  // namespace rlx::frontends::onnx
