// The integer quantization ops against their definitions written out here by hand: ONNX's
// rounding and saturation for quantize_linear, the exact fixed-point formula for requantize
// (128-bit arithmetic), and fake_quant's straight-through/LSQ gradient — on the reference
// backend and the cpu device.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "common/run_graph.h"
#include "ops/builder.h"
#include "ops/weight_grid.h"
#include "passes/autodiff.h"
#include "rlx/error.h"
#include "rlx/graph.h"
#include "rlx/session.h"

using namespace rlx;
using rlx::testing::run_on;
using ir::Op;
using ir::ValueId;

namespace {

const char* kDevices[] = {"reference", "cpu"};

}  // namespace

TEST(QuantizeLinear, RoundsHalfToEvenAndSaturates) {
  ir::Graph g;
  ops::Builder b(g);
  ValueId x = g.add_input({DType::f32, {Dim(8)}}, "x");
  ValueId y = b.emit1(Op::quantize_linear, {x, b.scalar(DType::f32, 0.5f), b.constant(Tensor::from_f64(DType::i8, {}, {1}))});
  g.set_outputs({y});
  // x / 0.5: 0.5, 1.5, −2.5, 2.5, 300, −300, 0.26 (→ 0.52), −0.74 (→ −1.48)
  Tensor in = Tensor::from_f64(DType::f32, {8}, {0.25, 0.75, -1.25, 1.25, 150, -150, 0.26, -0.74});
  const int64_t want[] = {0 + 1, 2 + 1, -2 + 1, 2 + 1, 127, -128, 1 + 1, -1 + 1};
  for (const char* d : kDevices) {
    Tensor q = run_on(d, g, {in})[0];
    ASSERT_EQ(q.dtype(), DType::i8);
    for (int i = 0; i < 8; ++i) EXPECT_EQ(static_cast<int64_t>(q.at_f64(i)), want[i]) << d << " element " << i;
  }
}

TEST(Requantize, EqualsTheFixedPointFormula) {
  std::mt19937 rng(3);
  const int64_t C = 16, N = 64;
  std::vector<double> acc(static_cast<size_t>(N * C)), mult(C), shift(C);
  for (auto& a : acc) a = static_cast<double>(static_cast<int32_t>(rng()) >> (rng() % 20));
  for (int64_t c = 0; c < C; ++c) {
    mult[static_cast<size_t>(c)] = static_cast<double>((int64_t{1} << 30) + (rng() % (1u << 30)));
    shift[static_cast<size_t>(c)] = static_cast<double>(c == 0 ? 0 : 20 + rng() % 40);
  }
  ir::Graph g;
  ops::Builder b(g);
  ValueId a = g.add_input({DType::i32, {Dim(N), Dim(C)}}, "acc");
  ValueId m = b.constant(Tensor::from_f64(DType::i32, {C}, mult)), s = b.constant(Tensor::from_f64(DType::i32, {C}, shift));
  g.set_outputs({b.emit1(Op::requantize, {a, m, s}, ir::Attrs{{"zero_point", int64_t{-7}}, {"lo", int64_t{-7}}, {"hi", int64_t{127}}})});
  Tensor in = Tensor::from_f64(DType::i32, {N, C}, acc);
  int nontrivial = 0;
  for (const char* d : kDevices) {
    Tensor q = run_on(d, g, {in})[0];
    for (int64_t i = 0; i < N * C; ++i) {
      int64_t c = i % C, sh = static_cast<int64_t>(shift[static_cast<size_t>(c)]);
      __int128 p = static_cast<__int128>(static_cast<int64_t>(acc[static_cast<size_t>(i)])) * static_cast<int64_t>(mult[static_cast<size_t>(c)]);
      if (sh > 0) p += static_cast<__int128>(1) << (sh - 1);
      // floor division by 2^sh: an arithmetic shift
      int64_t v = static_cast<int64_t>(p >> sh) - 7;
      int64_t want = std::min<int64_t>(127, std::max<int64_t>(-7, v));
      nontrivial += want > -7 && want < 127;
      ASSERT_EQ(static_cast<int64_t>(q.at_f64(i)), want) << d << " element " << i << " (shift " << sh << ")";
    }
  }
  EXPECT_GT(nontrivial, 50);  // the draw reaches the inside of the clamp, not only its ends
}

