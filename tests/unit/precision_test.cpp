// The bf16 precision policy: matmuls and attention products in bf16 (f32 accumulation), the rest
// in f32 — results stay within bf16's rounding of the f32 ones.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "rlx/error.h"
#include "rlx/ops.h"
#include "rlx/session.h"

using namespace rlx;

namespace {

Tensor randn(std::mt19937& rng, std::vector<int64_t> shape, double scale) {
  std::normal_distribution<double> d(0, scale);
  int64_t n = 1;
  for (auto s : shape) n *= s;
  std::vector<double> v(static_cast<size_t>(n));
  for (auto& x : v) x = d(rng);
  return Tensor::from_f64(DType::f32, shape, v);
}

// A pre-norm attention block with an MLP, on [B, S, 64].
Graph block(std::mt19937& rng) {
  Graph g;
  Dim B = Dim::symbol("B"), S = Dim::symbol("S");
  Value x = g.input("x", DType::f32, {B, S, 64});
  auto w = [&](std::vector<int64_t> s, double sc = 0.12) { return constant(g, randn(rng, std::move(s), sc)); };
  Value h = layer_norm(x, w({64}, 1.0), w({64}));
  auto heads = [&](Value t) { return transpose(reshape(t, {B, S, Dim(4), Dim(16)}), {0, 2, 1, 3}); };
  Value q = heads(linear(h, w({64, 64}), w({64}))), k = heads(linear(h, w({64, 64}), w({64}))), v = heads(linear(h, w({64, 64}), w({64})));
  Value a = reshape(transpose(op("attention", {q, k, v}, "mask=causal")[0], {0, 2, 1, 3}), {B, S, Dim(64)});
  x = x + linear(a, w({64, 64}), w({64}));
  x = x + linear(gelu(linear(layer_norm(x, w({64}, 1.0), w({64})), w({256, 64}), w({256}))), w({64, 256}), w({64}));
  g.set_outputs({x});
  return g;
}

}  // namespace

// Rows of `a` and `b` ([rows, 64]) compared by cosine; returns the worst.
static double worst_row_cosine(const Tensor& a, const Tensor& b, int64_t rows) {
  double worst = 1;
  for (int64_t r = 0; r < rows; ++r) {
    double dot = 0, na = 0, nb = 0;
    for (int64_t c = 0; c < 64; ++c) {
      double u = a.at_f64(r * 64 + c), v = b.at_f64(r * 64 + c);
      dot += u * v;
      na += u * u;
      nb += v * v;
    }
    worst = std::min(worst, dot / std::sqrt(na * nb));
  }
  return worst;
}

class ReducedPrecision : public ::testing::TestWithParam<const char*> {};

TEST_P(ReducedPrecision, StaysCloseToF32) {
  const std::string policy = GetParam(), low = policy == "f16" || policy == "amp-f16" ? "f16" : "bf16";
  std::mt19937 rng(3);
  Graph g = block(rng);
  Tensor x = randn(rng, {3, 37, 64}, 1.0);
  SessionOptions reduced;
  reduced.precision = policy;
  CompiledModel m32 = Session("cpu").compile(g), m16 = Session("cpu", reduced).compile(g);
  EXPECT_NE(m16.mir_text().find(low), std::string::npos) << "the policy changed nothing:\n" << m16.mir_text();
  Tensor a = m32.run({x})[0], b = m16.run({x})[0];
  double worst = worst_row_cosine(a, b, 3 * 37);
  EXPECT_GT(worst, 0.999) << policy << " rows drift from f32";
  EXPECT_LT(worst, 1.0) << policy << " should round somewhere";
  // The reference device resolves the same graph (through casts), and agrees with cpu.
  Tensor c = Session("reference", reduced).compile(g).run({x})[0];
  for (int64_t i = 0; i < c.numel(); i += 7) EXPECT_NEAR(c.at_f64(i), b.at_f64(i), 2e-2 * (1 + std::fabs(c.at_f64(i))));
}

INSTANTIATE_TEST_SUITE_P(Policies, ReducedPrecision, ::testing::Values("bf16", "f16", "amp", "amp-f16"));

TEST(Precision, UnknownPolicyIsAClearError) {
  std::mt19937 rng(3);
  SessionOptions o;
  o.precision = "fp4";
  try {
    Session("cpu", o).compile(block(rng));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("f32, bf16, f16, amp, amp-f16, int8 or int4"), std::string::npos) << e.what();
  }
}
