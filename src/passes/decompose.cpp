#include "passes/decompose.h"

#include "ops/rules.h"
#include "passes/rewrite.h"

namespace rlx::passes {

ir::Graph decompose(const ir::Graph& g) {
  Rule rule{"decompose", [](RewriteBuilder& b, Op op, const std::vector<ValueId>& in, const Attrs& attrs) -> std::optional<std::vector<ValueId>> {
    if (!ops::has_decomposition(op)) return std::nullopt;
    std::string name = b.context_name(), origin = b.context_origin();
    b.set_context(name, origin.empty() ? ir::op_keyword(op) : origin);
    auto out = ops::op_rule(op).decompose(b, in, attrs);
    b.set_context(name, origin);
    return out;
  }};
  return rewrite(g, {rule}, "decompose");
}

}  // namespace rlx::passes
