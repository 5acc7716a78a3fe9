#include "passes/fuse_cast.h"

#include "ops/builder.h"
#include "passes/rewrite.h"

namespace rlx::passes {

namespace {

bool is_norm(Op op) { return op == Op::layer_norm || op == Op::rms_norm; }

// Does the device claim node n storing `to`?
bool claims_stored_as(const ir::Graph& g, const ir::Node& n, DType to, const KernelClaims& device) {
  Attrs a = n.attrs;
  a.set("out", to);
  std::vector<Type> in;
  for (ValueId v : n.inputs) in.push_back(g.type(v));
  Type out = g.type(n.outputs[0]);
  out.dtype = to;
  return device.claims(n.op, in, {out}, a);
}

}  // namespace

ir::Graph fuse_cast_into_producer(const ir::Graph& g, const KernelClaims& device) {
  std::vector<int> uses = g.use_counts();
  const int n_nodes = g.num_nodes();
  // cast → the norm it becomes a copy of; attention → the type it stores (and its reshapes and
  // cast follow it)
  std::vector<int> norm_of(static_cast<size_t>(n_nodes), -1);
  std::vector<DType> store(static_cast<size_t>(n_nodes), DType::f32);
  std::vector<bool> retyped(static_cast<size_t>(n_nodes), false), dropped(static_cast<size_t>(n_nodes), false);
  bool any = false;
  for (int i = 0; i < n_nodes; ++i) {
    const ir::Node& c = g.node(i);
    if (c.op != Op::cast) continue;
    DType to = c.attrs.dtype("to");
    if (!is_float(to) || to == g.type(c.inputs[0]).dtype) continue;
    // walk up through reshapes read only on this path
    std::vector<int> chain;
    ValueId v = c.inputs[0];
    const ir::Node* p = g.producer(v);
    while (p && p->op == Op::reshape && uses[static_cast<size_t>(v)] == 1) {
      chain.push_back(g.value(v).node);
      v = p->inputs[0];
      p = g.producer(v);
    }
    if (!p || p->attrs.has("out")) continue;
    int pi = g.value(v).node;
    if (is_norm(p->op) && chain.empty()) {
      if (!claims_stored_as(g, *p, to, device)) continue;
      norm_of[static_cast<size_t>(i)] = pi;
    } else if (p->op == Op::attention && uses[static_cast<size_t>(v)] == 1 && store[static_cast<size_t>(pi)] == DType::f32 &&
               !retyped[static_cast<size_t>(pi)]) {
      if (!claims_stored_as(g, *p, to, device)) continue;
      store[static_cast<size_t>(pi)] = to;
      retyped[static_cast<size_t>(pi)] = true;
      for (int r : chain) retyped[static_cast<size_t>(r)] = true;
      dropped[static_cast<size_t>(i)] = true;  // the cast: its value is the last reshape's now
    } else {
      continue;
    }
    any = true;
  }
  if (!any) return g;

  // (a retyped reshape is copied: it infers the new type from its input)
  return copy_rewriting(g, "fuse-cast", [&](ops::Builder& b, const ir::Node& n, int i, std::vector<ValueId>& map) {
    if (dropped[static_cast<size_t>(i)]) {
      map[static_cast<size_t>(n.outputs[0])] = map[static_cast<size_t>(n.inputs[0])];
      return true;
    }
    if (int k = norm_of[static_cast<size_t>(i)]; k >= 0) {
      const ir::Node& norm = g.node(k);
      Attrs a = norm.attrs;
      a.set("out", n.attrs.dtype("to"));
      // the original norm stays for its other readers (dead code otherwise, removed later)
      emit_in_place_of(b, n, norm.op, mapped(norm.inputs, map), a, ir::Path::native, map, &norm);
      return true;
    }
    if (!retyped[static_cast<size_t>(i)] || n.op != Op::attention) return false;
    Attrs a = n.attrs;
    a.set("out", store[static_cast<size_t>(i)]);
    emit_in_place_of(b, n, n.op, mapped(n.inputs, map), a, n.path, map);
    return true;
  });
}

}  // namespace rlx::passes
