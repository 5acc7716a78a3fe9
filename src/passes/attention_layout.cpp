#include "passes/attention_layout.h"

#include "ops/builder.h"
#include "ops/rules.h"
#include "passes/rewrite.h"
#include "passes/simplify.h"

namespace rlx::passes {

namespace {

bool is_head_transpose(const ir::Node* n) {
  return n && n->op == Op::transpose && n->attrs.ints("perm") == ir::Ints{0, 2, 1, 3};
}

}  // namespace

ir::Graph fold_attention_transposes(const ir::Graph& g, const KernelClaims& device) {
  std::vector<ValueId> folded_out(g.num_values(), ir::kNoValue);  // attention output in bshd
  ir::Graph out = copy_rewriting(g, "fold-attention-transposes", [&](ops::Builder& b, const ir::Node& n, int, std::vector<ValueId>& map) {
    // a transpose undoing a folded attention's head order: use the bshd result directly
    if (is_head_transpose(&n) && folded_out[static_cast<size_t>(n.inputs[0])] != ir::kNoValue) {
      map[static_cast<size_t>(n.outputs[0])] = folded_out[static_cast<size_t>(n.inputs[0])];
      return true;
    }
    if (n.op != Op::attention || n.attrs.s("layout") != "bhsd" || n.path != ir::Path::native) return false;
    const ir::Node* t[3] = {g.producer(n.inputs[0]), g.producer(n.inputs[1]), g.producer(n.inputs[2])};
    if (!is_head_transpose(t[0]) || !is_head_transpose(t[1]) || !is_head_transpose(t[2])) return false;
    std::vector<ValueId> in = mapped({t[0]->inputs[0], t[1]->inputs[0], t[2]->inputs[0]}, map);
    if (n.inputs.size() > 3) in.push_back(map[static_cast<size_t>(n.inputs[3])]);
    Attrs a = n.attrs;
    a.set("layout", std::string("bshd"));
    std::vector<Type> in_types;
    for (ValueId v : in) in_types.push_back(b.graph().type(v));
    if (!device.claims(Op::attention, in_types, ops::infer_types(Op::attention, in_types, a), a)) return false;
    ValueId r = emit_in_place_of(b, n, Op::attention, in, a, ir::Path::native, map)[0];
    // Other readers still see [B, H, S, D]; a transpose for them (dead code when there are none).
    map[static_cast<size_t>(n.outputs[0])] = emit_native(b, Op::transpose, {r}, Attrs{{"perm", ir::Ints{0, 2, 1, 3}}});
    folded_out[static_cast<size_t>(n.outputs[0])] = r;
    return true;
  });
  return eliminate_dead_code(out);
}

}  // namespace rlx::passes
