// Elementwise regions (passes/fuse.h): a smaller region whose values only one larger region
// reads joins it — the L2 normalization's sqrt and max over [B, 1] run inside the division
// over [B, H] — and the fused graph computes what the unfused one does.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "ops/builder.h"
#include "passes/fuse.h"
#include "passes/legalize.h"
#include "rlx/graph.h"
#include "rlx/session.h"
#include "runtime/registry.h"

using namespace rlx;
using ir::Op;
using ir::ValueId;

TEST(FuseElementwise, ASmallRegionReadByOneLargerJoinsIt) {
  ir::Graph g;
  ops::Builder b(g);
  const int64_t B = 3, H = 40;
  ValueId x = g.add_input({DType::f32, {Dim(B), Dim(H)}}, "x");
  ValueId n2 = b.reduce(b.mul(x, x), "sum", {1}, true);                                      // [B, 1]
  ValueId d = b.max(b.unary(Op::sqrt, n2), b.scalar(DType::f32, 1e-12));                    // [B, 1]
  g.set_outputs({b.mul(b.div(x, d), b.scalar(DType::f32, 2.0))});                          // [B, H]

  passes::DispatchReport rep;
  ir::Graph fused = passes::fuse_elementwise(passes::legalize(g, runtime::backend("cpu"), {}, rep), runtime::backend("cpu"));
  int regions = 0, loose = 0;
  for (const auto& n : fused.nodes()) {
    regions += n.op == Op::elementwise_region;
    loose += n.op == Op::sqrt || n.op == Op::div || (n.op == Op::max && n.inputs.size() == 2);
  }
  EXPECT_EQ(regions, 1);
  EXPECT_EQ(loose, 0) << "sqrt, max and div all belong to the one region";

  std::mt19937 rng(7);
  std::normal_distribution<double> normal(0, 1);
  std::vector<double> xs(static_cast<size_t>(B * H));
  for (double& v : xs) v = static_cast<float>(normal(rng));
  auto got = Session("cpu").compile(Graph(std::make_shared<ir::Graph>(g))).run({Tensor::from_f64(DType::f32, {B, H}, xs)});
  ASSERT_EQ(got.size(), 1u);
  for (int64_t r = 0; r < B; ++r) {
    double s = 0;
    for (int64_t c = 0; c < H; ++c) s += xs[static_cast<size_t>(r * H + c)] * xs[static_cast<size_t>(r * H + c)];
    for (int64_t c = 0; c < H; ++c)
      EXPECT_NEAR(got[0].at_f64(r * H + c), 2 * xs[static_cast<size_t>(r * H + c)] / std::sqrt(s), 1e-6) << r << "," << c;
  }
}
