// Weight grids (ops/weight_grid.h) and weight-only quantization (quant/weight_only.h): the graph
// form QAT trains on equals the codes and f16 scales the export writes, bit for bit; the codes
// packed as ggml Q4_0/Q8_0 blocks decode to the same weights; a quantized MLP keeps its linears'
// weights packed (dequant_matmul) and computes what the decoded weights compute, on the reference
// and the cpu; the scale's f16 rounding passes the gradient straight through.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "common/run_graph.h"
#include "ops/builder.h"
#include "ops/weight_grid.h"
#include "passes/autodiff.h"
#include "quant/weight_only.h"
#include "rlx/error.h"
#include "rlx/graph.h"
#include "rlx/session.h"
#include "util/half.h"
#include "util/quant_blocks.h"

using namespace rlx;
using rlx::testing::run_on;
using ir::Op;
using ir::ValueId;

namespace {

Tensor random_weight(int64_t n, int64_t k, unsigned seed, double sd = 0.2) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(0, sd);
  std::vector<double> w(static_cast<size_t>(n * k));
  for (auto& v : w) v = normal(rng);
  w[3] = 0;                                    // an exact zero
  for (int64_t j = 0; j < std::min<int64_t>(k, 40); ++j) w[static_cast<size_t>(k + j)] = 0;  // row 1's first group(s) all zero
  return Tensor::from_f64(DType::f32, {n, k}, w);
}

// w[r, j] from the codes and scales (and mins), as the export defines it: in f32, as the blocks decode
float decoded(const ops::GridCodes& c, int64_t r, int64_t j) {
  const size_t g = static_cast<size_t>(r * c.groups + j / c.group);
  const float q = static_cast<float>(c.codes[static_cast<size_t>(r * c.groups * c.group + j)]) * static_cast<float>(c.scales[g]);
  return c.mins.empty() ? q : q + static_cast<float>(c.mins[g]);
}

const char* kGrids[] = {"int4/g32", "int4/g64", "int4/g0", "int8/g0", "int8/g32", "int4/g16", "int4/g32/asym", "int4/g0/asym", "int4/g64/asym"};

}  // namespace

TEST(WeightGrid, TrainingFormEqualsTheExportedCodesBitForBit) {
  const int64_t N = 6, K = 100;  // K is not a multiple of 32: the last group is padded
  Tensor w = random_weight(N, K, 3);
  for (const char* text : kGrids) {
    const ops::WeightGrid grid = ops::WeightGrid::parse(text);
    const ops::GridCodes c = ops::weight_grid_codes(w, grid);
    for (double s : c.scales) {
      EXPECT_EQ(static_cast<float>(s), f16_to_f32(f32_to_f16(static_cast<float>(s)))) << text << ": a scale is not an f16 value";
      EXPECT_GT(s, 0) << text;
    }
    for (double m : c.mins) EXPECT_EQ(static_cast<float>(m), f16_to_f32(f32_to_f16(static_cast<float>(m)))) << text << ": a min is not an f16 value";
    EXPECT_EQ(c.mins.size(), grid.asymmetric ? c.scales.size() : 0u) << text;
    const double lowest = grid.asymmetric ? 0 : grid.bits == 4 ? -8 : -128, highest = grid.asymmetric ? 15 : grid.bits == 4 ? 7 : 127;
    for (double q : c.codes) ASSERT_TRUE(q >= lowest && q <= highest && q == std::nearbyint(q)) << text << ": code " << q;
    ir::Graph g;
    ops::Builder b(g);
    ValueId x = g.add_input({DType::f32, {Dim(N), Dim(K)}}, "w");
    g.set_outputs({ops::fake_quant_weight(b, x, grid)});
    for (const char* d : {"reference", "cpu"}) {
      Tensor q = run_on(d, g, {w})[0];
      int64_t differ = 0;
      for (int64_t r = 0; r < N; ++r)
        for (int64_t j = 0; j < K; ++j) differ += static_cast<float>(q.at_f64(r * K + j)) != decoded(c, r, j);
      EXPECT_EQ(differ, 0) << text << " on " << d;
    }
  }
}

