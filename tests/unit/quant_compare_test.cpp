// quant/compare: KL divergence, top-1 agreement and perplexity of two logit sets, and the gate.
#include <gtest/gtest.h>

#include <cmath>

#include "quant/compare.h"
#include "rlx/error.h"

namespace rlx::quant {
namespace {

TEST(QuantCompare, IdenticalLogitsDivergeByNothing) {
  LogitComparer c;
  const float x[4] = {1.5f, -2.f, 0.25f, 3.f};
  c.add(x, x, 4, 2);
  c.add(x, x, 4);
  const Comparison r = c.result();
  EXPECT_EQ(r.positions, 2u);
  EXPECT_NEAR(r.kld_mean, 0.0, 1e-15);
  EXPECT_DOUBLE_EQ(r.top1, 1.0);
  EXPECT_NEAR(r.ppl_test, r.ppl_reference, 1e-12);
}

TEST(QuantCompare, KnownDivergenceAgreementAndPerplexity) {
  // p = softmax(0, ln 3) = (1/4, 3/4), q = softmax(0, 0) = (1/2, 1/2)
  const float p[2] = {0.f, static_cast<float>(std::log(3.0))}, q[2] = {0.f, 0.f}, flip[2] = {1.f, 0.f};
  LogitComparer c;
  c.add(p, q, 2, 1);
  c.add(p, flip, 2, 1);
  const Comparison r = c.result();
  const double kld_q = 0.25 * std::log(0.25 / 0.5) + 0.75 * std::log(0.75 / 0.5);
  const double e = std::exp(1.0), s = e + 1;  // flip: (e/(e+1), 1/(e+1))
  const double kld_flip = 0.25 * std::log(0.25 / (e / s)) + 0.75 * std::log(0.75 / (1 / s));
  EXPECT_NEAR(r.kld[0], kld_q, 1e-7);
  EXPECT_NEAR(r.kld[1], kld_flip, 1e-7);
  EXPECT_NEAR(r.kld_mean, (kld_q + kld_flip) / 2, 1e-7);
  EXPECT_NEAR(r.kld_max, kld_flip, 1e-7);
  EXPECT_DOUBLE_EQ(r.top1, 0.0);  // p picks token 1; q's tie goes to the lowest id, 0, and flip picks 0
  EXPECT_NEAR(r.ppl_reference, 1 / 0.75, 1e-6);
  EXPECT_NEAR(r.ppl_test, std::exp(-(std::log(0.5) + std::log(1 / s)) / 2), 1e-6);
}

TEST(QuantCompare, BadInputIsAnError) {
  LogitComparer c;
  const float x[2] = {0, 0};
  EXPECT_THROW(c.add(x, x, 2, 2), Error);
  EXPECT_THROW(c.add(x, x, 0), Error);
}

TEST(QuantGate, ParsesLimitsAndNamesWhatFails) {
  const Gate g = Gate::parse("kld=0.002,top1=99,ppl=1.05");
  EXPECT_DOUBLE_EQ(g.kld, 0.002);
  EXPECT_DOUBLE_EQ(g.top1, 0.99);
  Comparison good;
  good.kld_mean = 0.001, good.top1 = 0.995, good.ppl_reference = 5, good.ppl_test = 5.1;
  EXPECT_TRUE(g.failures(good).empty());
  Comparison bad = good;
  bad.kld_mean = 0.01, bad.top1 = 0.9, bad.ppl_test = 6;
  const auto f = g.failures(bad);
  ASSERT_EQ(f.size(), 3u);
  EXPECT_NE(f[0].find("mean KLD 0.01 > 0.002"), std::string::npos) << f[0];
  EXPECT_NE(f[1].find("top-1 agreement 90% < 99%"), std::string::npos) << f[1];
  Comparison nan = good;
  nan.kld_mean = NAN;  // a broken model's NaN logits must not pass
  EXPECT_EQ(g.failures(nan).size(), 1u);
  EXPECT_THROW(Gate::parse("kld"), Error);
  EXPECT_THROW(Gate::parse("kld=abc"), Error);
  EXPECT_THROW(Gate::parse("accuracy=abc"), Error);
  EXPECT_THROW(Gate::parse("recall=0.9"), Error);
  // a classifier's limit: the most test accuracy may drop, in points
  Gate acc = Gate::parse("accuracy=0.3");
  EXPECT_DOUBLE_EQ(acc.accuracy, 0.3);
  EXPECT_TRUE(acc.accuracy_failures(0.8500, 0.8480).empty());
  ASSERT_EQ(acc.accuracy_failures(0.8500, 0.8400).size(), 1u);
  EXPECT_NE(acc.accuracy_failures(0.8500, 0.8400)[0].find("1 points below"), std::string::npos) << acc.accuracy_failures(0.85, 0.84)[0];
  EXPECT_EQ(acc.accuracy_failures(0.85, NAN).size(), 1u);  // NaN never passes
  EXPECT_THROW(Gate::parse("top1=101"), Error);
  EXPECT_TRUE(Gate::parse("").empty());
}

}  // namespace
}  // namespace rlx::quant
