#include <unordered_map>

#include "passes/rewrite.h"
#include "passes/simplify.h"

namespace rlx::passes {

namespace {
struct Key {
  Op op;
  std::vector<ValueId> inputs;
  Attrs attrs;
  bool operator==(const Key& o) const { return op == o.op && inputs == o.inputs && attrs == o.attrs; }
};
struct KeyHash {
  size_t operator()(const Key& k) const {
    size_t h = static_cast<size_t>(k.op) * 1000003u;
    for (ValueId v : k.inputs) h = h * 31 + static_cast<size_t>(v);
    return h ^ k.attrs.hash();
  }
};
}  // namespace

ir::Graph eliminate_common_subexpressions(const ir::Graph& g) {
  std::unordered_map<Key, std::vector<ValueId>, KeyHash> seen;
  Rule cse{"cse", [&](RewriteBuilder& b, Op op, const std::vector<ValueId>& in, const Attrs& attrs) -> std::optional<std::vector<ValueId>> {
    // Each collective is a meeting with the other ranks: two are two, even of one value.
    if (ir::has_trait(op, ir::kCollective)) return b.emit_plain(op, in, attrs, b.inherited_path());
    Key probe{op, in, attrs};
    if (ir::has_trait(op, ir::kCommutative) && in.size() == 2 && in[0] > in[1]) probe.inputs = {in[1], in[0]};
    auto it = seen.find(probe);
    if (it != seen.end()) return it->second;
    auto outs = b.emit_plain(op, in, attrs, b.inherited_path());
    seen.emplace(std::move(probe), outs);
    return outs;
  }};
  return rewrite(g, {cse}, "cse");
}

ir::Graph eliminate_dead_code(const ir::Graph& g) {
  std::vector<bool> live_value(g.num_values(), false), keep(static_cast<size_t>(g.num_nodes()), false);
  for (ValueId v : g.outputs()) live_value[static_cast<size_t>(v)] = true;
  for (int i = g.num_nodes() - 1; i >= 0; --i) {
    const ir::Node& n = g.node(i);
    bool live = false;
    for (ValueId v : n.outputs) live = live || live_value[static_cast<size_t>(v)];
    if (!live) continue;
    keep[static_cast<size_t>(i)] = true;
    for (ValueId v : n.inputs) live_value[static_cast<size_t>(v)] = true;
  }
  RewriteOptions opts;
  opts.keep = keep;
  return rewrite(g, {}, "dce", opts);
}

}  // namespace rlx::passes