TEST(WeightGrid, BlocksDecodeToTheGridsWeights) {
  const int64_t N = 5, K = 100;
  Tensor w = random_weight(N, K, 4);
  for (const char* text : kGrids) {
    const ops::WeightGrid grid = ops::WeightGrid::parse(text);
    const ops::GridCodes c = ops::weight_grid_codes(w, grid);
    const ops::GridBlocks blocks = ops::packed_grid_blocks(c, grid.bits);
    if (grid.group == 16) {
      EXPECT_TRUE(blocks.type.empty()) << "groups of 16 cannot share a 32-value block's one scale";
      continue;
    }
    ASSERT_EQ(blocks.type, grid.asymmetric ? "q4_1" : grid.bits == 4 ? "q4_0" : "q8_0") << text;
    ASSERT_EQ(blocks.padded_k, 128);
    const quant::BlockType t = *quant::block_type_from_name(blocks.type);
    ASSERT_EQ(blocks.bytes.shape(), (std::vector<int64_t>{N, *quant::row_bytes(t, 128)}));
    std::vector<float> row(128);
    for (int64_t r = 0; r < N; ++r) {
      quant::decode_blocks(t, blocks.bytes.data_as<uint8_t>() + r * blocks.bytes.shape()[1], 4, row.data());
      for (int64_t j = 0; j < 128; ++j)  // the padding: 0 in a symmetric grid (an asymmetric one's is multiplied by x's zero padding)
        if (j < K || !grid.asymmetric) ASSERT_EQ(row[static_cast<size_t>(j)], j < K ? decoded(c, r, j) : 0.0f) << text << " row " << r << " column " << j;
    }
  }
}

TEST(WeightGrid, ParsesAndNamesItsForms) {
  EXPECT_EQ(ops::WeightGrid::parse("int4/g32/asym").str(), "int4/g32/asym");
  EXPECT_TRUE(ops::WeightGrid::parse("int4/asym").asymmetric);
  EXPECT_EQ(ops::WeightGrid::parse("int4").str(), "int4/g32");
  EXPECT_EQ(ops::WeightGrid::parse("int8").str(), "int8/g0");
  for (const char* bad : {"int8/asym", "int3", "int4/gx", "int4/asym/g32"}) EXPECT_THROW(ops::WeightGrid::parse(bad), Error) << bad;
}

TEST(WeightGrid, ScalesBeyondF16AreRefusedByName) {
  Tensor w = Tensor::from_f64(DType::f32, {1, 32}, std::vector<double>(32, 1e6));
  try {
    ops::weight_grid_codes(w, ops::WeightGrid::parse("int4"));
    FAIL() << "a scale of 1e6 / 7 does not fit f16";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("beyond what f16 can hold"), std::string::npos) << e.what();
  }
}

// The scale is rounded to f16 on a copy without gradient: d/dw of Σ c·fq(w) is c inside the grid
// (straight through) plus LSQ's term on each group's largest |w| — the same as with an unrounded
// scale, up to that scale's rounding.
TEST(WeightGrid, ScaleRoundingPassesTheGradientStraightThrough) {
  const int64_t N = 3, K = 64;
  Tensor w = random_weight(N, K, 5);
  std::mt19937 rng(6);
  std::normal_distribution<double> normal(0, 1);
  std::vector<double> cs(static_cast<size_t>(N * K));
  for (auto& v : cs) v = normal(rng);
  for (const char* text : {"int4/g32", "int4/g32/asym"}) {
    const ops::WeightGrid grid = ops::WeightGrid::parse(text);
    ir::Graph g;
    ops::Builder b(g);
    ValueId x = g.add_input({DType::f32, {Dim(N), Dim(K)}}, "w");
    ValueId loss = b.reduce(b.mul(ops::fake_quant_weight(b, x, grid), b.constant(Tensor::from_f64(DType::f32, {N, K}, cs))), "sum", {0, 1}, false);
    g.set_outputs({loss});
    ir::Graph grad = passes::value_and_grad(g, 0, {x});
    for (const char* d : {"reference", "cpu"}) {
      std::vector<Tensor> out = run_on(d, grad, {w});
      int64_t straight = 0, lsq = 0;
      for (int64_t r = 0; r < N; ++r)
        for (int64_t grp = 0; grp < K / 32; ++grp) {
          double amax = 0, lo = 1e300, hi = -1e300;
          for (int64_t j = grp * 32; j < grp * 32 + 32; ++j) {
            const double v = w.at_f64(r * K + j);
            amax = std::max(amax, std::fabs(v)), lo = std::min(lo, v), hi = std::max(hi, v);
          }
          for (int64_t j = grp * 32; j < grp * 32 + 32; ++j) {
            const double v = w.at_f64(r * K + j), gw = out[1].at_f64(r * K + j), c = cs[static_cast<size_t>(r * K + j)];
            ASSERT_TRUE(std::isfinite(gw)) << text << " on " << d;
            if (lo == hi) continue;
            const bool carries_grid = grid.asymmetric ? v == lo || v == hi : std::fabs(v) == amax;
            if (!carries_grid) {
              EXPECT_NEAR(gw, c, 1e-6 * (1 + std::fabs(c))) << text << " on " << d << ": w[" << r << ", " << j << "] is inside the grid";
              ++straight;
            } else {
              ++lsq;  // also carries the grid's LSQ gradient: not c alone
            }
          }
        }
      EXPECT_GT(straight, 100) << text << " on " << d;
      EXPECT_GE(lsq, 4) << text << " on " << d;
    }
  }
}

