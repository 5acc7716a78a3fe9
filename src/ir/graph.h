// The SSA graph all three IR levels share: values with types, nodes in topological order.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ir/attrs.h"
#include "ir/op.h"
#include "rlx/dtype.h"
#include "rlx/shape.h"

namespace rlx::ir {

struct Type {
  DType dtype = DType::f32;
  Shape shape;
  bool operator==(const Type& o) const { return dtype == o.dtype && shape == o.shape; }
  bool operator!=(const Type& o) const { return !(*this == o); }
};
std::string type_str(const Type& t);  // "f32[B,384]"

using ValueId = int32_t;
constexpr ValueId kNoValue = -1;

struct Value {
  Type type;
  int32_t node = -1;  // producing node, -1 for graph inputs
  int32_t index = 0;  // output index of the producer, or input index
  std::string name;   // optional; printed as %name
};

// How legalization resolved a node for its device (DESIGN §3).
enum class Path : uint8_t { unresolved, native, common_ir, rewritten };
const char* path_name(Path p);

struct Node {
  Op op;
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;
  Attrs attrs;
  std::string name;    // model-level name ("encoder.0.attn"); inherited by decompositions
  std::string origin;  // the op this node was decomposed or rewritten from, e.g. "hir.linear"
  Path path = Path::unresolved;
};

// LIR: where each value's bytes live during a run.
struct Placement {
  enum class Kind : uint8_t { none, arena, input, constant, view };
  Kind kind = Kind::none;
  int64_t offset = 0;  // arena: byte offset; view: byte offset into the value aliased
  int64_t bytes = 0;
  int32_t index = -1;  // input: graph input index; view: the value aliased
};

class Graph {
 public:
  std::string name = "main";

  ValueId add_input(Type type, std::string name = "");
  // Appends a node whose output types are already known; returns its output values.
  std::vector<ValueId> add_node(Op op, std::vector<ValueId> inputs, Attrs attrs, std::vector<Type> out_types,
                                std::string name = "", std::string origin = "");
  void set_outputs(std::vector<ValueId> outs) { outputs_ = std::move(outs); }

  const Value& value(ValueId v) const { return values_.at(static_cast<size_t>(v)); }
  Value& value(ValueId v) { return values_.at(static_cast<size_t>(v)); }
  const Type& type(ValueId v) const { return value(v).type; }
  const Node& node(int i) const { return nodes_.at(static_cast<size_t>(i)); }
  Node& node(int i) { return nodes_.at(static_cast<size_t>(i)); }
  // The node producing v, or nullptr for graph inputs.
  const Node* producer(ValueId v) const;

  const std::vector<Node>& nodes() const { return nodes_; }
  std::vector<Node>& nodes() { return nodes_; }
  const std::vector<ValueId>& inputs() const { return inputs_; }
  const std::vector<ValueId>& outputs() const { return outputs_; }
  size_t num_values() const { return values_.size(); }
  int num_nodes() const { return static_cast<int>(nodes_.size()); }

  // HIR when any HIR op remains, MIR otherwise; LIR once a memory plan is attached.
  Level level() const;
  // Number of uses of every value (graph outputs count as a use).
  std::vector<int> use_counts() const;
  // Symbols appearing in any type.
  std::set<std::string> symbols() const;

  // Donated inputs: (output index, input index) pairs. The output may be computed in the
  // input's own buffer (a KV cache updated by a scatter), so a donated input's tensor is
  // overwritten by the run. Passes keep inputs and outputs in order, so indices stay valid.
  std::vector<std::pair<int32_t, int32_t>> donations;

  // LIR only: the memory plan.
  bool is_lir = false;
  std::string device;  // the device the graph was legalized for ("" before legalization)
  int64_t arena_bytes = 0;
  std::vector<Placement> placement;  // one per value

 private:
  std::vector<Value> values_;
  std::vector<Node> nodes_;
  std::vector<ValueId> inputs_, outputs_;
};

}  // namespace rlx::ir
