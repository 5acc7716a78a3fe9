#include "passes/fuse_norm_matmul.h"

#include "ops/builder.h"
#include "passes/rewrite.h"

namespace rlx::passes {

ir::Graph fuse_norm_into_matmuls(const ir::Graph& g, const KernelClaims& device) {
  const int n_nodes = g.num_nodes();
  // readers of every value, to see that a norm feeds matmuls only
  std::vector<std::vector<int>> readers(g.num_values());
  for (int i = 0; i < n_nodes; ++i)
    for (ValueId v : g.node(i).inputs) readers[static_cast<size_t>(v)].push_back(i);
  for (ValueId v : g.outputs()) readers[static_cast<size_t>(v)].push_back(-1);
  std::vector<int> norm_of(static_cast<size_t>(n_nodes), -1);  // matmul → the norm it absorbs
  std::vector<bool> dropped(static_cast<size_t>(n_nodes), false);
  bool any = false;
  for (int i = 0; i < n_nodes; ++i) {
    const ir::Node& n = g.node(i);
    if (n.op != Op::rms_norm || n.inputs.size() != 2 || n.attrs.has("out")) continue;
    int64_t axis = n.attrs.i("axis"), rank = static_cast<int64_t>(g.type(n.inputs[0]).shape.size());
    if (axis != -1 && axis != rank - 1) continue;
    const std::vector<int>& rd = readers[static_cast<size_t>(n.outputs[0])];
    bool ok = !rd.empty();
    for (int r : rd) {
      const ir::Node* m = r >= 0 ? &g.node(r) : nullptr;
      if (!m || m->op != Op::dequant_matmul || m->inputs.size() != 2 || m->inputs[0] != n.outputs[0] || m->attrs.has("norm_eps")) {
        ok = false;
        break;
      }
      Attrs a = m->attrs;
      a.set("norm_eps", n.attrs.f("eps"));
      ok = ok && device.claims(Op::dequant_matmul, {g.type(n.inputs[0]), g.type(m->inputs[1]), g.type(n.inputs[1])}, {g.type(m->outputs[0])}, a);
    }
    if (!ok) continue;
    for (int r : rd) norm_of[static_cast<size_t>(r)] = i;
    dropped[static_cast<size_t>(i)] = true;
    any = true;
  }
  if (!any) return g;

  return copy_rewriting(g, "fuse-norm-matmul", [&](ops::Builder& b, const ir::Node& n, int i, std::vector<ValueId>& map) {
    if (dropped[static_cast<size_t>(i)]) return true;
    int k = norm_of[static_cast<size_t>(i)];
    if (k < 0) return false;
    const ir::Node& norm = g.node(k);
    Attrs attrs = n.attrs;
    attrs.set("norm_eps", norm.attrs.f("eps"));
    emit_in_place_of(b, n, n.op, mapped({norm.inputs[0], n.inputs[1], norm.inputs[1]}, map), attrs, ir::Path::native, map);
    return true;
  });
}

}  // namespace rlx::passes
