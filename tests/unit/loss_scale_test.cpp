// Dynamic loss scaling (train::LossScaleConfig): a scaled step equals an unscaled one, a step
// whose gradients overflow changes nothing and backs the scale off, finite runs grow it, and
// with f16 products it rescues gradients that f16 would flush to zero.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "ops/builder.h"
#include "rlx/error.h"
#include "train/trainer.h"

using namespace rlx;
using ir::ValueId;

namespace {

constexpr int64_t kBatch = 8, kIn = 16, kOut = 4;

// loss = k · Σ (x·w − t)²; w is the one parameter.
ir::Graph regression(double k) {
  ir::Graph g;
  ops::Builder b(g);
  ValueId w = g.add_input({DType::f32, {kIn, kOut}}, "w");
  ValueId x = g.add_input({DType::f32, {kBatch, kIn}}, "x");
  ValueId t = g.add_input({DType::f32, {kBatch, kOut}}, "t");
  ValueId d = b.sub(b.dot_general(x, w, {{}, {}}, {{1}, {0}}), t);
  ValueId loss = b.mul(b.reduce(b.mul(d, d), "sum", {0, 1}, false), b.scalar(DType::f32, k));
  g.set_outputs({loss});
  return g;
}

Tensor random(std::mt19937& rng, std::vector<int64_t> shape) {
  std::normal_distribution<double> n(0, 1);
  int64_t count = 1;
  for (int64_t s : shape) count *= s;
  std::vector<double> v(static_cast<size_t>(count));
  for (auto& e : v) e = n(rng);
  return Tensor::from_f64(DType::f32, shape, v);
}

train::OptimizerConfig sgd_momentum() {
  train::OptimizerConfig c;
  c.kind = "sgd";
  c.momentum = 0.9;
  return c;
}

std::vector<float> values(const Tensor& t) {
  Tensor c = t.contiguous();
  return std::vector<float>(c.data_as<float>(), c.data_as<float>() + c.numel());
}

}  // namespace

// Scaling by a power of two and back is exact in f32: the parameters after three steps are
// bitwise those of the unscaled trainer.
TEST(LossScale, ScaledStepsEqualUnscaledStepsBitwise) {
  std::mt19937 rng(1);
  Tensor w = random(rng, {kIn, kOut}), x = random(rng, {kBatch, kIn}), t = random(rng, {kBatch, kOut});
  train::OptimizerConfig plain = sgd_momentum(), scaled = sgd_momentum();
  scaled.loss_scale.enabled = true;
  scaled.loss_scale.init = 1024;
  train::Trainer a("reference", regression(0.01), {{"w", w}}, plain), b("reference", regression(0.01), {{"w", w}}, scaled);
  for (int s = 0; s < 3; ++s) {
    double la = a.step({x, t}, 0.05), lb = b.step({x, t}, 0.05);
    EXPECT_EQ(la, lb) << "the reported loss is the unscaled one";
  }
  EXPECT_EQ(values(a.params()[0].tensor), values(b.params()[0].tensor));
  EXPECT_NE(values(b.params()[0].tensor), values(w)) << "the steps changed nothing";
  EXPECT_EQ(b.skipped_steps(), 0);
  EXPECT_EQ(b.loss_scale(), 1024);
}

// With f16 products a scale of 2^30 overflows f16's range (65504): such steps leave the weight
// and the momentum untouched and halve the scale until the gradients fit, then training goes on.
TEST(LossScale, OverflowSkipsTheStepAndBacksOff) {
  std::mt19937 rng(2);
  Tensor w = random(rng, {kIn, kOut}), x = random(rng, {kBatch, kIn}), t = random(rng, {kBatch, kOut});
  train::OptimizerConfig c = sgd_momentum();
  c.loss_scale.enabled = true;
  c.loss_scale.init = 1 << 30;
  SessionOptions o;
  o.precision = "amp-f16";
  train::Trainer tr("cpu", regression(0.01), {{"w", w}}, c, o);
  double first = tr.step({x, t}, 0.01);
  EXPECT_TRUE(std::isfinite(first));
  EXPECT_EQ(tr.skipped_steps(), 1);
  EXPECT_EQ(tr.loss_scale(), (1 << 30) * 0.5);
  EXPECT_EQ(values(tr.params()[0].tensor), values(w)) << "an overflowing step must not move the weight";
  double last = first;
  for (int s = 0; s < 40; ++s) last = tr.step({x, t}, 0.01);
  EXPECT_GT(tr.skipped_steps(), 1);
  EXPECT_LT(tr.skipped_steps(), 41) << "the scale never came down to a usable value";
  EXPECT_EQ(tr.loss_scale(), std::ldexp(1.0, 30 - static_cast<int>(tr.skipped_steps()))) << "one halving per skipped step";
  EXPECT_LT(last, first) << "training did not go on once the scale fit";
}

