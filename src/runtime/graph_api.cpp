// The public graph-builder API (include/rlx/graph.h, include/rlx/ops.h) on top of ops::Builder.
#include <fstream>
#include <sstream>

#include "ir/text.h"
#include "ops/builder.h"
#include "ops/verify.h"
#include "rlx/error.h"
#include "rlx/graph.h"
#include "rlx/ops.h"
#include "util/strings.h"

namespace rlx {

using ir::Attrs;
using ir::Op;

DType Value::dtype() const { return g_->type(id_).dtype; }
Shape Value::shape() const { return g_->type(id_).shape; }

Graph::Graph(std::string name) : impl_(std::make_shared<ir::Graph>()) { impl_->name = std::move(name); }

Value Graph::input(const std::string& name, DType dtype, Shape shape) {
  for (ir::ValueId v : impl_->inputs())
    if (impl_->value(v).name == name) throw Error(ErrorKind::invalid_argument, cat("graph @", impl_->name, " already has an input named '", name, "'"));
  return Value(impl_.get(), impl_->add_input({dtype, std::move(shape)}, name));
}

void Graph::set_outputs(const std::vector<Value>& outputs) {
  std::vector<ir::ValueId> ids;
  for (const auto& v : outputs) {
    if (v.ir_graph() != impl_.get()) throw Error(ErrorKind::invalid_argument, "an output value belongs to a different graph");
    ids.push_back(v.id());
  }
  impl_->set_outputs(std::move(ids));
}

void Graph::donate(size_t output_index, size_t input_index) {
  if (output_index >= impl_->outputs().size() || input_index >= impl_->inputs().size())
    throw Error(ErrorKind::invalid_argument, cat("donate: graph @", impl_->name, " has ", impl_->outputs().size(), " outputs and ",
                                                 impl_->inputs().size(), " inputs; ", output_index, ":", input_index, " is out of range"));
  const ir::Type& o = impl_->type(impl_->outputs()[output_index]);
  const ir::Type& i = impl_->type(impl_->inputs()[input_index]);
  if (o != i) throw Error(ErrorKind::invalid_argument, cat("donate: output ", output_index, " is ", ir::type_str(o), " but input ", input_index, " is ", ir::type_str(i)));
  impl_->donations.push_back({static_cast<int32_t>(output_index), static_cast<int32_t>(input_index)});
}

std::vector<Value> Graph::inputs() const {
  std::vector<Value> out;
  for (ir::ValueId v : impl_->inputs()) out.emplace_back(impl_.get(), v);
  return out;
}

std::vector<Value> Graph::outputs() const {
  std::vector<Value> out;
  for (ir::ValueId v : impl_->outputs()) out.emplace_back(impl_.get(), v);
  return out;
}

std::string Graph::to_text() const { return ir::print_graph(*impl_); }

Graph Graph::from_text(std::string_view text, const std::string& source_name) {
  auto g = std::make_shared<ir::Graph>(ir::parse_graph(text, source_name));
  ops::verify(*g, g->level());
  return Graph(std::move(g));
}

Graph Graph::load(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(ErrorKind::io, cat("cannot open ", path));
  std::stringstream ss;
  ss << f.rdbuf();
  return from_text(ss.str(), path);
}

void Graph::verify() const { ops::verify(*impl_, impl_->level()); }

namespace {

ir::Graph& graph_of(const std::vector<Value>& in) {
  if (in.empty() || !in[0].valid()) throw Error(ErrorKind::invalid_argument, "an op needs at least one valid input value");
  for (const auto& v : in)
    if (v.ir_graph() != in[0].ir_graph()) throw Error(ErrorKind::invalid_argument, "inputs of one op belong to different graphs");
  return *in[0].ir_graph();
}

std::vector<Value> emit(Op op, const std::vector<Value>& in, Attrs attrs = {}) {
  ir::Graph& g = graph_of(in);
  ops::Builder b(g);
  std::vector<ir::ValueId> ids;
  for (const auto& v : in) ids.push_back(v.id());
  std::vector<Value> out;
  for (ir::ValueId v : b.emit(op, ids, std::move(attrs))) out.emplace_back(&g, v);
  return out;
}

Value emit1(Op op, const std::vector<Value>& in, Attrs attrs = {}) { return emit(op, in, std::move(attrs))[0]; }

}  // namespace

std::vector<Value> op(const std::string& name, const std::vector<Value>& inputs, const std::string& attrs_text) {
  auto o = ir::op_from_name(name);
  if (!o) throw Error(ErrorKind::invalid_argument, cat("unknown op '", name, "'"));
  // Parse the attributes through the text form of a one-node graph: one grammar for both.
  Attrs attrs;
  std::string_view rest = trim(attrs_text);
  while (!rest.empty()) {
    size_t eq = rest.find('=');
    if (eq == std::string_view::npos) throw Error(ErrorKind::parse, cat("attribute list '", attrs_text, "' needs key=value pairs"));
    std::string key(trim(rest.substr(0, eq)));
    const ir::AttrSpec* spec = ir::find_attr_spec(*o, key);
    if (!spec) throw Error(ErrorKind::invalid_argument, cat(ir::op_keyword(*o), " has no attribute '", key, "'"));
    size_t i = eq + 1;
    int depth = 0;
    while (i < rest.size() && (depth > 0 || rest[i] != ',')) {
      if (rest[i] == '[' || rest[i] == '(' || rest[i] == '<') ++depth;
      if (rest[i] == ']' || rest[i] == ')' || rest[i] == '>') --depth;
      ++i;
    }
    attrs.set(key, ir::attr_from_text(rest.substr(eq + 1, i - eq - 1), *spec, cat(name, ".", key)));
    rest = i < rest.size() ? trim(rest.substr(i + 1)) : std::string_view();
  }
  if (inputs.empty()) throw Error(ErrorKind::invalid_argument, "rlx::op needs at least one input (use constant() for sources)");
  return emit(*o, inputs, std::move(attrs));
}

Value constant(Graph& g, const Tensor& t) {
  ops::Builder b(g.ir());
  return Value(&g.ir(), b.constant(t));
}

Value scalar_like(Value like, double v) {
  ops::Builder b(*like.ir_graph());
  return Value(like.ir_graph(), b.scalar(like.dtype(), v));
}

Value add(Value a, Value b) { return emit1(Op::add, {a, b}); }
Value sub(Value a, Value b) { return emit1(Op::sub, {a, b}); }
Value mul(Value a, Value b) { return emit1(Op::mul, {a, b}); }
Value div(Value a, Value b) { return emit1(Op::div, {a, b}); }
Value maximum(Value a, Value b) { return emit1(Op::max, {a, b}); }
Value minimum(Value a, Value b) { return emit1(Op::min, {a, b}); }
Value pow(Value a, Value b) { return emit1(Op::pow, {a, b}); }
Value neg(Value x) { return emit1(Op::neg, {x}); }
Value exp(Value x) { return emit1(Op::exp, {x}); }
Value log(Value x) { return emit1(Op::log, {x}); }
Value sqrt(Value x) { return emit1(Op::sqrt, {x}); }
Value tanh(Value x) { return emit1(Op::tanh, {x}); }
Value sigmoid(Value x) { return emit1(Op::sigmoid, {x}); }
Value cast(Value x, DType to) { return emit1(Op::cast, {x}, Attrs{{"to", to}}); }
Value select(Value c, Value a, Value b) { return emit1(Op::select, {c, a, b}); }
Value reshape(Value x, Shape shape) { return emit1(Op::reshape, {x}, Attrs{{"shape", std::move(shape)}}); }
Value transpose(Value x, std::vector<int64_t> perm) { return emit1(Op::transpose, {x}, Attrs{{"perm", std::move(perm)}}); }
Value concat(const std::vector<Value>& xs, int64_t axis) { return emit1(Op::concat, xs, Attrs{{"axis", axis}}); }
Value gather(Value x, Value idx, int64_t axis) { return emit1(Op::gather, {x, idx}, Attrs{{"axis", axis}}); }
Value reduce_sum(Value x, std::vector<int64_t> axes, bool keepdims) {
  return emit1(Op::reduce, {x}, Attrs{{"kind", std::string("sum")}, {"axes", std::move(axes)}, {"keepdims", keepdims}});
}
Value reduce_max(Value x, std::vector<int64_t> axes, bool keepdims) {
  return emit1(Op::reduce, {x}, Attrs{{"kind", std::string("max")}, {"axes", std::move(axes)}, {"keepdims", keepdims}});
}
Value argmax(Value x, int64_t axis, bool keepdims) {
  return emit1(Op::reduce, {x}, Attrs{{"kind", std::string("argmax")}, {"axes", std::vector<int64_t>{axis}}, {"keepdims", keepdims}});
}
Value matmul(Value a, Value b) { return emit1(Op::matmul, {a, b}); }
Value linear(Value x, Value w, std::optional<Value> bias) {
  return bias ? emit1(Op::linear, {x, w, *bias}) : emit1(Op::linear, {x, w});
}
Value relu(Value x) { return emit1(Op::relu, {x}); }
Value gelu(Value x) { return emit1(Op::gelu, {x}); }
Value silu(Value x) { return emit1(Op::silu, {x}); }
Value softmax(Value x, int64_t axis) { return emit1(Op::softmax, {x}, Attrs{{"axis", axis}}); }
Value log_softmax(Value x, int64_t axis) { return emit1(Op::log_softmax, {x}, Attrs{{"axis", axis}}); }
Value layer_norm(Value x, std::optional<Value> gamma, std::optional<Value> beta, double eps) {
  std::vector<Value> in = {x};
  if (gamma) in.push_back(*gamma);
  if (beta) {
    if (!gamma) throw Error(ErrorKind::invalid_argument, "layer_norm with a beta needs a gamma");
    in.push_back(*beta);
  }
  return emit1(Op::layer_norm, in, Attrs{{"eps", eps}});
}
Value rms_norm(Value x, std::optional<Value> gamma, double eps) {
  std::vector<Value> in = {x};
  if (gamma) in.push_back(*gamma);
  return emit1(Op::rms_norm, in, Attrs{{"eps", eps}});
}
Value embedding(Value table, Value ids) { return emit1(Op::embedding, {table, ids}); }
Value cross_entropy(Value logits, Value labels) { return emit1(Op::cross_entropy, {logits, labels}); }

}  // namespace rlx
