#include "passes/fuse_glu.h"

#include "ops/builder.h"
#include "passes/rewrite.h"
#include "passes/stacked_weights.h"

namespace rlx::passes {

namespace {

struct Gated {
  int gate = -1, up = -1, silu = -1;  // the nodes the fused product replaces (besides the mul)
  int64_t rows = 0, row_bytes = 0;    // of each weight
};

const ir::Node* single_use_producer(const ir::Graph& g, const std::vector<int>& uses, ValueId v, Op op) {
  const ir::Node* p = g.producer(v);
  return p && p->op == op && uses[static_cast<size_t>(v)] == 1 ? p : nullptr;
}

}  // namespace

ir::Graph fuse_gated_matmuls(const ir::Graph& g, const KernelClaims& device) {
  std::vector<int> uses = g.use_counts();
  const int n_nodes = g.num_nodes();
  std::vector<Gated> plan(static_cast<size_t>(n_nodes));
  std::vector<bool> absorbed(static_cast<size_t>(n_nodes), false);
  bool any = false;
  for (int i = 0; i < n_nodes; ++i) {
    const ir::Node& n = g.node(i);
    if (n.op != Op::mul || n.inputs[0] == n.inputs[1]) continue;
    for (size_t k = 0; k < 2; ++k) {
      const ir::Node* s = single_use_producer(g, uses, n.inputs[k], Op::silu);
      if (!s) continue;
      const ir::Node* dg = single_use_producer(g, uses, s->inputs[0], Op::dequant_matmul);
      const ir::Node* du = single_use_producer(g, uses, n.inputs[1 - k], Op::dequant_matmul);
      if (!dg || !du || dg->inputs.size() != 2 || du->inputs.size() != 2 || dg->inputs[0] != du->inputs[0] || dg->attrs != du->attrs ||
          dg->attrs.has("glu"))
        continue;
      const ir::Node* wg = g.producer(dg->inputs[1]);
      const ir::Node* wu = g.producer(du->inputs[1]);
      if (!wg || !wu || wg->op != Op::constant || wu->op != Op::constant || g.type(dg->inputs[1]) != g.type(du->inputs[1])) continue;
      Type out = g.type(n.outputs[0]);
      if (g.type(s->outputs[0]) != out || g.type(dg->outputs[0]) != out || g.type(du->outputs[0]) != out) continue;
      const Shape& ws = g.type(dg->inputs[1]).shape;
      int64_t rows = dg->attrs.i("n");
      int64_t bytes = ws.size() == 2 ? ws[1].value() : ws[0].value() / rows;
      Attrs a = dg->attrs;
      a.set("glu", std::string("silu"));
      if (!device.claims(Op::dequant_matmul, {g.type(dg->inputs[0]), Type{DType::u8, {Dim(2 * rows), Dim(bytes)}}}, {out}, a)) continue;
      int gi = g.value(s->inputs[0]).node, ui = g.value(n.inputs[1 - k]).node, si = g.value(n.inputs[k]).node;
      plan[static_cast<size_t>(i)] = {gi, ui, si, rows, bytes};
      absorbed[static_cast<size_t>(gi)] = absorbed[static_cast<size_t>(ui)] = absorbed[static_cast<size_t>(si)] = true;
      any = true;
      break;
    }
  }
  if (!any) return g;

  return copy_rewriting(g, "fuse-glu", [&](ops::Builder& b, const ir::Node& n, int i, std::vector<ValueId>& map) {
    if (absorbed[static_cast<size_t>(i)]) return true;
    const Gated& p = plan[static_cast<size_t>(i)];
    if (p.gate < 0) return false;
    const ir::Node& dg = g.node(p.gate);
    const ir::Node& du = g.node(p.up);
    b.set_context(dg.name, dg.origin);
    Tensor both = stacked_rows({g.producer(dg.inputs[1])->attrs.tensor("value"), g.producer(du.inputs[1])->attrs.tensor("value")}, p.row_bytes);
    ValueId w = emit_native(b, Op::constant, {}, Attrs{{"value", both}});
    Attrs a = dg.attrs;
    a.set("glu", std::string("silu"));
    emit_in_place_of(b, n, Op::dequant_matmul, {map[static_cast<size_t>(dg.inputs[0])], w}, a, ir::Path::native, map, &dg);
    return true;
  });
}

}  // namespace rlx::passes
