#include "passes/fuse.h"

#include <algorithm>
#include <map>

#include "ir/text.h"
#include "ops/builder.h"
#include "ops/rules.h"
#include "passes/rewrite.h"
#include "util/strings.h"

namespace rlx::passes {

namespace {

bool fusible(const ir::Node& n) {
  return ir::has_trait(n.op, ir::kElementwise) && n.outputs.size() == 1 && n.op != Op::elementwise_region;
}

struct Region {
  Shape shape;
  std::vector<int> members;  // node indices, in order
  bool closed = false;       // a node outside consumed a member's value: no more members
};

// Does `small` broadcast to `big` (every dim equal or 1, aligned at the right)?
bool broadcasts_to(const Shape& small, const Shape& big) {
  if (small.size() > big.size()) return false;
  for (size_t k = 1; k <= small.size(); ++k) {
    const Dim& d = small[small.size() - k];
    if (!(d == Dim(1)) && !(d == big[big.size() - k])) return false;
  }
  return true;
}

// A region whose values only one other region reads, over a shape that broadcasts to that
// region's (a norm's sqrt and max over [B, 1] before the division over [B, H]), joins it: its
// ops are computed for every element of the larger region — a few redundant scalar ops instead
// of a kernel, and a launch, in the chain.
void sink_small_regions(const ir::Graph& g, std::vector<Region>& regions, std::vector<int>& region_of) {
  std::vector<bool> is_output(g.num_values(), false);
  for (ValueId v : g.outputs()) is_output[static_cast<size_t>(v)] = true;
  std::vector<std::vector<int>> users(g.num_values());
  for (int i = 0; i < g.num_nodes(); ++i)
    for (ValueId v : g.node(i).inputs) users[static_cast<size_t>(v)].push_back(i);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t r = 0; r < regions.size(); ++r) {
      Region& reg = regions[r];
      if (reg.members.empty()) continue;
      int into = -1;
      bool ok = true;
      for (int m : reg.members) {
        ValueId v = g.node(m).outputs[0];
        if (is_output[static_cast<size_t>(v)]) ok = false;
        for (int u : users[static_cast<size_t>(v)]) {
          int t = region_of[static_cast<size_t>(u)];
          if (t == static_cast<int>(r)) continue;
          if (t < 0 || (into >= 0 && t != into)) ok = false;
          else into = t;
        }
      }
      if (!ok || into < 0 || regions[static_cast<size_t>(into)].shape == reg.shape || !broadcasts_to(reg.shape, regions[static_cast<size_t>(into)].shape))
        continue;
      Region& big = regions[static_cast<size_t>(into)];
      for (int m : reg.members) region_of[static_cast<size_t>(m)] = into;
      big.members.insert(big.members.end(), reg.members.begin(), reg.members.end());
      std::sort(big.members.begin(), big.members.end());
      reg.members.clear();
      changed = true;
    }
  }
}

}  // namespace

FusedBody fused_body(const ir::Graph& g, const std::vector<int>& members, const std::string& name) {
  FusedBody out;
  out.graph.name = name;
  ops::Builder b(out.graph);
  auto arg = [&](ValueId v) -> ValueId {
    if (auto it = out.value_of.find(v); it != out.value_of.end()) return it->second;
    const ir::Node* p = g.producer(v);
    ValueId m;
    if (p && p->op == Op::constant && g.type(v).shape.empty()) {
      m = b.constant(p->attrs.tensor("value"));
    } else {
      m = out.graph.add_input(g.type(v));
      out.inputs.push_back(v);
    }
    out.value_of[v] = m;
    return m;
  };
  for (int i : members) {
    const ir::Node& n = g.node(i);
    std::vector<ValueId> in;
    for (ValueId v : n.inputs) in.push_back(arg(v));
    out.value_of[n.outputs[0]] = b.emit1(n.op, in, n.attrs);
  }
  return out;
}