TEST(FakeQuant, GradientIsStraightThroughWithLsqScale) {
  const int64_t N = 40;
  std::mt19937 rng(9);
  std::normal_distribution<double> normal(0, 1.5);
  std::vector<double> xs(N), gs(N);
  for (auto& v : xs) v = normal(rng);
  for (auto& v : gs) v = normal(rng);
  const double scale = 0.25, zp = 2, lo = -8, hi = 7;
  ir::Graph g;
  ops::Builder b(g);
  ValueId x = g.add_input({DType::f64, {Dim(N)}}, "x");
  ValueId s = g.add_input({DType::f64, {}}, "scale");
  ValueId z = g.add_input({DType::f64, {}}, "zero_point");
  ValueId y = b.emit1(Op::fake_quant, {x, s, z}, ir::Attrs{{"lo", int64_t{-8}}, {"hi", int64_t{7}}});
  ValueId loss = b.reduce(b.mul(y, b.constant(Tensor::from_f64(DType::f64, {N}, gs))), "sum", {0}, false);
  g.set_outputs({loss});
  ir::Graph grad = passes::value_and_grad(g, 0, {x, s, z});
  std::vector<Tensor> in = {Tensor::from_f64(DType::f64, {N}, xs), Tensor::from_f64(DType::f64, {}, {scale}), Tensor::from_f64(DType::f64, {}, {zp})};
  // the definition, element by element
  double want_loss = 0, want_ds = 0, want_dz = 0;
  std::vector<double> want_dx(N);
  int inside = 0;
  for (int64_t i = 0; i < N; ++i) {
    double v = xs[static_cast<size_t>(i)] / scale, r = std::nearbyint(v), q = r + zp, gi = gs[static_cast<size_t>(i)];
    double qc = std::min(hi, std::max(lo, q));
    want_loss += (qc - zp) * scale * gi;
    if (q < lo || q > hi) {
      want_ds += gi * ((q < lo ? lo : hi) - zp);
      want_dz += -gi * scale;
    } else {
      ++inside;
      want_dx[static_cast<size_t>(i)] = gi;
      want_ds += gi * (r - v);
    }
  }
  ASSERT_GT(inside, 5);
  ASSERT_LT(inside, N - 5);  // both regimes are exercised
  for (const char* d : kDevices) {
    std::vector<Tensor> out = run_on(d, grad, in);
    EXPECT_NEAR(out[0].at_f64(0), want_loss, 1e-12) << d;
    for (int64_t i = 0; i < N; ++i) EXPECT_NEAR(out[1].at_f64(i), want_dx[static_cast<size_t>(i)], 1e-12) << d << " dx[" << i << "]";
    EXPECT_NEAR(out[2].at_f64(0), want_ds, 1e-9) << d << " d scale";
    EXPECT_NEAR(out[3].at_f64(0), want_dz, 1e-9) << d << " d zero_point";
  }
}

TEST(QuantizeLinear, RejectsMismatchedOperands) {
  ir::Graph g;
  ops::Builder b(g);
  ValueId x = g.add_input({DType::f32, {Dim(2), Dim(3)}}, "x");
  ValueId bad_scale = b.constant(Tensor::from_f64(DType::f32, {4}, {1, 1, 1, 1}));
  try {
    b.emit1(Op::quantize_linear, {x, bad_scale, b.constant(Tensor::from_f64(DType::i8, {}, {0}))});
    FAIL() << "a scale of 4 channels for 3 was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("quantize_linear"), std::string::npos) << e.what();
  }
}

// --precision int8: a linear with constant weights becomes an int8 product (per-row activation
// and per-channel weight scales) — close to f32, and the same on the cpu as on the reference
// (the integer sums are exact; only the f32 epilogue's rounding order may differ).
TEST(Int8Precision, LinearsBecomeIntegerProductsCloseToF32) {
  std::mt19937 rng(12);
  std::normal_distribution<double> normal(0, 1);
  const int64_t M = 24, K = 96, N = 40;
  std::vector<double> w(K * N), xs(M * K), bias(N);
  for (auto& v : w) v = normal(rng) * 0.1;
  for (auto& v : xs) v = normal(rng);
  for (auto& v : bias) v = normal(rng);
  ir::Graph g;
  ops::Builder b(g);
  ValueId x = g.add_input({DType::f32, {Dim(M), Dim(K)}}, "x");
  ValueId y = b.emit1(Op::linear, {x, b.constant(Tensor::from_f64(DType::f32, {N, K}, w)), b.constant(Tensor::from_f64(DType::f32, {N}, bias))});
  g.set_outputs({y});
  Tensor in = Tensor::from_f64(DType::f32, {M, K}, xs);
  Tensor f32 = run_on("reference", g, {in})[0];
  SessionOptions o;
  o.precision = "int8";
  std::vector<Tensor> outs;
  for (const char* d : kDevices) {
    Session s(d, o);
    CompiledModel m = s.compile(Graph(std::make_shared<ir::Graph>(g)));
    outs.push_back(m.run({in})[0]);
  }
  double err = 0, norm = 0;
  for (int64_t i = 0; i < M * N; ++i) {
    EXPECT_NEAR(outs[0].at_f64(i), outs[1].at_f64(i), 1e-5 * (1 + std::fabs(outs[0].at_f64(i)))) << "int8 reference and cpu differ at " << i;
    err += std::pow(outs[0].at_f64(i) - f32.at_f64(i), 2);
    norm += std::pow(f32.at_f64(i), 2);
  }
  EXPECT_GT(err, 0) << "the int8 policy left the product in f32";
  EXPECT_LT(std::sqrt(err / norm), 0.02) << "relative error of the int8 product";
}