// An MLP 100-48-10 quantized weight-only: at g32 and per channel both linears stay packed and the
// result equals the graph that decodes the same codes (dequantize_linear), on the reference and
// the cpu; groups of 16 fall back to decoded codes.
TEST(WeightOnly, LinearsStayPackedAndComputeTheDecodedWeightsProduct) {
  const int64_t B = 7, K = 100, H = 48, O = 10;
  ir::Graph g;
  ops::Builder b(g);
  ValueId x = g.add_input({DType::f32, {Dim(B), Dim(K)}}, "x");
  ValueId w1 = g.add_input({DType::f32, {Dim(H), Dim(K)}}, "fc1.weight"), b1 = g.add_input({DType::f32, {Dim(H)}}, "fc1.bias");
  ValueId w2 = g.add_input({DType::f32, {Dim(O), Dim(H)}}, "fc2.weight"), b2 = g.add_input({DType::f32, {Dim(O)}}, "fc2.bias");
  ValueId h = b.emit1(Op::relu, {b.emit1(Op::linear, {x, w1, b1})});
  ValueId y = b.emit1(Op::linear, {h, w2, b2});
  g.set_outputs({y});
  std::map<ValueId, Tensor> weights = {{w1, random_weight(H, K, 7)}, {b1, Tensor::from_f64(DType::f32, {H}, std::vector<double>(H, 0.05))},
                                       {w2, random_weight(O, H, 8)}, {b2, Tensor::from_f64(DType::f32, {O}, std::vector<double>(O, -0.1))}};
  std::mt19937 rng(9);
  std::normal_distribution<double> normal(0, 1);
  std::vector<double> xs(static_cast<size_t>(B * K));
  for (auto& v : xs) v = normal(rng);
  const Tensor input = Tensor::from_f64(DType::f32, {B, K}, xs);
  for (const char* text : kGrids) {
    const ops::WeightGrid grid = ops::WeightGrid::parse(text);
    quant::WeightOnlyResult q = quant::quantize_weights(g, weights, x, y, grid);
    int64_t products = 0;
    for (const ir::Node& n : q.graph.nodes()) products += n.op == Op::dequant_matmul;
    const int64_t want_packed = grid.group == 16 ? 0 : 2;
    EXPECT_EQ(q.packed_weights, want_packed) << text;
    EXPECT_EQ(products, want_packed) << text;
    EXPECT_EQ(q.weights, 2);
    const int64_t block = grid.asymmetric ? 20 : grid.bits == 4 ? 18 : 34;
    if (want_packed) EXPECT_EQ(q.packed_bytes, H * 4 * block + O * 2 * block) << text;
    // the same codes decoded in the graph
    ir::Graph d;
    ops::Builder db(d);
    ValueId dx = d.add_input({DType::f32, {Dim(B), Dim(K)}}, "x");
    auto decoded_linear = [&](ValueId in, ValueId w, ValueId bias) {
      const Tensor& t = weights.at(w);
      return db.emit1(Op::linear, {in, ops::dequantized_weight(db, ops::weight_grid_codes(t, grid), t.shape()), db.constant(weights.at(bias))});
    };
    d.set_outputs({decoded_linear(db.emit1(Op::relu, {decoded_linear(dx, w1, b1)}), w2, b2)});
    const Tensor want = run_on("reference", d, {input})[0];
    for (const char* dev : {"reference", "cpu"}) {
      const Tensor got = run_on(dev, q.graph, {input})[0];
      ASSERT_EQ(got.shape(), want.shape());
      for (int64_t i = 0; i < B * O; ++i) EXPECT_NEAR(got.at_f64(i), want.at_f64(i), 1e-5 * (1 + std::fabs(want.at_f64(i)))) << text << " on " << dev << " at " << i;
    }
  }
}