ir::Graph fuse_elementwise(const ir::Graph& g, const KernelClaims& device) {
  int n = g.num_nodes();
  std::vector<int> region_of(static_cast<size_t>(n), -1);
  std::vector<Region> regions;
  for (int i = 0; i < n; ++i) {
    const ir::Node& node = g.node(i);
    // A consumer outside a region closes it: the region must be complete before that node.
    auto close_producers = [&](int except) {
      for (ValueId v : node.inputs) {
        int p = g.value(v).node;
        if (p >= 0 && region_of[static_cast<size_t>(p)] >= 0 && region_of[static_cast<size_t>(p)] != except)
          regions[static_cast<size_t>(region_of[static_cast<size_t>(p)])].closed = true;
      }
    };
    if (!fusible(node)) {
      close_producers(-1);
      continue;
    }
    const Shape& shape = g.type(node.outputs[0]).shape;
    int target = -1;
    for (ValueId v : node.inputs) {
      int p = g.value(v).node;
      if (p < 0) continue;
      int r = region_of[static_cast<size_t>(p)];
      if (r >= 0 && !regions[static_cast<size_t>(r)].closed && regions[static_cast<size_t>(r)].shape == shape) {
        target = r;
        break;
      }
    }
    close_producers(target);
    if (target < 0) {
      target = static_cast<int>(regions.size());
      regions.push_back({shape, {}, false});
    }
    regions[static_cast<size_t>(target)].members.push_back(i);
    region_of[static_cast<size_t>(i)] = target;
  }
  for (ValueId v : g.outputs())
    if (g.value(v).node >= 0 && region_of[static_cast<size_t>(g.value(v).node)] >= 0)
      regions[static_cast<size_t>(region_of[static_cast<size_t>(g.value(v).node)])].closed = true;
  sink_small_regions(g, regions, region_of);

  // Body of each region with ≥ 2 members; a region the device does not claim stays unfused.
  std::vector<int> uses = g.use_counts();
  struct Built {
    std::string body;
    std::vector<ValueId> inputs, outputs;
    int last = -1;
  };
  std::map<int, Built> built;
  for (size_t r = 0; r < regions.size(); ++r) {
    Region& reg = regions[r];
   // A region the device cannot run (say, it ends in a cast the kernel lacks) shrinks from the
   // end until the device claims it; the dropped members run as ordinary nodes after it.
   auto attempt = [&]() -> bool {
   for (;;) {
    if (reg.members.size() < 2) return false;
    FusedBody fb = fused_body(g, reg.members, "region");
    ir::Graph& body = fb.graph;
    std::map<ValueId, ValueId>& map = fb.value_of;
    Built out;
    out.inputs = fb.inputs;
    // Outputs: member values read outside the region (or by the graph).
    std::vector<bool> member(static_cast<size_t>(n), false);
    for (int i : reg.members) member[static_cast<size_t>(i)] = true;
    std::vector<int> inside_uses(g.num_values(), 0);
    for (int i : reg.members)
      for (ValueId v : g.node(i).inputs) ++inside_uses[static_cast<size_t>(v)];
    std::vector<ValueId> body_outs;
    for (int i : reg.members) {
      ValueId v = g.node(i).outputs[0];
      if (uses[static_cast<size_t>(v)] > inside_uses[static_cast<size_t>(v)]) {
        out.outputs.push_back(v);
        body_outs.push_back(map[v]);
      }
    }
    if (out.inputs.empty() || out.outputs.empty()) return false;
    // every output spans the region's shape (a sunk smaller region's value read outside
    // after a shrink would not): else shrink further
    bool whole = true;
    for (ValueId v : out.outputs) whole = whole && g.type(v).shape == reg.shape;
    body.set_outputs(body_outs);
    out.body = ir::print_graph(body);
    std::vector<Type> in_types, out_types;
    for (ValueId v : out.inputs) in_types.push_back(g.type(v));
    for (ValueId v : out.outputs) out_types.push_back(g.type(v));
    if (whole && device.claims(Op::elementwise_region, in_types, out_types, Attrs{{"body", out.body}})) {
      out.last = reg.members.back();
      built[static_cast<int>(r)] = std::move(out);
      return true;
    }
    region_of[static_cast<size_t>(reg.members.back())] = -1;
    reg.members.pop_back();
   }
   };
   const std::vector<int> original = reg.members;
   // One that starts with a cast the device's regions cannot read (i32 sums of an int8 product
   // into f32 math) tries again without it: the cast runs alone before the rest.
   if (!attempt() && original.size() >= 3 && g.node(original.front()).op == Op::cast) {
     reg.members.assign(original.begin() + 1, original.end());
     for (int m : reg.members) region_of[static_cast<size_t>(m)] = static_cast<int>(r);
     region_of[static_cast<size_t>(original.front())] = -1;
     attempt();
   }
  }

  // Rebuild: members vanish, each region appears where its last member was.
  for (size_t r = 0; r < regions.size(); ++r)
    if (!built.count(static_cast<int>(r)))
      for (int i : regions[r].members) region_of[static_cast<size_t>(i)] = -1;
  return copy_rewriting(g, "fuse-elementwise", [&](ops::Builder& b, const ir::Node&, int i, std::vector<ValueId>& map) {
    int r = region_of[static_cast<size_t>(i)];
    auto it = r >= 0 ? built.find(r) : built.end();
    if (it == built.end()) return false;  // copied as it is
    if (it->second.last != i) return true;  // a member: the region stands where its last member was
    b.set_context("fused", "");
    auto outs = b.emit(Op::elementwise_region, mapped(it->second.inputs, map), Attrs{{"body", it->second.body}});
    b.graph().node(b.graph().num_nodes() - 1).path = ir::Path::native;
    for (size_t k = 0; k < outs.size(); ++k) map[static_cast<size_t>(it->second.outputs[k])] = outs[k];
    return true;
  });
}

}  // namespace rlx::passes
