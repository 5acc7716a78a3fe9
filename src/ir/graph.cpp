#include "ir/graph.h"

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::ir {

std::string type_str(const Type& t) { return std::string(dtype_name(t.dtype)) + shape_str(t.shape); }

const char* path_name(Path p) {
  switch (p) {
    case Path::unresolved: return "unresolved";
    case Path::native: return "native";
    case Path::common_ir: return "common-ir";
    case Path::rewritten: return "rewritten";
  }
  return "?";
}

ValueId Graph::add_input(Type type, std::string name) {
  ValueId id = static_cast<ValueId>(values_.size());
  values_.push_back({std::move(type), -1, static_cast<int32_t>(inputs_.size()), std::move(name)});
  inputs_.push_back(id);
  return id;
}

std::vector<ValueId> Graph::add_node(Op op, std::vector<ValueId> inputs, Attrs attrs, std::vector<Type> out_types,
                                     std::string name, std::string origin) {
  for (ValueId v : inputs)
    if (v < 0 || static_cast<size_t>(v) >= values_.size())
      throw Error(ErrorKind::internal, cat(op_keyword(op), ": input value %", v, " does not exist"));
  Node n;
  n.op = op;
  n.inputs = std::move(inputs);
  n.attrs = std::move(attrs);
  n.name = std::move(name);
  n.origin = std::move(origin);
  int32_t node_index = static_cast<int32_t>(nodes_.size());
  for (size_t i = 0; i < out_types.size(); ++i) {
    ValueId id = static_cast<ValueId>(values_.size());
    values_.push_back({std::move(out_types[i]), node_index, static_cast<int32_t>(i), ""});
    n.outputs.push_back(id);
  }
  nodes_.push_back(std::move(n));
  return nodes_.back().outputs;
}

const Node* Graph::producer(ValueId v) const {
  int32_t n = value(v).node;
  return n < 0 ? nullptr : &nodes_[static_cast<size_t>(n)];
}

Level Graph::level() const {
  if (is_lir) return Level::LIR;
  for (const auto& n : nodes_)
    if (op_info(n.op).level == Level::HIR) return Level::HIR;
  return Level::MIR;
}

std::vector<int> Graph::use_counts() const {
  std::vector<int> uses(values_.size(), 0);
  for (const auto& n : nodes_)
    for (ValueId v : n.inputs) ++uses[static_cast<size_t>(v)];
  for (ValueId v : outputs_) ++uses[static_cast<size_t>(v)];
  return uses;
}

std::set<std::string> Graph::symbols() const {
  std::set<std::string> out;
  for (const auto& v : values_)
    for (const auto& d : v.type.shape) d.collect_symbols(out);
  return out;
}

}  // namespace rlx::ir
