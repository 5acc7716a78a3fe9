#include <algorithm>
#include <cctype>
#include <set>
#include <unordered_map>

#include "ir/text.h"
#include "util/strings.h"

namespace rlx::ir {

namespace {

bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; }

std::string clean_name(const std::string& n) {
  std::string out;
  for (char c : n) out += name_char(c) ? c : '_';
  bool numeric = !out.empty();
  for (char c : out) numeric = numeric && std::isdigit(static_cast<unsigned char>(c));
  if (numeric) out = "v" + out;  // plain numbers are reserved for unnamed values
  return out;
}

class Namer {
 public:
  explicit Namer(const Graph& g) : names_(g.num_values()) {
    std::set<std::string> taken;
    for (size_t v = 0; v < g.num_values(); ++v) {
      const std::string& n = g.value(static_cast<ValueId>(v)).name;
      if (n.empty()) continue;
      std::string base = clean_name(n), cand = base;
      for (int k = 1; taken.count(cand); ++k) cand = cat(base, "_", k);
      taken.insert(cand);
      names_[v] = cand;
    }
    int next = 0;
    for (size_t v = 0; v < g.num_values(); ++v) {
      if (!names_[v].empty()) continue;
      while (taken.count(std::to_string(next))) ++next;
      names_[v] = std::to_string(next++);
    }
  }
  std::string operator()(ValueId v) const { return "%" + names_[static_cast<size_t>(v)]; }

 private:
  std::vector<std::string> names_;
};

std::string placement_text(const Placement& p, const Namer& name) {
  switch (p.kind) {
    case Placement::Kind::none: return "";
    case Placement::Kind::arena: return cat(" @arena[", p.offset, ":", p.offset + p.bytes, "]");
    case Placement::Kind::input: return cat(" @input[", p.index, "]");
    case Placement::Kind::constant: return cat(" @const[", p.bytes, "]");
    case Placement::Kind::view: return cat(" @view(", name(p.index), p.offset ? cat("+", p.offset) : std::string(), ")");
  }
  return "";
}

}  // namespace

std::string print_graph(const Graph& g) {
  Namer name(g);
  std::string out = cat(g.is_lir ? "lir" : "graph", " @", clean_name(g.name), "(");
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    ValueId v = g.inputs()[i];
    out += cat(i ? ", " : "", name(v), ": ", type_str(g.type(v)));
  }
  out += ")";
  if (!g.donations.empty()) {
    out += " donate[";
    for (size_t i = 0; i < g.donations.size(); ++i) out += cat(i ? "," : "", g.donations[i].first, ":", g.donations[i].second);
    out += "]";
  }
  if (g.is_lir) out += cat(g.device.empty() ? "" : " device=" + g.device, " arena=", g.arena_bytes);
  out += " {\n";
  for (const auto& n : g.nodes()) {
    out += "  ";
    for (size_t i = 0; i < n.outputs.size(); ++i) out += (i ? ", " : "") + name(n.outputs[i]);
    out += " = " + op_keyword(n.op) + "(";
    for (size_t i = 0; i < n.inputs.size(); ++i) out += (i ? ", " : "") + name(n.inputs[i]);
    out += ")";
    // Attributes in schema order; those equal to their default are left out.
    std::string attrs;
    for (const auto& spec : op_info(n.op).attrs) {
      const AttrValue* v = n.attrs.find(spec.name);
      if (!v) continue;
      if (!spec.default_text.empty()) {
        AttrValue def = attr_from_text(spec.default_text, spec, spec.name);
        if (attr_equal(def, *v)) continue;
      }
      attrs += cat(attrs.empty() ? "" : ", ", spec.name, "=", attr_to_text(*v, spec.type));
    }
    if (!attrs.empty()) out += " {" + attrs + "}";
    out += " : ";
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      out += (i ? ", " : "") + type_str(g.type(n.outputs[i]));
      if (g.is_lir && static_cast<size_t>(n.outputs[i]) < g.placement.size())
        out += placement_text(g.placement[static_cast<size_t>(n.outputs[i])], name);
    }
    if (!n.name.empty() || !n.origin.empty()) {
      out += " loc(" + json_quote(n.name);
      // An origin with a space ("vjp hir.linear", from autodiff) is quoted; a plain op name is not.
      bool plain = std::all_of(n.origin.begin(), n.origin.end(), name_char);
      if (!n.origin.empty()) out += " from " + (plain ? n.origin : json_quote(n.origin));
      out += ")";
    }
    out += "\n";
  }
  out += "  return";
  for (size_t i = 0; i < g.outputs().size(); ++i) out += (i ? ", " : " ") + name(g.outputs()[i]);
  out += "\n}\n";
  return out;
}

}  // namespace rlx::ir
