// Quantize → dequantize error of every type RLX writes, against bounds that follow from each
// block format (one rounding step of the stored scale, plus the f16 rounding of the scale).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "formats/quant.h"
#include "rlx/error.h"
#include "util/half.h"

namespace rlx::formats {
namespace {

// Rows of gaussian values with some outliers, constant runs and zeros, like real weights.
std::vector<float> weights(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0.0f, 0.02f);
  std::vector<float> x(static_cast<size_t>(n));
  for (auto& v : x) v = g(rng);
  for (int64_t i = 0; i < n; i += 97) x[static_cast<size_t>(i)] *= 25.0f;  // outliers
  for (int64_t i = 512; i < 768 && i < n; ++i) x[static_cast<size_t>(i)] = 0.0f;  // an all-zero super-block
  for (int64_t i = 1024; i < 1056 && i < n; ++i) x[static_cast<size_t>(i)] = 0.75f;  // a constant block
  return x;
}

struct Stats {
  double rel_rmse = 0;  // RMS error / RMS value
  double max_bound_ratio = 0;  // max over elements of |error| / bound
};

// `bound(block_values, i)` is the largest error the format allows at element i of a block.
template <class Bound>
Stats measure(WeightType t, const std::vector<float>& x, int64_t block, Bound&& bound) {
  auto q = quantize(t, x.data(), static_cast<int64_t>(x.size()));
  EXPECT_EQ(q.size(), *weight_type_bytes(t, x.size()));
  std::vector<float> y(x.size());
  dequantize_row(t, q.data(), static_cast<int64_t>(x.size()), y.data());
  double se = 0, sx = 0;
  Stats s;
  for (size_t b = 0; b < x.size(); b += static_cast<size_t>(block)) {
    const float* xb = x.data() + b;
    for (int64_t i = 0; i < block; ++i) {
      double e = std::fabs(static_cast<double>(y[b + i]) - xb[i]);
      se += e * e, sx += static_cast<double>(xb[i]) * xb[i];
      double bd = bound(xb, i);
      s.max_bound_ratio = std::max(s.max_bound_ratio, bd > 0 ? e / bd : (e > 0 ? 1e9 : 0));
    }
  }
  s.rel_rmse = std::sqrt(se / sx);
  std::printf("[quant] %-5s relative RMSE %.5f, worst |error| / bound %.3f\n", weight_type_name(t), s.rel_rmse,
              s.max_bound_ratio);
  return s;
}

float amax(const float* x, int n) {
  float m = 0;
  for (int i = 0; i < n; ++i) m = std::max(m, std::fabs(x[i]));
  return m;
}

// K-quants with a min: `steps` steps of the super-block's widest group (its range over nmax
// levels, groups of `size`) plus the rounding of its largest min at `levels` scale levels.
double min_group_bound(const float* b, int groups, int size, int nmax, double steps, int levels) {
  double worst = 0, worst_min = 0;
  for (int g = 0; g < groups; ++g) {
    float lo = 0, hi = b[size * g];
    for (int i = 0; i < size; ++i) lo = std::min(lo, b[size * g + i]), hi = std::max(hi, b[size * g + i]);
    worst = std::max(worst, static_cast<double>(hi - lo) / nmax);
    worst_min = std::max(worst_min, static_cast<double>(-lo));
  }
  return steps * worst + worst_min / levels;
}

constexpr double kHalfEps = 1.0 / 2048;  // relative rounding of a scale stored as f16

TEST(Quant, F16AndBF16RoundToNearest) {
  auto x = weights(4096, 1);
  auto f16 = measure(WeightType::f16, x, 1, [](const float* v, int64_t i) {
    return std::max(std::fabs(v[i]) * kHalfEps, 3e-8);  // half an ulp; subnormal floor
  });
  EXPECT_LE(f16.max_bound_ratio, 1.0);
  auto bf16 = measure(WeightType::bf16, x, 1, [](const float* v, int64_t i) { return std::fabs(v[i]) / 256.0; });
  EXPECT_LE(bf16.max_bound_ratio, 1.0);
}

TEST(Quant, Q8_0NeverRoundsABlockWorseThanTheLargestMagnitudeGrid) {
  auto x = weights(64 * 1024, 2);
  // ggml's Q8_0 maps each block's largest magnitude to 127 (d = amax/127, stored as f16). RLX's
  // searches grids around it by least squares, judging each after the f16 rounding of its scale:
  // no block's squared error may exceed that grid's (elements rounded against the stored scale),
  // and overall the error must be smaller.
  auto q = quantize(WeightType::q8_0, x.data(), static_cast<int64_t>(x.size()));
  std::vector<float> y(x.size());
  dequantize_row(WeightType::q8_0, q.data(), static_cast<int64_t>(x.size()), y.data());
  double ours = 0, grid = 0;
  int better = 0;
  for (size_t b = 0; b < x.size(); b += 32) {
    const float d = f16_to_f32(f32_to_f16(amax(x.data() + b, 32) / 127.0f)), id = d != 0 ? 1.0f / d : 0.0f;
    double eo = 0, eg = 0;
    for (size_t i = b; i < b + 32; ++i) {
      const double r = std::max(-127.0, std::min(127.0, static_cast<double>(std::lround(x[i] * id))));
      eg += (d * r - x[i]) * (d * r - x[i]);
      eo += (static_cast<double>(y[i]) - x[i]) * (static_cast<double>(y[i]) - x[i]);
    }
    EXPECT_LE(eo, eg * (1 + 1e-9) + 1e-30) << "block " << b / 32;
    better += eo < eg;
    ours += eo, grid += eg;
  }
  std::printf("[quant] q8_0  squared error %.4g (the amax/127 grid: %.4g); %d of %zu blocks better\n", ours, grid, better, x.size() / 32);
  EXPECT_LT(ours, grid);
  auto s = measure(WeightType::q8_0, x, 32, [](const float* b, int64_t) { return amax(b, 32) / 127.0 * 2; });  // within two steps
  EXPECT_LE(s.max_bound_ratio, 1.0);
  EXPECT_LT(s.rel_rmse, 0.02);  // the outliers widen d in their blocks
}

TEST(Quant, Q4_0IsWithinOneStep) {
  auto x = weights(64 * 1024, 3);
  // The largest magnitude maps to -8 exactly; its opposite (+8) clamps to 7: one full step.
  auto s = measure(WeightType::q4_0, x, 32, [](const float* b, int64_t) {
    double d = amax(b, 32) / 8.0;
    return d * (1.0 + 8 * kHalfEps);
  });
  EXPECT_LE(s.max_bound_ratio, 1.0);
  EXPECT_LT(s.rel_rmse, 0.2);
}

TEST(Quant, Q4_KIsWithinOneStepOfItsSuperBlock) {
  auto x = weights(64 * 1024, 4);
  // Scales and mins are 6-bit multiples of d = max_scale/63 and dmin = max_min/63; with the
  // final re-rounding an element is at most one 4-bit step of the super-block's widest group
  // (range/15) plus the rounding of its min away.
  auto s = measure(WeightType::q4_k, x, 256, [](const float* b, int64_t) { return min_group_bound(b, 8, 32, 15, 1.0, 63); });
  EXPECT_LE(s.max_bound_ratio, 1.0);
  EXPECT_LT(s.rel_rmse, 0.15);
}

TEST(Quant, Q6_KIsWithinOneStepOfItsSuperBlock) {
  auto x = weights(64 * 1024, 5);
  // 6-bit levels of groups of 16 with 8-bit scales: at most one step of the super-block's
  // largest group scale (amax/32) plus half a step of the scale quantization (d = max/128).
  auto s = measure(WeightType::q6_k, x, 256, [](const float* b, int64_t) {
    double a = amax(b, 256);
    return a / 32.0 + a / 128.0;
  });
  EXPECT_LE(s.max_bound_ratio, 1.0);
  EXPECT_LT(s.rel_rmse, 0.05);
}

TEST(Quant, Q5_0IsWithinOneStep) {
  auto x = weights(64 * 1024, 6);
  // As Q4_0 with 32 levels: the largest magnitude maps to -16, its opposite clamps at 15.
  auto s = measure(WeightType::q5_0, x, 32, [](const float* b, int64_t) { return amax(b, 32) / 16.0 * (1.0 + 16 * kHalfEps); });
  EXPECT_LE(s.max_bound_ratio, 1.0);
  EXPECT_LT(s.rel_rmse, 0.1);
}

// Q4_1 / Q5_1: d·L + m fitted by least squares from the block's range; the refit trades the
// extremes' half step for a lower total error, so the bound is one step (range/nmax), plus the
// f16 rounding of m and of d over nmax levels.
template <int nmax>
double affine_bound(const float* b) {
  float lo = b[0], hi = b[0];
  for (int i = 0; i < 32; ++i) lo = std::min(lo, b[i]), hi = std::max(hi, b[i]);
  const double step = static_cast<double>(hi - lo) / nmax;
  return step * (1.0 + nmax * kHalfEps) + std::max(std::fabs(lo), std::fabs(hi)) * kHalfEps + 1e-12;
}

TEST(Quant, Q4_1AndQ5_1AreWithinOneStepOfTheirRange) {
  auto x = weights(64 * 1024, 7);
  auto s4 = measure(WeightType::q4_1, x, 32, [](const float* b, int64_t) { return affine_bound<15>(b); });
  EXPECT_LE(s4.max_bound_ratio, 1.0);
  auto s5 = measure(WeightType::q5_1, x, 32, [](const float* b, int64_t) { return affine_bound<31>(b); });
  EXPECT_LE(s5.max_bound_ratio, 1.0);
  EXPECT_LT(s5.rel_rmse, s4.rel_rmse * 0.6);  // a fifth bit halves the step
}

TEST(Quant, Q5_KIsWithinOneStepOfItsSuperBlockAndFinerThanQ4_K) {
  auto x = weights(64 * 1024, 8);
  auto bound = [](int nmax) { return [nmax](const float* b, int64_t) { return min_group_bound(b, 8, 32, nmax, 1.0, 63); }; };
  auto s5 = measure(WeightType::q5_k, x, 256, bound(31));
  EXPECT_LE(s5.max_bound_ratio, 1.0);
  auto s4 = measure(WeightType::q4_k, x, 256, bound(15));
  EXPECT_LT(s5.rel_rmse, s4.rel_rmse * 0.7);
}

TEST(Quant, Q2_KAndQ3_KAreWithinTheirStepsAndOrdered) {
  auto x = weights(64 * 1024, 9);
  // Q2_K: 4 levels of a group's range, 4-bit scales and mins of the super-block's widest:
  // a step of the widest group plus the rounding of the largest min.
  auto s2 = measure(WeightType::q2_k, x, 256, [](const float* b, int64_t) { return min_group_bound(b, 16, 16, 3, 1.5, 15); });
  EXPECT_LE(s2.max_bound_ratio, 1.0);
  // Q3_K: 8 signed levels per group (amax/4 a step) with 6-bit signed scales of d = max/32.
  auto s3 = measure(WeightType::q3_k, x, 256, [](const float* b, int64_t) {
    const double a = amax(b, 256);
    return 1.5 * a / 4.0 + a / 32.0;
  });
  EXPECT_LE(s3.max_bound_ratio, 1.0);
  auto s4 = measure(WeightType::q4_k, x, 256, [](const float*, int64_t) { return 1e30; });
  EXPECT_LT(s3.rel_rmse, s2.rel_rmse);
  EXPECT_LT(s4.rel_rmse, s3.rel_rmse);
}

// IQ4_NL / IQ4_XS: 16 levels spaced finely near zero, so Gaussian weights round better than on
// Q4_0's even grid; no element is further than a quarter of its block's largest magnitude (the
// widest gap of the grid, plus the clamp of a refit scale) and XS's 6-bit group scales keep it
// close to NL.
TEST(Quant, Iq4TypesBeatTheEvenGridOfTheirSize) {
  auto x = weights(64 * 1024, 10);
  auto nl = measure(WeightType::iq4_nl, x, 32, [](const float* b, int64_t) { return 0.25 * amax(b, 32); });
  EXPECT_LE(nl.max_bound_ratio, 1.0);
  auto xs = measure(WeightType::iq4_xs, x, 256, [](const float* b, int64_t) { return 0.25 * amax(b, 256); });
  EXPECT_LE(xs.max_bound_ratio, 1.0);
  auto q4 = measure(WeightType::q4_0, x, 32, [](const float*, int64_t) { return 1e30; });
  EXPECT_LT(nl.rel_rmse, q4.rel_rmse * 0.95);
  EXPECT_LT(xs.rel_rmse, nl.rel_rmse * 1.1);
}

TEST(Quant, ZerosStayZeroAndScalesSurviveExtremes) {
  for (WeightType t : {WeightType::q8_0, WeightType::q4_0, WeightType::q4_1, WeightType::q5_0, WeightType::q5_1, WeightType::q2_k, WeightType::q3_k,
                       WeightType::q4_k, WeightType::q5_k, WeightType::q6_k, WeightType::iq4_nl, WeightType::iq4_xs}) {
    std::vector<float> z(256, 0.0f), y(256, 1.0f);
    auto q = quantize(t, z.data(), 256);
    dequantize_row(t, q.data(), 256, y.data());
    for (float v : y) ASSERT_EQ(v, 0.0f) << weight_type_name(t);
    std::vector<float> big(256, 3.0e4f), got(256);
    big[7] = -1.0e4f;
    q = quantize(t, big.data(), 256);
    dequantize_row(t, q.data(), 256, got.data());
    for (int i = 0; i < 256; ++i) ASSERT_NEAR(got[i], big[i], 0.2 * 3.0e4) << weight_type_name(t) << " " << i;
  }
}

TEST(Quant, RejectsPartialBlocksAndUnwritableTypes) {
  std::vector<float> x(100);
  EXPECT_THROW(quantize(WeightType::q8_0, x.data(), 100), Error);
  EXPECT_THROW(quantize(WeightType::q8_k, x.data(), 256), Error);
  EXPECT_THROW(quantize(WeightType::q3_k, x.data(), 100), Error);
  EXPECT_THROW(quantize(WeightType::q5_k, x.data(), 100), Error);
}

TEST(Quant, Fp8Decoders) {
  // Defined points of the OCP FP8 formats: max normal, min subnormal, NaN, infinity.
  EXPECT_EQ(f8_e4m3_to_f32(0x7e), 448.0f);
  EXPECT_EQ(f8_e4m3_to_f32(0x01), std::ldexp(1.0f, -9));
  EXPECT_TRUE(std::isnan(f8_e4m3_to_f32(0x7f)));
  EXPECT_EQ(f8_e4m3_to_f32(0xb8), -1.0f);
  EXPECT_EQ(f8_e5m2_to_f32(0x7b), 57344.0f);
  EXPECT_EQ(f8_e5m2_to_f32(0x01), std::ldexp(1.0f, -16));
  EXPECT_TRUE(std::isinf(f8_e5m2_to_f32(0x7c)));
  EXPECT_TRUE(std::isnan(f8_e5m2_to_f32(0x7d)));
  EXPECT_EQ(f8_e8m0_to_f32(127), 1.0f);
  EXPECT_TRUE(std::isnan(f8_e8m0_to_f32(255)));
  // Each F8 value agrees with the wider format it is a prefix of: E5M2 is the top byte of f16.
  for (int v = 0; v < 256; ++v) {
    float a = f8_e5m2_to_f32(static_cast<uint8_t>(v)), b = f16_to_f32(static_cast<uint16_t>(v << 8));
    if (std::isnan(b)) EXPECT_TRUE(std::isnan(a));
    else EXPECT_EQ(a, b) << v;
  }
}

}  // namespace
}  // namespace rlx::formats
