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
  bool changed = false;
  ir::Graph out;
  out.name = g.name;
  out.device = g.device;
  std::vector<ValueId> map(g.num_values(), ir::kNoValue);
  std::vector<ValueId> folded_out(g.num_values(), ir::kNoValue);  // attention output in bshd
  for (ValueId v : g.inputs()) map[static_cast<size_t>(v)] = out.add_input(g.type(v), g.value(v).name);
  ops::Builder b(out);
  auto copy = [&](const ir::Node& n) { copy_node(b, n, map); };
  for (const auto& n : g.nodes()) {
    // a transpose undoing a folded attention's head order: use the bshd result directly
    if (is_head_transpose(&n) && folded_out[static_cast<size_t>(n.inputs[0])] != ir::kNoValue) {
      map[static_cast<size_t>(n.outputs[0])] = folded_out[static_cast<size_t>(n.inputs[0])];
      continue;
    }
    if (n.op != Op::attention || n.attrs.s("layout") != "bhsd" || n.path != ir::Path::native) {
      copy(n);
      continue;
    }
    const ir::Node* t[3] = {g.producer(n.inputs[0]), g.producer(n.inputs[1]), g.producer(n.inputs[2])};
    if (!is_head_transpose(t[0]) || !is_head_transpose(t[1]) || !is_head_transpose(t[2])) {
      copy(n);
      continue;
    }
    std::vector<ValueId> in = {map[static_cast<size_t>(t[0]->inputs[0])], map[static_cast<size_t>(t[1]->inputs[0])],
                               map[static_cast<size_t>(t[2]->inputs[0])]};
    if (n.inputs.size() > 3) in.push_back(map[static_cast<size_t>(n.inputs[3])]);
    Attrs a = n.attrs;
    a.set("layout", std::string("bshd"));
    std::vector<Type> in_types;
    for (ValueId v : in) in_types.push_back(out.type(v));
    std::vector<Type> out_types = ops::infer_types(Op::attention, in_types, a);
    if (!device.claims(Op::attention, in_types, out_types, a)) {
      copy(n);
      continue;
    }
    b.set_context(n.name, n.origin);
    ValueId r = b.emit1(Op::attention, in, a);
    out.node(out.num_nodes() - 1).path = ir::Path::native;
    // Other readers still see [B, H, S, D]; a transpose for them (dead code when there are none).
    ValueId back = b.transpose(r, {0, 2, 1, 3});
    out.node(out.num_nodes() - 1).path = ir::Path::native;
    map[static_cast<size_t>(n.outputs[0])] = back;
    folded_out[static_cast<size_t>(n.outputs[0])] = r;
    changed = true;
  }
  if (!changed) return g;
  std::vector<ValueId> outs;
  for (ValueId v : g.outputs()) outs.push_back(map[static_cast<size_t>(v)]);
  out.set_outputs(outs);
  out.donations = g.donations;
  after_pass(out, "fold-attention-transposes");
  return eliminate_dead_code(out);
}

}  // namespace rlx::passes
