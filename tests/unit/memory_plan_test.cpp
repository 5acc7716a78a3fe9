// The memory planner on random graphs: no two buffers that are live at the same time overlap,
// and running with the plan gives the same results as running without reuse.
#include <gtest/gtest.h>

#include <random>

#include "ops/builder.h"
#include "passes/memory_plan.h"
#include "rlx/graph.h"
#include "rlx/session.h"

using namespace rlx;

using ir::Node;
using ir::Op;
using ir::Placement;
using ir::ValueId;

namespace {

// A random DAG of elementwise ops, reshapes, reductions and matmuls over a few shapes.
ir::Graph random_graph(std::mt19937& rng, int nodes) {
  ir::Graph g;
  ops::Builder b(g);
  std::vector<ValueId> pool = {g.add_input({DType::f32, {Dim(6), Dim(8)}}, "x"), g.add_input({DType::f32, {Dim(6), Dim(8)}}, "y")};
  auto pick = [&] { return pool[rng() % pool.size()]; };
  auto same_shape = [&](ValueId v) {
    std::vector<ValueId> c;
    for (ValueId p : pool)
      if (b.shape(p) == b.shape(v)) c.push_back(p);
    return c[rng() % c.size()];
  };
  for (int i = 0; i < nodes; ++i) {
    ValueId a = pick();
    switch (rng() % 6) {
      case 0: pool.push_back(b.unary(Op::tanh, a)); break;
      case 1: pool.push_back(b.add(a, same_shape(a))); break;
      case 2: pool.push_back(b.mul(a, b.scalar(DType::f32, 0.5))); break;
      case 3: {
        Shape s = b.shape(a);
        pool.push_back(b.reshape(a, {shape_numel(s)}));
        break;
      }
      case 4:
        if (b.rank(a) == 2) pool.push_back(b.reduce(a, "sum", {1}, true));
        break;
      case 5:
        if (b.shape(a) == Shape{Dim(6), Dim(8)}) pool.push_back(b.dot_general(a, a, {{}, {}}, {{1}, {1}}));
        break;
    }
  }
  std::vector<ValueId> outs = {pool.back(), pool[pool.size() / 2]};
  g.set_outputs(outs);
  return g;
}

}  // namespace

TEST(MemoryPlan, LiveBuffersNeverOverlap) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    ir::Graph g = random_graph(rng, 5 + static_cast<int>(rng() % 40));
    ir::Graph lir = passes::plan_memory(g);
    ASSERT_TRUE(lir.is_lir);
    // live range of each arena root: [definition, last use]; outputs live to the end
    int n = lir.num_nodes();
    std::vector<int> first(lir.num_values(), -1), last(lir.num_values(), -1);
    for (int i = 0; i < n; ++i) {
      for (ValueId v : lir.node(i).outputs) {
        ValueId r = passes::placement_root(lir, v);
        if (first[r] < 0) first[r] = i;
        last[r] = std::max(last[r], i);
      }
      for (ValueId v : lir.node(i).inputs) {
        ValueId r = passes::placement_root(lir, v);
        last[r] = std::max(last[r], i);
      }
    }
    for (ValueId v : lir.outputs()) last[passes::placement_root(lir, v)] = n;
    for (size_t a = 0; a < lir.num_values(); ++a) {
      const Placement& pa = lir.placement[a];
      if (pa.kind != Placement::Kind::arena || first[a] < 0) continue;
      EXPECT_LE(pa.offset + pa.bytes, lir.arena_bytes);
      EXPECT_EQ(pa.offset % passes::kArenaAlignment, 0);
      for (size_t b = a + 1; b < lir.num_values(); ++b) {
        const Placement& pb = lir.placement[b];
        if (pb.kind != Placement::Kind::arena || first[b] < 0) continue;
        bool same_buffer = pa.offset == pb.offset && pa.bytes == pb.bytes;  // in-place reuse
        bool live_together = first[a] <= last[b] && first[b] <= last[a];
        bool overlap = pa.offset < pb.offset + pb.bytes && pb.offset < pa.offset + pa.bytes;
        if (live_together && overlap && !same_buffer) ADD_FAILURE() << "values " << a << " and " << b << " overlap in trial " << trial;
        if (live_together && same_buffer) {
          // sharing is only legal when one value is the in-place successor of the other
          const Node& later = lir.node(std::max(first[a], first[b]));
          ValueId earlier = first[a] < first[b] ? static_cast<ValueId>(a) : static_cast<ValueId>(b);
          bool consumes = std::find(later.inputs.begin(), later.inputs.end(), earlier) != later.inputs.end() ||
                          std::any_of(later.inputs.begin(), later.inputs.end(), [&](ValueId in) { return passes::placement_root(lir, in) == earlier; });
          EXPECT_TRUE(consumes && last[earlier] <= std::max(first[a], first[b])) << "values " << a << " and " << b << " share a buffer while both live";
        }
      }
    }
  }
}

TEST(MemoryPlan, PlannedRunsMatchTheReference) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 30; ++trial) {
    Graph g(std::make_shared<ir::Graph>(random_graph(rng, 30)));
    std::vector<Tensor> in = {Tensor::from_f64(DType::f32, {6, 8}, std::vector<double>(48, 0.25)),
                              Tensor::from_f64(DType::f32, {6, 8}, std::vector<double>(48, -0.5))};
    auto a = Session("reference").compile(g).run(in);
    auto b = Session("cpu").compile(g).run(in);
    for (size_t k = 0; k < a.size(); ++k)
      for (int64_t i = 0; i < a[k].numel(); ++i) EXPECT_NEAR(a[k].at_f64(i), b[k].at_f64(i), 1e-4 * (1 + std::fabs(a[k].at_f64(i))));
  }
}

TEST(MemoryPlan, ReusesMemory) {
  // A chain of ten tanh over a 1 MiB tensor needs far less than ten buffers.
  ir::Graph g;
  ops::Builder b(g);
  ValueId x = g.add_input({DType::f32, {Dim(512), Dim(512)}}, "x");
  for (int i = 0; i < 10; ++i) x = b.unary(Op::exp, b.unary(Op::tanh, x));
  g.set_outputs({x});
  ir::Graph lir = passes::plan_memory(g);
  EXPECT_LE(lir.arena_bytes, 2 * 512 * 512 * 4);
}
