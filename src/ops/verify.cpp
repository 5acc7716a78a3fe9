#include "ops/verify.h"

#include "ir/verify.h"
#include "ops/rules.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::ops {

void verify(const ir::Graph& g, ir::Level level) {
  std::vector<std::string> problems;
  ir::verify_structure(g, problems);
  if (problems.empty()) {
    for (int i = 0; i < g.num_nodes(); ++i) {
      const ir::Node& n = g.node(i);
      std::vector<ir::Type> in;
      for (ir::ValueId v : n.inputs) in.push_back(g.type(v));
      try {
        std::vector<ir::Type> out = infer_types(n.op, in, n.attrs);
        for (size_t k = 0; k < out.size() && k < n.outputs.size(); ++k)
          if (out[k] != g.type(n.outputs[k]))
            problems.push_back(cat(ir::describe_node(g, i), ": output ", k, " is declared ", ir::type_str(g.type(n.outputs[k])),
                                   " but the op produces ", ir::type_str(out[k])));
      } catch (const Error& e) {
        problems.push_back(cat(ir::describe_node(g, i), ": ", e.what()));
      }
    }
  }
  ir::verify_level(g, level, problems);
  if (problems.empty()) return;
  constexpr size_t kMax = 20;
  std::string msg = cat("graph @", g.name, " failed verification at ", ir::level_name(level), " level (", problems.size(),
                        problems.size() == 1 ? " problem):" : " problems):");
  for (size_t i = 0; i < problems.size() && i < kMax; ++i) msg += "\n  " + problems[i];
  if (problems.size() > kMax) msg += cat("\n  … and ", problems.size() - kMax, " more");
  throw Error(ErrorKind::invalid_graph, msg);
}

}  // namespace rlx::ops
