#include "passes/fuse_norm_rope.h"

#include "ops/builder.h"
#include "passes/rewrite.h"

namespace rlx::passes {

namespace {

// A reshape or transpose that leaves the last axis (its extent and its place) alone.
bool keeps_last_axis(const ir::Graph& g, const ir::Node& n) {
  const Shape& in = g.type(n.inputs[0]).shape;
  const Shape& out = g.type(n.outputs[0]).shape;
  if (in.empty() || out.empty() || in.back() != out.back()) return false;
  if (n.op == Op::reshape) return true;
  if (n.op == Op::transpose) return n.attrs.ints("perm").back() == static_cast<int64_t>(in.size()) - 1;
  return false;
}

struct Plan {
  int norm = -1;           // the rms_norm node
  std::vector<int> views;  // the views from its output to the rope's input, in order
};

}  // namespace

ir::Graph fuse_norm_rope(const ir::Graph& g, const KernelClaims& device) {
  std::vector<int> uses = g.use_counts();
  const int n_nodes = g.num_nodes();
  std::vector<Plan> plan(static_cast<size_t>(n_nodes));
  std::vector<bool> absorbed(static_cast<size_t>(n_nodes), false);
  bool any = false;
  for (int i = 0; i < n_nodes; ++i) {
    const ir::Node& n = g.node(i);
    if (n.op != Op::rope || n.inputs.size() != 2) continue;
    Plan p;
    ValueId v = n.inputs[0];
    const ir::Node* d = g.producer(v);
    while (d && uses[static_cast<size_t>(v)] == 1 && (d->op == Op::reshape || d->op == Op::transpose) && keeps_last_axis(g, *d)) {
      p.views.insert(p.views.begin(), g.value(v).node);
      v = d->inputs[0];
      d = g.producer(v);
    }
    if (!d || d->op != Op::rms_norm || d->inputs.size() != 2 || d->attrs.has("out") || uses[static_cast<size_t>(v)] != 1) continue;
    const Type& x = g.type(d->inputs[0]);
    int64_t axis = d->attrs.i("axis"), rank = static_cast<int64_t>(x.shape.size());
    if (axis != -1 && axis != rank - 1) continue;  // a norm over the last axis only
    Attrs a = n.attrs;
    a.set("norm_eps", d->attrs.f("eps"));
    if (!device.claims(Op::rope, {g.type(n.inputs[0]), g.type(n.inputs[1]), g.type(d->inputs[1])}, {g.type(n.outputs[0])}, a)) continue;
    p.norm = g.value(v).node;
    absorbed[static_cast<size_t>(p.norm)] = true;
    for (int k : p.views) absorbed[static_cast<size_t>(k)] = true;
    plan[static_cast<size_t>(i)] = std::move(p);
    any = true;
  }
  if (!any) return g;

  return copy_rewriting(g, "fuse-norm-rope", [&](ops::Builder& b, const ir::Node& n, int i, std::vector<ValueId>& map) {
    if (absorbed[static_cast<size_t>(i)]) return true;
    const Plan& p = plan[static_cast<size_t>(i)];
    if (p.norm < 0) return false;
    const ir::Node& norm = g.node(p.norm);
    ValueId x = map[static_cast<size_t>(norm.inputs[0])];
    for (int k : p.views) {  // the same views, before the norm
      const ir::Node& view = g.node(k);
      x = emit_in_place_of(b, view, view.op, {x}, view.attrs, view.path, map)[0];
    }
    Attrs attrs = n.attrs;
    attrs.set("norm_eps", norm.attrs.f("eps"));
    emit_in_place_of(b, n, n.op, {x, map[static_cast<size_t>(n.inputs[1])], map[static_cast<size_t>(norm.inputs[1])]}, attrs, ir::Path::native, map);
    return true;
  });
}

}  // namespace rlx::passes
