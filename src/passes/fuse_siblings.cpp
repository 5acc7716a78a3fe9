#include "passes/fuse_siblings.h"

#include <algorithm>

#include "ops/builder.h"
#include "passes/memory_plan.h"
#include "passes/rewrite.h"
#include "passes/stacked_weights.h"

namespace rlx::passes {

namespace {

// The bytes of one packed row of a dequant_matmul's weight, or 0 when its layout is not rows.
int64_t row_bytes(const ir::Graph& g, const ir::Node& m) {
  const Shape& ws = g.type(m.inputs[1]).shape;
  int64_t n = m.attrs.i("n");
  if (ws.size() == 2 && ws[0].is_static() && ws[1].is_static() && ws[0].value() == n) return ws[1].value();
  if (ws.size() == 1 && ws[0].is_static() && n > 0 && ws[0].value() % n == 0) return ws[0].value() / n;
  return 0;
}

// A product this pass may join: two inputs (no residual, no norm), not gated, a constant weight
// laid out in rows, and one row per batch element: [B, 1, …, 1, n] with B static 1 or symbolic
// (a decode step's batch, which a runner sets to 1; a larger one gets strided slices, still right).
bool joinable(const ir::Graph& g, const ir::Node& m) {
  if (m.op != Op::dequant_matmul || m.inputs.size() != 2 || m.attrs.has("glu")) return false;
  const ir::Node* w = g.producer(m.inputs[1]);
  if (!w || w->op != Op::constant || row_bytes(g, m) == 0) return false;
  const Shape& out = g.type(m.outputs[0]).shape;
  for (size_t d = 0; d + 1 < out.size(); ++d)
    if (out[d].is_static() ? out[d].value() != 1 : d != 0) return false;
  return true;
}

}  // namespace

ir::Graph fuse_sibling_matmuls(const ir::Graph& g, const KernelClaims& device) {
  const int n_nodes = g.num_nodes();
  // products of one x, weight dtype, row size and attributes (but n), in node order
  struct Group {
    ValueId x;
    DType wt;
    int64_t row_bytes;
    Attrs attrs;
    std::vector<int> members;
  };
  std::vector<Group> groups;
  for (int i = 0; i < n_nodes; ++i) {
    const ir::Node& m = g.node(i);
    if (!joinable(g, m)) continue;
    Attrs a = m.attrs;
    a.set("n", int64_t{0});
    Group key{m.inputs[0], g.type(m.inputs[1]).dtype, row_bytes(g, m), a, {}};
    auto it = std::find_if(groups.begin(), groups.end(), [&](const Group& o) {
      return o.x == key.x && o.wt == key.wt && o.row_bytes == key.row_bytes && o.attrs == key.attrs;
    });
    if (it == groups.end()) it = groups.insert(groups.end(), std::move(key));
    it->members.push_back(i);
  }
  std::vector<std::vector<int>> joined_at(static_cast<size_t>(n_nodes));  // first product → all of its group
  std::vector<bool> absorbed(static_cast<size_t>(n_nodes), false);
  bool any = false;
  for (const Group& grp : groups) {
    const std::vector<int>& members = grp.members;
    if (members.size() < 2) continue;
    const ir::Node& first = g.node(members[0]);
    // each part must start on an arena alignment boundary for its slice to be a view
    int64_t total = 0, elem = static_cast<int64_t>(dtype_bytes(g.type(first.outputs[0]).dtype, 1));
    bool aligned = true;
    for (int i : members) {
      aligned = aligned && total * elem % kArenaAlignment == 0;
      total += g.node(i).attrs.i("n");
    }
    if (!aligned) continue;
    Attrs a = first.attrs;
    a.set("n", total);
    Type out = g.type(first.outputs[0]);
    out.shape.back() = Dim(total);
    int64_t rb = grp.row_bytes;
    if (!device.claims(Op::dequant_matmul, {g.type(first.inputs[0]), Type{DType::u8, {Dim(total), Dim(rb)}}}, {out}, a)) continue;
    joined_at[static_cast<size_t>(members[0])] = members;
    for (size_t k = 1; k < members.size(); ++k) absorbed[static_cast<size_t>(members[k])] = true;
    any = true;
  }
  if (!any) return g;

  return copy_rewriting(g, "fuse-siblings", [&](ops::Builder& b, const ir::Node& n, int i, std::vector<ValueId>& map) {
    if (absorbed[static_cast<size_t>(i)]) return true;
    const std::vector<int>& members = joined_at[static_cast<size_t>(i)];
    if (members.empty()) return false;
    std::vector<Tensor> parts;
    int64_t total = 0;
    for (int k : members) {
      parts.push_back(g.producer(g.node(k).inputs[1])->attrs.tensor("value"));
      total += g.node(k).attrs.i("n");
    }
    b.set_context(n.name, n.origin);
    ValueId w = emit_native(b, Op::constant, {}, Attrs{{"value", stacked_rows(parts, row_bytes(g, n))}});
    Attrs a = n.attrs;
    a.set("n", total);
    ValueId all = emit_native(b, Op::dequant_matmul, {map[static_cast<size_t>(n.inputs[0])], w}, a);
    const Shape shape = b.shape(all);
    int64_t at = 0;
    for (int k : members) {  // each product's rows, a slice (a view: they start aligned)
      const ir::Node& m = g.node(k);
      int64_t rows = m.attrs.i("n");
      Shape start(shape.size(), Dim(0)), limit = shape;
      start.back() = Dim(at);
      limit.back() = Dim(at + rows);
      b.set_context(m.name, m.origin);
      map[static_cast<size_t>(m.outputs[0])] =
          emit_native(b, Op::slice, {all}, Attrs{{"start", start}, {"limit", limit}, {"stride", std::vector<int64_t>(shape.size(), 1)}});
      at += rows;
    }
    return true;
  });
}

}  // namespace rlx::passes
