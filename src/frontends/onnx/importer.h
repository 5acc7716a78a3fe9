// Internals of the ONNX importer: the builder that folds what is known at import time, the
// per-node context converters read their inputs and attributes from, and the converter table.
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include <onnx/onnx_pb.h>

#include "frontends/onnx/onnx.h"
#include "ops/builder.h"
#include "passes/simplify.h"

namespace rlx::frontends::onnx {

using ir::Attrs;
using ir::Ints;
using ir::Op;
using ir::ValueId;
using ir::kNoValue;

// Emits like ops::Builder and knows the value of what is computable at import: constants and
// whatever folds from them, shape-like integer vectors with symbolic dims, and (on demand) the
// values of graph inputs given to the importer.
class FoldingBuilder : public ops::Builder {
 public:
  FoldingBuilder(ir::Graph& g, passes::NodeEvaluator eval) : Builder(g), eval_(std::move(eval)) {}
  std::vector<ValueId> emit(Op op, std::vector<ValueId> inputs, Attrs attrs = {}) override;

  // The value of v when it is a constant (or folds from constants); null otherwise.
  const Tensor* constant_value(ValueId v) const;
  // The value of v, evaluating its producers on demand, graph inputs included when a tensor was
  // bound to them; nullopt when some graph input it depends on has no bound value.
  std::optional<Tensor> evaluate(ValueId v);
  // Shape-like integer values (rank ≤ 1) whose elements are dims, possibly symbolic.
  std::optional<std::vector<Dim>> dims_value(ValueId v);
  void set_dims_value(ValueId v, std::vector<Dim> dims) { dims_[v] = std::move(dims); }

  void bind_input(ValueId v, Tensor t) { bound_[v] = std::move(t); }
  const std::vector<ValueId>& used_bindings() const { return used_bound_; }

 private:
  void propagate_dims(Op op, const std::vector<ValueId>& in, const Attrs& attrs, ValueId out);
  passes::NodeEvaluator eval_;
  std::unordered_map<ValueId, Tensor> const_;    // constants and what folds from them
  std::unordered_map<ValueId, Tensor> lazy_;     // evaluated on demand (may involve bound inputs)
  std::unordered_map<ValueId, std::vector<Dim>> dims_;
  std::unordered_map<ValueId, Tensor> bound_;
  std::vector<ValueId> used_bound_;
};

class Importer;

// A value of the ONNX graph: a tensor (one IR value), a sequence of tensors (inlined as a list
// of IR values) or an empty optional.
struct IValue {
  enum class Kind : uint8_t { tensor, sequence, none };
  Kind kind = Kind::tensor;
  ValueId v = kNoValue;
  std::vector<ValueId> items;
  DType elem = DType::f32;  // element dtype of a sequence (kept for empty ones)
  static IValue tensor(ValueId id) { return {Kind::tensor, id, {}, DType::f32}; }
  static IValue sequence(std::vector<ValueId> xs, DType d) { return {Kind::sequence, kNoValue, std::move(xs), d}; }
  static IValue none() { return {Kind::none, kNoValue, {}, DType::f32}; }
  bool is_tensor() const { return kind == Kind::tensor; }
};

// What a converter sees of one node.
class NodeCtx {
 public:
  NodeCtx(Importer& imp, const ::onnx::NodeProto& node, int64_t opset, std::vector<IValue> in);

  const ::onnx::NodeProto& node;
  int64_t opset;  // the model's opset for the node's domain
  Importer& imp;
  FoldingBuilder& b;

  const std::string& op_type() const { return node.op_type(); }
  std::string label() const;  // "Conv node 'conv1'"
  [[noreturn]] void fail(const std::string& msg) const;         // rlx::Error(unsupported)
  [[noreturn]] void invalid(const std::string& msg) const;      // rlx::Error(format): a malformed model

  // ---- inputs (missing optional inputs are absent or named "")
  size_t num_inputs() const { return in_.size(); }
  bool has(size_t i) const { return i < in_.size() && in_[i] != kNoValue; }
  ValueId in(size_t i) const;  // throws naming the missing input
  const std::vector<ValueId>& inputs() const { return in_; }
  // Any input, sequences and empty optionals included (a missing optional input is none).
  IValue value_in(size_t i) const { return i < vals_.size() ? vals_[i] : IValue::none(); }
  const std::vector<IValue>& values_in() const { return vals_; }
  // A sequence input's items; throws naming the input when it is not a sequence.
  const IValue& sequence_in(size_t i) const;
  size_t num_outputs() const { return static_cast<size_t>(node.output_size()); }
  bool wants(size_t i) const { return i < num_outputs() && !node.output(static_cast<int>(i)).empty(); }

  Shape shape(ValueId v) const { return b.shape(v); }
  DType dtype(ValueId v) const { return b.dtype(v); }
  int64_t rank(ValueId v) const { return static_cast<int64_t>(b.rank(v)); }
  std::vector<int64_t> static_shape(ValueId v, const char* what) const;  // throws when symbolic
  // Throws rlx::Error(format) naming `what` unless min_rank <= rank(v) <= max_rank.
  void require_rank(ValueId v, int64_t min_rank, int64_t max_rank, const char* what) const;

