#include "passes/fuse_norm_cast.h"

#include "ops/builder.h"
#include "passes/rewrite.h"

namespace rlx::passes {

ir::Graph fuse_norm_cast(const ir::Graph& g, const KernelClaims& device) {
  const int n_nodes = g.num_nodes();
  std::vector<int> norm_of(static_cast<size_t>(n_nodes), -1);  // cast → the norm it becomes a copy of
  bool any = false;
  for (int i = 0; i < n_nodes; ++i) {
    const ir::Node& c = g.node(i);
    if (c.op != Op::cast) continue;
    const ir::Node* n = g.producer(c.inputs[0]);
    if (!n || (n->op != Op::layer_norm && n->op != Op::rms_norm) || n->attrs.has("out")) continue;
    DType to = c.attrs.dtype("to");
    if (!is_float(to) || to == g.type(c.inputs[0]).dtype) continue;
    Attrs a = n->attrs;
    a.set("out", to);
    std::vector<Type> in;
    for (ValueId v : n->inputs) in.push_back(g.type(v));
    if (!device.claims(n->op, in, {g.type(c.outputs[0])}, a)) continue;
    norm_of[static_cast<size_t>(i)] = g.value(c.inputs[0]).node;
    any = true;
  }
  if (!any) return g;

  std::vector<ValueId> map;
  ir::Graph out = begin_copy(g, map);
  ops::Builder b(out);
  for (int i = 0; i < n_nodes; ++i) {
    const ir::Node& c = g.node(i);
    int k = norm_of[static_cast<size_t>(i)];
    if (k < 0) {
      copy_node(b, c, map);
      continue;
    }
    const ir::Node& n = g.node(k);
    Attrs a = n.attrs;
    a.set("out", c.attrs.dtype("to"));
    // the original norm stays for its other readers (dead code otherwise, removed later)
    emit_in_place_of(b, c, n.op, mapped(n.inputs, map), a, ir::Path::native, map, &n);
  }
  finish_copy(g, map, out, "fuse-norm-cast");
  return out;
}

}  // namespace rlx::passes
