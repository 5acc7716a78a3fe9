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
    switch (rng() % 7) {
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
      case 6:  // two rows: a view when they start on an aligned byte (rows 0, 2, 4), else a copy
        if (b.shape(a) == Shape{Dim(6), Dim(8)}) {
          int64_t r = static_cast<int64_t>(rng() % 5);
          pool.push_back(b.slice_axis(a, 0, Dim(r), Dim(r + 2)));
        }
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

// Slices that read one aligned run of their input's bytes alias it at an offset; strided or
// misaligned ones are copies. The cpu runs both right.
TEST(MemoryPlan, ContiguousAlignedSlicesAreViews) {
  ir::Graph g;
  ops::Builder b(g);
  ValueId x = g.add_input({DType::f32, {Dim(4), Dim(64)}}, "x");
  ValueId y = b.unary(Op::tanh, x);
  ValueId rows = b.slice_axis(y, 0, Dim(1), Dim(3));                          // bytes 256…768
  ValueId part = b.slice(y, {Dim(2), Dim(16)}, {Dim(3), Dim(48)}, {1, 1});    // one row's middle: byte 576
  ValueId cols = b.slice_axis(y, 1, Dim(16), Dim(32));                        // strided: a copy
  ValueId odd = b.slice(y, {Dim(0), Dim(1)}, {Dim(1), Dim(17)}, {1, 1});      // byte 4: misaligned, a copy
  g.set_outputs({b.unary(Op::neg, rows), b.unary(Op::neg, part), b.unary(Op::neg, cols), b.unary(Op::neg, odd)});
  ir::Graph lir = passes::plan_memory(g);
  auto placement = [&](ValueId v) { return lir.placement[static_cast<size_t>(v)]; };
  EXPECT_EQ(placement(rows).kind, Placement::Kind::view);
  EXPECT_EQ(passes::placement_offset(lir, rows), 256);
  EXPECT_EQ(placement(part).kind, Placement::Kind::view);
  EXPECT_EQ(passes::placement_offset(lir, part), 576);
  EXPECT_EQ(placement(cols).kind, Placement::Kind::arena);
  EXPECT_EQ(placement(odd).kind, Placement::Kind::arena);

  std::vector<double> xs(256);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = 0.01 * static_cast<double>(i) - 1;
  Tensor in = Tensor::from_f64(DType::f32, {4, 64}, xs);
  Graph whole(std::make_shared<ir::Graph>(g));
  auto want = Session("reference").compile(whole).run({in});
  auto got = Session("cpu").compile(whole).run({in});
  ASSERT_EQ(want.size(), got.size());
  for (size_t k = 0; k < want.size(); ++k) {
    ASSERT_EQ(want[k].numel(), got[k].numel());
    for (int64_t i = 0; i < want[k].numel(); ++i) EXPECT_NEAR(want[k].at_f64(i), got[k].at_f64(i), 1e-6) << "output " << k << " at " << i;
  }
}

// keep_branches_apart (devices that overlap independent steps): bytes pass from one value to
// another only along the dataflow — never between branches a GPU would otherwise run side by
// side — while a chain still reuses them.
TEST(MemoryPlan, BranchesApartShareBytesOnlyAlongTheDataflow) {
  passes::PlanOptions apart;
  apart.keep_branches_apart = true;
  {
    // the loss branch (exp, sum) dies before the other branch (neg, sin) starts in node order
    ir::Graph g;
    ops::Builder b(g);
    ValueId x = g.add_input({DType::f32, {Dim(1024)}}, "x");
    ValueId a = b.unary(Op::exp, x);
    ValueId s = b.reduce(a, "sum", {0}, false);
    ValueId c = b.unary(Op::neg, x);
    g.set_outputs({s, b.unary(Op::sin, c)});
    ir::Graph shared = passes::plan_memory(g), kept = passes::plan_memory(g, apart);
    EXPECT_EQ(shared.placement[static_cast<size_t>(a)].offset, shared.placement[static_cast<size_t>(c)].offset) << "the default plan reuses a's bytes for c";
    EXPECT_NE(kept.placement[static_cast<size_t>(a)].offset, kept.placement[static_cast<size_t>(c)].offset) << "c does not follow a's readers";
  }
  {
    ir::Graph g;
    ops::Builder b(g);
    ValueId x = g.add_input({DType::f32, {Dim(512), Dim(512)}}, "x");
    for (int i = 0; i < 10; ++i) x = b.unary(Op::exp, b.unary(Op::tanh, x));
    g.set_outputs({x});
    EXPECT_LE(passes::plan_memory(g, apart).arena_bytes, 2 * 512 * 512 * 4) << "a chain still reuses its buffers";
  }
  std::mt19937 rng(13);
  for (int trial = 0; trial < 100; ++trial) {
    ir::Graph lir = passes::plan_memory(random_graph(rng, 5 + static_cast<int>(rng() % 40)), apart);
    int n = lir.num_nodes();
    std::vector<std::vector<bool>> dep(static_cast<size_t>(n), std::vector<bool>(static_cast<size_t>(n), false));
    for (int i = 0; i < n; ++i) {
      dep[static_cast<size_t>(i)][static_cast<size_t>(i)] = true;
      for (ValueId v : lir.node(i).inputs)
        if (int p = lir.value(v).node; p >= 0)
          for (int k = 0; k < n; ++k)
            if (dep[static_cast<size_t>(p)][static_cast<size_t>(k)]) dep[static_cast<size_t>(i)][static_cast<size_t>(k)] = true;
    }
    // the nodes touching each arena root's bytes
    std::vector<std::vector<int>> touch(lir.num_values());
    for (int i = 0; i < n; ++i) {
      for (ValueId v : lir.node(i).outputs) touch[static_cast<size_t>(passes::placement_root(lir, v))].push_back(i);
      for (ValueId v : lir.node(i).inputs) touch[static_cast<size_t>(passes::placement_root(lir, v))].push_back(i);
    }
    for (size_t a = 0; a < lir.num_values(); ++a)
      for (size_t c = 0; c < lir.num_values(); ++c) {
        const Placement &pa = lir.placement[a], &pc = lir.placement[c];
        if (a == c || pa.kind != Placement::Kind::arena || pc.kind != Placement::Kind::arena || touch[a].empty() || touch[c].empty()) continue;
        if (passes::placement_root(lir, static_cast<ValueId>(a)) != static_cast<ValueId>(a) || passes::placement_root(lir, static_cast<ValueId>(c)) != static_cast<ValueId>(c)) continue;
        bool overlap = pa.offset < pc.offset + pc.bytes && pc.offset < pa.offset + pa.bytes;
        int writer = touch[c].front();
        if (!overlap || writer <= touch[a].front()) continue;  // c is the later of the two
        for (int t : touch[a])
          if (t != writer) EXPECT_TRUE(dep[static_cast<size_t>(writer)][static_cast<size_t>(t)]) << "value " << c << " reuses value " << a << "'s bytes in trial " << trial;
      }
  }
}
