#include "ops/rules.h"
#include "passes/rewrite.h"
#include "passes/simplify.h"

namespace rlx::passes {

ir::Graph fold_constants(const ir::Graph& g, const NodeEvaluator& eval, int64_t max_elements) {
  Rule fold{"fold", [&](RewriteBuilder& b, Op op, const std::vector<ValueId>& in, const Attrs& attrs) -> std::optional<std::vector<ValueId>> {
    if (op == Op::constant) return std::nullopt;
    std::vector<Tensor> values;
    for (ValueId v : in) {
      const ir::Node* p = b.graph().producer(v);
      if (!p || p->op != Op::constant) return std::nullopt;
      values.push_back(p->attrs.tensor("value"));
    }
    std::vector<Type> in_types;
    for (ValueId v : in) in_types.push_back(b.type(v));
    std::vector<Type> out_types = ops::infer_types(op, in_types, attrs);
    int64_t total = 0;
    for (const auto& t : out_types) {
      if (!shape_is_static(t.shape)) return std::nullopt;
      total += shape_numel(t.shape).value();
    }
    // Ops that move or convert data without growing it (casts of weights to bf16, reshapes,
    // transposes) always fold; the limit keeps broadcasts and iotas lazy.
    int64_t in_total = 0;
    for (const auto& t : values) in_total += t.numel();
    bool no_growth = op == Op::cast || op == Op::reshape || op == Op::transpose;
    if (total > max_elements && !(no_growth && total <= in_total)) return std::nullopt;
    std::vector<Tensor> results = eval(op, attrs, values, out_types);
    std::vector<ValueId> outs;
    for (const auto& t : results) outs.push_back(b.emit_plain(Op::constant, {}, Attrs{{"value", t}}, ir::Path::native)[0]);
    return outs;
  }};
  return rewrite(g, {fold}, "fold");
}

}  // namespace rlx::passes
