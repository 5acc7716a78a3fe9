// Sibling products of one row joined into one (passes/fuse_siblings.h): the joined graph gives
// each projection exactly what its own product gives, and its slices cost no kernel.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "ops/builder.h"
#include "passes/fuse_siblings.h"
#include "passes/legalize.h"
#include "passes/memory_plan.h"
#include "rlx/graph.h"
#include "rlx/session.h"
#include "runtime/registry.h"

using namespace rlx;
using ir::Op;
using ir::ValueId;

namespace {

// bf16 weights [n, k] packed as dequant_matmul reads them (u8[n, 2k]), and their f32 values.
struct Packed {
  Tensor bytes;
  std::vector<float> values;
};

Packed bf16_weight(int64_t n, int64_t k, std::mt19937& rng) {
  Packed p{Tensor::zeros(DType::u8, {n, 2 * k}), {}};
  std::normal_distribution<float> normal(0.f, 0.3f);
  auto* out = static_cast<uint16_t*>(p.bytes.data());
  for (int64_t i = 0; i < n * k; ++i) {
    float f = normal(rng);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    out[i] = static_cast<uint16_t>(bits >> 16);  // truncated: the value below is exact
    bits = static_cast<uint32_t>(out[i]) << 16;
    std::memcpy(&f, &bits, 4);
    p.values.push_back(f);
  }
  return p;
}

}  // namespace

TEST(FuseSiblings, JoinedProjectionsGiveEachItsOwnProduct) {
  std::mt19937 rng(5);
  const int64_t k = 64;
  const std::vector<int64_t> ns = {32, 16, 48};
  ir::Graph g;
  ops::Builder b(g);
  ValueId x = g.add_input({DType::f32, {Dim(1), Dim(1), Dim(k)}}, "x");
  std::vector<Packed> ws;
  std::vector<ValueId> outs;
  for (int64_t n : ns) {
    ws.push_back(bf16_weight(n, k, rng));
    ValueId w = b.constant(ws.back().bytes);
    outs.push_back(b.unary(Op::neg, b.emit1(Op::dequant_matmul, {x, w}, ir::Attrs{{"type", std::string("bf16")}, {"n", n}, {"k", k}})));
  }
  g.set_outputs(outs);

  // The pass joins the three on the cpu, and the slices plan as views.
  passes::DispatchReport rep;
  ir::Graph joined = passes::fuse_sibling_matmuls(passes::legalize(g, runtime::backend("cpu"), {}, rep), runtime::backend("cpu"));
  int products = 0;
  std::vector<ValueId> slices;
  for (const auto& n : joined.nodes()) {
    products += n.op == Op::dequant_matmul;
    if (n.op == Op::slice) slices.push_back(n.outputs[0]);
  }
  EXPECT_EQ(products, 1);
  ASSERT_EQ(slices.size(), 3u);
  ir::Graph lir = passes::plan_memory(joined);
  EXPECT_EQ(passes::placement_offset(lir, slices[1]), 32 * 4);
  EXPECT_EQ(passes::placement_offset(lir, slices[2]), 48 * 4);
  for (ValueId v : slices) EXPECT_EQ(lir.placement[static_cast<size_t>(v)].kind, ir::Placement::Kind::view);

  // Compiled and run, each output is -x·Wᵀ of its own weight.
  std::vector<double> xs(k);
  std::normal_distribution<double> normal(0, 1);
  for (double& v : xs) v = static_cast<float>(normal(rng));
  Tensor in = Tensor::from_f64(DType::f32, {1, 1, k}, xs);
  auto got = Session("cpu").compile(Graph(std::make_shared<ir::Graph>(g))).run({in});
  ASSERT_EQ(got.size(), ns.size());
  for (size_t p = 0; p < ns.size(); ++p) {
    ASSERT_EQ(got[p].numel(), ns[p]);
    for (int64_t r = 0; r < ns[p]; ++r) {
      double want = 0;
      for (int64_t c = 0; c < k; ++c) want += xs[static_cast<size_t>(c)] * ws[p].values[static_cast<size_t>(r * k + c)];
      EXPECT_NEAR(got[p].at_f64(r), -want, 1e-4) << "projection " << p << " row " << r;
    }
  }
}
