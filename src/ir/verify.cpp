#include "ir/verify.h"

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::ir {

std::string describe_node(const Graph& g, int i) {
  const Node& n = g.node(i);
  std::string out = cat("node #", i, " ", op_keyword(n.op));
  if (!n.name.empty()) out += cat(" \"", n.name, "\"");
  if (!n.origin.empty()) out += cat(" (from ", n.origin, ")");
  return out;
}

void verify_structure(const Graph& g, std::vector<std::string>& problems) {
  for (int i = 0; i < g.num_nodes(); ++i) {
    const Node& n = g.node(i);
    const OpInfo& info = op_info(n.op);
    int nin = static_cast<int>(n.inputs.size());
    if (nin < info.min_inputs || (info.max_inputs >= 0 && nin > info.max_inputs)) {
      std::string want = info.max_inputs < 0 ? cat("at least ", info.min_inputs)
                         : info.min_inputs == info.max_inputs ? cat(info.min_inputs)
                                                              : cat(info.min_inputs, " to ", info.max_inputs);
      problems.push_back(cat(describe_node(g, i), ": takes ", want, " inputs, has ", nin));
    }
    if (info.num_outputs >= 0 && static_cast<int>(n.outputs.size()) != info.num_outputs)
      problems.push_back(cat(describe_node(g, i), ": defines ", info.num_outputs, " outputs, has ", n.outputs.size()));
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      ValueId v = n.inputs[k];
      if (v < 0 || static_cast<size_t>(v) >= g.num_values()) {
        problems.push_back(cat(describe_node(g, i), ": input ", k, " refers to a value that does not exist"));
        continue;
      }
      if (g.value(v).node >= i) problems.push_back(cat(describe_node(g, i), ": input ", k, " is used before it is defined"));
    }
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      ValueId v = n.outputs[k];
      if (v < 0 || static_cast<size_t>(v) >= g.num_values() || g.value(v).node != i || g.value(v).index != static_cast<int>(k))
        problems.push_back(cat(describe_node(g, i), ": output ", k, " is not owned by the node"));
    }
    Attrs copy = n.attrs;
    try {
      normalize_attrs(n.op, copy);
      if (!(copy == n.attrs)) problems.push_back(cat(describe_node(g, i), ": attributes lack their defaults (not normalized)"));
    } catch (const Error& e) {
      problems.push_back(cat(describe_node(g, i), ": ", e.what()));
    }
  }
  for (const auto& [o, i] : g.donations) {
    if (o < 0 || static_cast<size_t>(o) >= g.outputs().size() || i < 0 || static_cast<size_t>(i) >= g.inputs().size()) {
      problems.push_back(cat("donation ", o, ":", i, " names an output or input that does not exist"));
      continue;
    }
    if (g.type(g.outputs()[static_cast<size_t>(o)]) != g.type(g.inputs()[static_cast<size_t>(i)]))
      problems.push_back(cat("donation ", o, ":", i, ": output ", o, " and input ", i, " must have the same type"));
  }
  for (size_t k = 0; k < g.outputs().size(); ++k) {
    ValueId v = g.outputs()[k];
    if (v < 0 || static_cast<size_t>(v) >= g.num_values()) problems.push_back(cat("graph output ", k, " refers to a value that does not exist"));
  }
}

void verify_level(const Graph& g, Level level, std::vector<std::string>& problems) {
  if (level == Level::HIR) return;
  for (int i = 0; i < g.num_nodes(); ++i) {
    const Node& n = g.node(i);
    if (op_info(n.op).level == Level::HIR && n.path != Path::native)
      problems.push_back(cat(describe_node(g, i), ": HIR op at ", level_name(level),
                             " level; it must be decomposed or claimed natively by the device"));
  }
  if (level != Level::LIR) return;
  if (g.placement.size() != g.num_values()) {
    problems.push_back(cat("LIR graph has ", g.placement.size(), " placements for ", g.num_values(), " values"));
    return;
  }
  for (size_t v = 0; v < g.num_values(); ++v) {
    const Value& val = g.value(static_cast<ValueId>(v));
    if (!shape_is_static(val.type.shape))
      problems.push_back(cat("value %", v, " has symbolic type ", type_str(val.type), " in LIR"));
    const Placement& p = g.placement[v];
    if (p.kind == Placement::Kind::none && val.node >= 0) problems.push_back(cat("value %", v, " has no placement"));
    if (p.kind == Placement::Kind::arena && (p.offset < 0 || p.offset + p.bytes > g.arena_bytes))
      problems.push_back(cat("value %", v, " lies outside the arena"));
    if (p.kind == Placement::Kind::view) {
      if (p.index < 0 || static_cast<size_t>(p.index) >= g.num_values()) {
        problems.push_back(cat("value %", v, " is a view of a value that does not exist"));
        continue;
      }
      const Type& of = g.value(p.index).type;
      if (shape_is_static(of.shape) && shape_is_static(val.type.shape) &&
          (p.offset < 0 || p.offset + static_cast<int64_t>(dtype_bytes(val.type.dtype, shape_numel(val.type.shape).value())) >
                               static_cast<int64_t>(dtype_bytes(of.dtype, shape_numel(of.shape).value()))))
        problems.push_back(cat("value %", v, " is a view reaching past the bytes of %", p.index));
    }
  }
}

}  // namespace rlx::ir
