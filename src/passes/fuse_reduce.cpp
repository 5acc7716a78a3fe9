#include "passes/fuse_reduce.h"

#include <algorithm>
#include <map>
#include <optional>

#include "ir/text.h"
#include "ops/builder.h"
#include "passes/fuse.h"
#include "passes/rewrite.h"

namespace rlx::passes {

namespace {

constexpr size_t kMaxOps = 24;    // ops in one prologue
constexpr size_t kMaxInputs = 8;  // values it reads

bool reducible(const ir::Node& n) {
  if (n.op != Op::reduce) return false;
  const std::string& k = n.attrs.s("kind");
  return k == "sum" || k == "max" || k == "min";
}

struct Prologue {
  std::vector<ValueId> inputs;  // source values, in the order of the body's inputs
  std::string body;
};

// The elementwise cone under the reduced value x: ops of x's own shape (inputs may broadcast),
// up to kMaxOps of them; what they read from elsewhere becomes the body's inputs.
std::optional<Prologue> build_prologue(const ir::Graph& g, ValueId x) {
  const Shape& shape = g.type(x).shape;
  auto absorbable = [&](ValueId v) {
    const ir::Node* p = g.producer(v);
    return p && ir::has_trait(p->op, ir::kElementwise) && p->outputs.size() == 1 && p->op != Op::constant && g.type(v).shape == shape;
  };
  if (!absorbable(x)) return std::nullopt;
  // the cone, producers before consumers (depth first from x)
  std::vector<int> order;
  std::vector<bool> seen(static_cast<size_t>(g.num_nodes()), false);
  std::vector<std::pair<int, size_t>> stack = {{g.value(x).node, 0}};
  seen[static_cast<size_t>(g.value(x).node)] = true;
  while (!stack.empty()) {
    auto& [node, next] = stack.back();
    const ir::Node& n = g.node(node);
    if (next < n.inputs.size()) {
      ValueId v = n.inputs[next++];
      int p = g.value(v).node;
      if (p >= 0 && !seen[static_cast<size_t>(p)] && absorbable(v) && order.size() + stack.size() < kMaxOps) {
        seen[static_cast<size_t>(p)] = true;
        stack.push_back({p, 0});
      }
      continue;
    }
    order.push_back(node);
    stack.pop_back();
  }
  FusedBody fb = fused_body(g, order, "prologue");
  if (fb.inputs.empty() || fb.inputs.size() > kMaxInputs) return std::nullopt;
  fb.graph.set_outputs({fb.value_of[x]});
  return Prologue{fb.inputs, ir::print_graph(fb.graph)};
}

}  // namespace

ir::Graph fuse_reduce_prologues(const ir::Graph& g, const KernelClaims& device) {
  std::map<int, std::pair<Prologue, Attrs>> plan;  // reduce node → its fused form
  for (int i = 0; i < g.num_nodes(); ++i) {
    const ir::Node& n = g.node(i);
    if (!reducible(n)) continue;
    std::optional<Prologue> p = build_prologue(g, n.inputs[0]);
    if (!p) continue;
    Attrs a{{"kind", n.attrs.s("kind")}, {"axes", n.attrs.ints("axes")}, {"keepdims", n.attrs.b("keepdims")}, {"prologue", p->body}};
    std::vector<Type> in;
    for (ValueId v : p->inputs) in.push_back(g.type(v));
    if (!device.claims(Op::fused_reduce, in, {g.type(n.outputs[0])}, a)) continue;
    plan.emplace(i, std::make_pair(std::move(*p), std::move(a)));
  }
  if (plan.empty()) return g;
  // (the ops absorbed become dead code where nothing else reads them; removed after this pass)
  return copy_rewriting(g, "fuse-reduce", [&](ops::Builder& b, const ir::Node& n, int i, std::vector<ValueId>& map) {
    auto it = plan.find(i);
    if (it == plan.end()) return false;
    emit_in_place_of(b, n, Op::fused_reduce, mapped(it->second.first.inputs, map), it->second.second, ir::Path::native, map);
    return true;
  });
}

}  // namespace rlx::passes
