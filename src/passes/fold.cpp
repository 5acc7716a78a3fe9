#include "ops/rules.h"
#include "passes/rewrite.h"
#include "passes/simplify.h"

namespace rlx::passes {

ir::Graph fold_constants(const ir::Graph& g, const NodeEvaluator& eval, int64_t max_elements) {
  Rule fold{"fold", [&](RewriteBuilder& b, Op op, const std::vector<ValueId>& in, const Attrs& attrs) -> std::optional<std::vector<ValueId>> {
    if (op == Op::constant || ir::has_trait(op, ir::kCollective)) return std::nullopt;  // a collective's value is the other ranks'
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
  // A transpose that moves only axes of size 1 keeps every element where it was: a reshape,
  // which is a view (decode's [B,1,H,D] ↔ [B,H,1,D] head shuffles: four copies a layer).
  Rule unit_transpose{"unit transpose", [&](RewriteBuilder& b, Op op, const std::vector<ValueId>& in,
                                            const Attrs& attrs) -> std::optional<std::vector<ValueId>> {
    if (op != Op::transpose || b.inherited_path() != ir::Path::native) return std::nullopt;
    const Shape& shape = b.type(in[0]).shape;
    std::vector<int64_t> perm = attrs.ints("perm");
    int64_t last = -1;
    Shape out;
    for (int64_t axis : perm) {
      const Dim& d = shape[static_cast<size_t>(axis)];
      out.push_back(d);
      if (d.is_static() && d.value() == 1) continue;
      if (axis < last) return std::nullopt;  // two axes that hold data change order
      last = axis;
    }
    return b.emit_plain(Op::reshape, {in[0]}, Attrs{{"shape", out}}, ir::Path::native);
  }};
  return rewrite(g, {fold, unit_transpose}, "fold");
}

}  // namespace rlx::passes