  // ---- attributes
  const ::onnx::AttributeProto* attr(const char* name) const;
  bool has_attr(const char* name) const { return attr(name) != nullptr; }
  int64_t attr_i(const char* name, int64_t def) const;
  float attr_f(const char* name, float def) const;
  std::string attr_s(const char* name, const std::string& def) const;
  std::vector<int64_t> attr_ints(const char* name, std::vector<int64_t> def = {}) const;
  std::vector<float> attr_floats(const char* name, std::vector<float> def = {}) const;
  Tensor attr_t(const char* name) const;
  const ::onnx::GraphProto& attr_g(const char* name) const;

  // ---- static arguments: values the IR needs at compile time
  Tensor value(size_t i, const char* what);
  std::vector<int64_t> ints(size_t i, const char* what);
  int64_t int_scalar(size_t i, const char* what);  // an integer tensor of exactly one value
  std::vector<Dim> dims(size_t i, const char* what);
  double scalar(size_t i, const char* what);
  std::optional<Tensor> try_value(size_t i);

  // Normalizes a possibly negative axis for a rank, failing with the node's name.
  int64_t axis(int64_t a, int64_t rank) const;

 private:
  std::vector<IValue> vals_;
  std::vector<ValueId> in_;  // tensor inputs (kNoValue for absent, sequence and none inputs)
};

using Converter = std::vector<ValueId> (*)(NodeCtx& c);
// For operators on sequences and optionals (and control flow carrying them).
using ValueConverter = std::vector<IValue> (*)(NodeCtx& c);

struct OpEntry {
  const char* domain;  // "" (ai.onnx), "com.microsoft", "ai.onnx.preview.training"
  const char* op;
  int since;           // first opset version this converter handles
  Converter fn;
  ValueConverter values = nullptr;  // used instead of fn when set
};
using OpTable = std::vector<OpEntry>;

// Finds the converter for (domain, op) at an opset (the entry with the highest since ≤ opset).
const OpEntry* find_converter(const std::string& domain, const std::string& op, int64_t opset);
// Every (domain, op) the importer maps, for `rlx info` and the docs.
std::vector<std::string> supported_ops();

// Family registrars, one per ops_*.cpp.
void register_elementwise(OpTable& t);
void register_math(OpTable& t);
void register_reduce(OpTable& t);
void register_shape(OpTable& t);
void register_index(OpTable& t);
void register_nn(OpTable& t);
void register_pool(OpTable& t);
void register_norm(OpTable& t);
void register_resize(OpTable& t);
void register_sample(OpTable& t);
void register_rnn(OpTable& t);
void register_control(OpTable& t);
void register_quant(OpTable& t);
void register_loss(OpTable& t);
void register_signal(OpTable& t);
void register_contrib(OpTable& t);
void register_sequence(OpTable& t);
void register_dynamic(OpTable& t);

// Integer elements of a tensor, exact for i64 (int64 max included).
std::vector<int64_t> tensor_ints(const Tensor& t);

// Canonical domain name: "ai.onnx" → "".
std::string canonical_domain(const std::string& d);

class Importer {
 public:
  Importer(std::shared_ptr<::onnx::ModelProto> model, std::string base_dir, const ImportOptions& options);
  ImportedModel run();

  FoldingBuilder& builder() { return b_; }
  const ImportOptions& options() const { return options_; }
  int64_t opset(const std::string& domain) const;
  // Converts a subgraph (If branch, Loop/Scan body) inline: binds its inputs to `inputs`, sees
  // the enclosing scopes' values, returns its outputs.
  std::vector<ValueId> inline_subgraph(const ::onnx::GraphProto& g, const std::vector<ValueId>& inputs, const std::string& what);
  std::vector<IValue> inline_graph(const ::onnx::GraphProto& g, const std::vector<IValue>& inputs, const std::string& what);
  const std::string& base_dir() const { return base_dir_; }
  // The value a name refers to in the current scope (Gradient names its ys and xs).
  IValue value_named(const std::string& name, const std::string& user) { return lookup(name, user); }
  std::shared_ptr<::onnx::ModelProto> model() const { return model_; }

 private:
  struct Scope {
    std::unordered_map<std::string, IValue> values;
    std::unordered_map<std::string, const ::onnx::TensorProto*> initializers;  // not yet read
  };
  IValue lookup(const std::string& name, const std::string& user);
  IValue graph_input(const ::onnx::ValueInfoProto& in, ImportedModel& out);
  void convert_nodes(const ::onnx::GraphProto& g);
  void convert_node(const ::onnx::NodeProto& n);
  void check_supported();

  std::shared_ptr<::onnx::ModelProto> model_;
  std::string base_dir_;
  const ImportOptions& options_;
  std::shared_ptr<ir::Graph> graph_;
  FoldingBuilder b_;
  std::map<std::string, int64_t> opsets_;
  std::vector<Scope> scopes_;
  int64_t node_counter_ = 0;
  std::set<std::string> poisoned_;     // outputs of top-level nodes that could not be mapped
  std::vector<std::string> unmapped_;  // why, one line per node
};

}  // namespace rlx::frontends::onnx
