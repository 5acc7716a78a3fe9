#include "passes/fuse_rope_append.h"

#include "ops/builder.h"
#include "passes/rewrite.h"

namespace rlx::passes {

ir::Graph fuse_rope_append(const ir::Graph& g, const KernelClaims& device) {
  std::vector<int> uses = g.use_counts();
  const int n_nodes = g.num_nodes();
  std::vector<int> rope_of(static_cast<size_t>(n_nodes), -1);  // scatter → the rope it absorbs
  std::vector<bool> absorbed(static_cast<size_t>(n_nodes), false);
  bool any = false;
  for (int i = 0; i < n_nodes; ++i) {
    const ir::Node& s = g.node(i);
    if (s.op != Op::scatter || s.attrs.s("reduce") != "none") continue;
    const ir::Node* r = g.producer(s.inputs[2]);
    if (!r || r->op != Op::rope || r->attrs.has("append_axis") || uses[static_cast<size_t>(s.inputs[2])] != 1) continue;
    if (r->inputs[1] != s.inputs[1]) continue;  // the rows go where their own positions say
    const Type& c = g.type(s.inputs[0]);
    int64_t rank = static_cast<int64_t>(c.shape.size()), axis = s.attrs.i("axis");
    if (axis < 0) axis += rank;
    if (rank < 2 || axis != rank - 2 || g.type(s.inputs[1]).shape.size() != 1) continue;
    Attrs a = r->attrs;
    a.set("append_axis", axis);
    std::vector<Type> in;
    for (ValueId v : r->inputs) in.push_back(g.type(v));
    in.push_back(c);
    if (!device.claims(Op::rope, in, {g.type(s.outputs[0])}, a)) continue;
    rope_of[static_cast<size_t>(i)] = g.value(s.inputs[2]).node;
    absorbed[static_cast<size_t>(g.value(s.inputs[2]).node)] = true;
    any = true;
  }
  if (!any) return g;

  return copy_rewriting(g, "fuse-rope-append", [&](ops::Builder& b, const ir::Node& n, int i, std::vector<ValueId>& map) {
    if (absorbed[static_cast<size_t>(i)]) return true;
    int k = rope_of[static_cast<size_t>(i)];
    if (k < 0) return false;
    const ir::Node& r = g.node(k);
    std::vector<ValueId> in = r.inputs;
    in.push_back(n.inputs[0]);
    int64_t axis = n.attrs.i("axis");
    if (axis < 0) axis += static_cast<int64_t>(g.type(n.inputs[0]).shape.size());
    Attrs a = r.attrs;
    a.set("append_axis", axis);
    emit_in_place_of(b, n, Op::rope, mapped(in, map), a, ir::Path::native, map, &r);
    return true;
  });
}

}  // namespace rlx::passes