TEST(LossScale, FiniteRunsGrowTheScale) {
  std::mt19937 rng(3);
  Tensor w = random(rng, {kIn, kOut}), x = random(rng, {kBatch, kIn}), t = random(rng, {kBatch, kOut});
  train::OptimizerConfig c = sgd_momentum();
  c.loss_scale = {true, 8.0, 2.0, 0.5, 3};
  train::Trainer tr("cpu", regression(0.01), {{"w", w}}, c);
  for (int s = 0; s < 2; ++s) tr.step({x, t}, 0.01);
  EXPECT_EQ(tr.loss_scale(), 8.0);
  tr.step({x, t}, 0.01);
  EXPECT_EQ(tr.loss_scale(), 16.0);
  for (int s = 0; s < 3; ++s) tr.step({x, t}, 0.01);
  EXPECT_EQ(tr.loss_scale(), 32.0);
}

// Why it exists: with a loss of 2^-30 · Σ d², the output gradient (~2^-29) is below f16's
// smallest subnormal, so f16 products give a zero weight gradient; scaled by 2^24 the update is
// f32's within f16's rounding.
TEST(LossScale, RescuesGradientsThatF16FlushesToZero) {
  std::mt19937 rng(4);
  Tensor w = random(rng, {kIn, kOut}), x = random(rng, {kBatch, kIn}), t = random(rng, {kBatch, kOut});
  const double k = std::ldexp(1.0, -30), lr = std::ldexp(1.0, 20);
  train::OptimizerConfig plain;
  SessionOptions f16;
  f16.precision = "f16";
  train::Trainer exact("cpu", regression(k), {{"w", w}}, plain);
  train::Trainer flushed("cpu", regression(k), {{"w", w}}, plain, f16);
  train::OptimizerConfig scaled;
  scaled.loss_scale.enabled = true;
  scaled.loss_scale.init = 1 << 24;
  SessionOptions amp;
  amp.precision = "amp-f16";
  train::Trainer rescued("cpu", regression(k), {{"w", w}}, scaled, amp);
  exact.step({x, t}, lr);
  flushed.step({x, t}, lr);
  rescued.step({x, t}, lr);
  std::vector<float> w0 = values(w), we = values(exact.params()[0].tensor), wf = values(flushed.params()[0].tensor),
                     wr = values(rescued.params()[0].tensor);
  EXPECT_EQ(wf, w0) << "f16 products should have flushed this gradient to zero";
  double worst = 0, largest = 0;
  for (size_t i = 0; i < w0.size(); ++i) {
    largest = std::max(largest, std::fabs(static_cast<double>(we[i]) - w0[i]));
    worst = std::max(worst, std::fabs((static_cast<double>(wr[i]) - w0[i]) - (static_cast<double>(we[i]) - w0[i])));
  }
  ASSERT_GT(largest, 1e-4) << "the f32 step should move the weight";
  EXPECT_LT(worst, 1e-2 * largest) << "the scaled f16 update differs from f32's by more than f16's rounding";
  EXPECT_EQ(rescued.skipped_steps(), 0);
}

TEST(LossScale, BadSettingsAreRefusedByName) {
  train::OptimizerConfig c;
  c.loss_scale.enabled = true;
  c.loss_scale.backoff = 1.5;
  try {
    train::validate(c);
    FAIL() << "a backoff of 1.5 was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("backoff"), std::string::npos) << e.what();
  }
}
