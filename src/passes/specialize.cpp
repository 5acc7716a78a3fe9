#include "passes/specialize.h"

#include "passes/rewrite.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::passes {

ir::Graph specialize(const ir::Graph& g, const Bindings& bindings) {
  std::vector<std::string> missing;
  for (const auto& s : g.symbols())
    if (!bindings.count(s)) missing.push_back(s);
  if (!missing.empty())
    throw Error(ErrorKind::invalid_argument, cat("graph @", g.name, " needs values for the symbols ", join(missing), " (bind them, e.g. --bind ",
                                                 missing[0], "=1)"));
  RewriteOptions opts;
  opts.map_type = [&](const Type& t) { return Type{t.dtype, shape_substitute(t.shape, bindings)}; };
  opts.map_attrs = [&](Attrs& a) {
    for (const auto& [key, v] : a.items())
      if (auto* s = std::get_if<Shape>(&v)) a.set(key, shape_substitute(*s, bindings));
  };
  ir::Graph out = rewrite(g, {}, "specialize", opts);
  return out;
}

Bindings bind_inputs(const ir::Graph& g, const std::vector<std::vector<int64_t>>& shapes) {
  if (shapes.size() != g.inputs().size())
    throw Error(ErrorKind::invalid_argument, cat("graph @", g.name, " takes ", g.inputs().size(), " inputs, got ", shapes.size()));
  Bindings b;
  auto input_name = [&](size_t i) {
    const std::string& n = g.value(g.inputs()[i]).name;
    return n.empty() ? cat("input ", i) : cat("input '", n, "'");
  };
  // Single symbols first, then check every dim (including expressions such as S+1).
  for (size_t i = 0; i < shapes.size(); ++i) {
    const Shape& want = g.type(g.inputs()[i]).shape;
    if (want.size() != shapes[i].size())
      throw Error(ErrorKind::invalid_argument, cat(input_name(i), " must have rank ", want.size(), " (", shape_str(want), "), got rank ",
                                                   shapes[i].size()));
    for (size_t d = 0; d < want.size(); ++d) {
      if (!want[d].is_symbol()) continue;
      const std::string& s = want[d].symbol_name();
      auto it = b.find(s);
      if (it == b.end()) b[s] = shapes[i][d];
      else if (it->second != shapes[i][d])
        throw Error(ErrorKind::invalid_argument, cat(input_name(i), " dim ", d, " is ", shapes[i][d], " but symbol ", s, " is already ",
                                                     it->second, " from another input"));
    }
  }
  for (size_t i = 0; i < shapes.size(); ++i) {
    const Shape& want = g.type(g.inputs()[i]).shape;
    for (size_t d = 0; d < want.size(); ++d) {
      Dim v = want[d].substitute(b);
      auto c = v.try_value();
      if (!c) throw Error(ErrorKind::invalid_argument, cat(input_name(i), " dim ", d, " (", want[d].str(), ") cannot be solved from the inputs"));
      if (*c != shapes[i][d])
        throw Error(ErrorKind::invalid_argument, cat(input_name(i), " dim ", d, " must be ", want[d].str(), " = ", *c, ", got ", shapes[i][d]));
    }
  }
  return b;
}

}  // namespace rlx::passes