// --precision int4: a linear with constant weights keeps them as Q4_0 blocks (weight-only; k = 100
// padded to 128) — the product with the int4 grid's weights, on the reference and the cpu.
TEST(Int4Precision, LinearsMultiplyTheGridsWeightsKeptPacked) {
  // 24 rows: decoded tiles times x; 300: the whole matrix decoded, one threaded product
  for (const int64_t M : {int64_t{24}, int64_t{300}}) {
  std::mt19937 rng(13);
  std::normal_distribution<double> normal(0, 1);
  const int64_t K = 100, N = 40;
  std::vector<double> w(K * N), xs(M * K), bias(N);
  for (auto& v : w) v = normal(rng) * 0.1;
  for (auto& v : xs) v = normal(rng);
  for (auto& v : bias) v = normal(rng);
  const Tensor wt = Tensor::from_f64(DType::f32, {N, K}, w);
  ir::Graph g;
  ops::Builder b(g);
  ValueId x = g.add_input({DType::f32, {Dim(M), Dim(K)}}, "x");
  ValueId y = b.emit1(Op::linear, {x, b.constant(wt), b.constant(Tensor::from_f64(DType::f32, {N}, bias))});
  g.set_outputs({y});
  const Tensor in = Tensor::from_f64(DType::f32, {M, K}, xs);
  // the product with the grid's weights, in double
  const ops::GridCodes c = ops::weight_grid_codes(wt, ops::WeightGrid::parse("int4/g32"));
  std::vector<double> want(static_cast<size_t>(M * N));
  double err = 0, norm = 0;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double acc = bias[static_cast<size_t>(j)], exact = acc;
      for (int64_t t = 0; t < K; ++t) {
        const double q = c.codes[static_cast<size_t>(j * c.groups * c.group + t)] * c.scales[static_cast<size_t>(j * c.groups + t / c.group)];
        acc += static_cast<float>(xs[static_cast<size_t>(i * K + t)]) * q;
        exact += static_cast<float>(xs[static_cast<size_t>(i * K + t)]) * static_cast<float>(w[static_cast<size_t>(j * K + t)]);
      }
      want[static_cast<size_t>(i * N + j)] = acc;
      err += (acc - exact) * (acc - exact);
      norm += exact * exact;
    }
  EXPECT_GT(std::sqrt(err / norm), 1e-3) << "the grid left the weights unchanged";
  EXPECT_LT(std::sqrt(err / norm), 0.15) << "relative error of int4 weights";
  SessionOptions o;
  o.precision = "int4";
  for (const char* d : kDevices) {
    Session s(d, o);
    CompiledModel m = s.compile(Graph(std::make_shared<ir::Graph>(g)));
    const Tensor got = m.run({in})[0];
    for (int64_t i = 0; i < M * N; ++i)
      ASSERT_NEAR(got.at_f64(i), want[static_cast<size_t>(i)], 1e-4 * (1 + std::fabs(want[static_cast<size_t>(i)]))) << d << " M=" << M << " at " << i;
  }
  }
}

TEST(QuantizeLinear, PerRowScalesMatchTheReference) {
  std::mt19937 rng(5);
  std::normal_distribution<double> normal(0, 1);
  const int64_t M = 24, K = 96;
  std::vector<double> xs(M * K), sc(M);
  for (auto& v : xs) v = normal(rng);
  for (auto& v : sc) v = 0.01 + std::fabs(normal(rng)) * 0.02;
  ir::Graph g;
  ops::Builder b(g);
  ValueId x = g.add_input({DType::f32, {Dim(M), Dim(K)}}, "x");
  ValueId s = g.add_input({DType::f32, {Dim(M), Dim(1)}}, "s");
  g.set_outputs({b.emit1(Op::quantize_linear, {x, s, b.scalar(DType::i8, 3)})});
  std::vector<Tensor> in = {Tensor::from_f64(DType::f32, {M, K}, xs), Tensor::from_f64(DType::f32, {M, 1}, sc)};
  Tensor r = run_on("reference", g, in)[0], c = run_on("cpu", g, in)[0];
  for (int64_t i = 0; i < M * K; ++i) ASSERT_EQ(r.at_f64(i), c.at_f64(i)) << "element " << i;
}
