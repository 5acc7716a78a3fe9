// Highway row kernels (see simd.h). This file is compiled once per target: foreach_target.h
// re-includes it with HWY_NAMESPACE set to N_AVX2, N_AVX3, …; HWY_EXPORT / HWY_DYNAMIC_DISPATCH
// pick the best compiled target the CPU supports on the first call.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/simd.cpp"
#include <hwy/foreach_target.h>  // must come before highway.h
#include <hwy/highway.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "backends/cpu/simd.h"
#include "codegen/vmath.h"

HWY_BEFORE_NAMESPACE();
namespace rlx::backends::cpu::simd {
namespace HWY_NAMESPACE {

namespace hn = hwy::HWY_NAMESPACE;

// 2^n · e^r after the range reduction x = n·ln 2 + r, for an x already clamped to the range
// whose 2^n is a normal float: the polynomial Exp and ExpNonPositive share.
template <class D, class V>
HWY_INLINE V ExpOfClamped(D d, V xc) {
  const hn::RebindToSigned<D> di;
  V big = hn::Set(d, 12582912.0f);
  V n = hn::Sub(hn::MulAdd(xc, hn::Set(d, 1.44269504088896341f), big), big);
  V r = hn::NegMulAdd(n, hn::Set(d, 0.693359375f), xc);
  r = hn::NegMulAdd(n, hn::Set(d, -2.12194440e-4f), r);
  V p = hn::Set(d, 1.0f / 720);
  p = hn::MulAdd(p, r, hn::Set(d, 1.0f / 120));
  p = hn::MulAdd(p, r, hn::Set(d, 1.0f / 24));
  p = hn::MulAdd(p, r, hn::Set(d, 1.0f / 6));
  p = hn::MulAdd(p, r, hn::Set(d, 0.5f));
  p = hn::MulAdd(p, r, hn::Set(d, 1.0f));
  p = hn::MulAdd(p, r, hn::Set(d, 1.0f));
  return hn::Mul(p, hn::BitCast(d, hn::ShiftLeft<23>(hn::Add(hn::ConvertTo(di, n), hn::Set(di, 127)))));
}

// vm::exp, one vector at a time.
template <class D, class V>
HWY_INLINE V Exp(D d, V x) {
  V y = ExpOfClamped(d, hn::Min(hn::Max(x, hn::Set(d, -87.3f)), hn::Set(d, 88.7f)));
  y = hn::IfThenElse(hn::Gt(x, hn::Set(d, 88.72283f)), hn::Set(d, __builtin_inff()), y);
  y = hn::IfThenZeroElse(hn::Lt(x, hn::Set(d, -103.97208f)), y);
  return hn::IfThenElse(hn::Eq(x, x), y, x);  // NaN in, NaN out
}

// exp(x) for x ≤ 0 only (a splat's exponent −σ): Exp without the overflow and NaN cases; below
// −87 it returns exp(−87) ≈ 1.6e-38 instead of 0, far under any α that counts.
template <class D, class V>
HWY_INLINE V ExpNonPositive(D d, V x) {
  return ExpOfClamped(d, hn::Max(x, hn::Set(d, -87.0f)));
}

float ScaleBiasMax(float* x, int64_t n, float scale, const float* bias) {
  const hn::ScalableTag<float> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  auto vs = hn::Set(d, scale);
  auto vmax = hn::Set(d, -__builtin_inff());
  int64_t i = 0;
  for (; i + N <= n; i += N) {
    auto v = hn::Mul(hn::LoadU(d, x + i), vs);
    if (bias) v = hn::Add(v, hn::LoadU(d, bias + i));
    hn::StoreU(v, d, x + i);
    vmax = hn::Max(vmax, v);
  }
  float mx = hn::GetLane(hn::MaxOfLanes(d, vmax));
  for (; i < n; ++i) {
    x[i] = x[i] * scale + (bias ? bias[i] : 0.0f);
    mx = mx > x[i] ? mx : x[i];
  }
  return mx;
}

float ExpShiftedSum(float* x, int64_t n, float shift) {
  const hn::ScalableTag<float> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  auto vshift = hn::Set(d, shift);
  auto vsum = hn::Zero(d);
  int64_t i = 0;
  for (; i + N <= n; i += N) {
    auto e = Exp(d, hn::Sub(hn::LoadU(d, x + i), vshift));
    hn::StoreU(e, d, x + i);
    vsum = hn::Add(vsum, e);
  }
  float sum = hn::GetLane(hn::SumOfLanes(d, vsum));
  for (; i < n; ++i) {
    x[i] = vm::exp(x[i] - shift);
    sum += x[i];
  }
  return sum;
}

void Scale(float* x, int64_t n, float s) {
  const hn::ScalableTag<float> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  auto vs = hn::Set(d, s);
  int64_t i = 0;
  for (; i + N <= n; i += N) hn::StoreU(hn::Mul(hn::LoadU(d, x + i), vs), d, x + i);
  for (; i < n; ++i) x[i] *= s;
}

void ScaleToBf16(const float* x, int64_t n, float s, uint16_t* out) {
  const hn::ScalableTag<float> d;
  const hn::RebindToUnsigned<decltype(d)> du;
  const hn::RebindToSigned<decltype(d)> di;
  const hn::Rebind<uint16_t, decltype(d)> d16;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  auto vs = hn::Set(d, s);
  int64_t i = 0;
  for (; i + N <= n; i += N) {
    auto u = hn::BitCast(du, hn::Mul(hn::LoadU(d, x + i), vs));
    // round to nearest even: add 0x7fff plus the lowest kept bit, keep the high half
    auto rounded = hn::ShiftRight<16>(hn::Add(u, hn::Add(hn::Set(du, 0x7fffu), hn::And(hn::ShiftRight<16>(u), hn::Set(du, 1u)))));
    auto nan = hn::Or(hn::ShiftRight<16>(u), hn::Set(du, 0x40u));
    auto is_nan = hn::Gt(hn::BitCast(di, hn::And(u, hn::Set(du, 0x7fffffffu))), hn::Set(di, 0x7f800000));
    auto bits = hn::IfThenElse(hn::RebindMask(du, is_nan), nan, rounded);
    hn::StoreU(hn::DemoteTo(d16, hn::BitCast(di, bits)), d16, out + i);
  }
  for (; i < n; ++i) out[i] = vm::to_bf16(x[i] * s);
}

void QuantizeI8(const float* x, int64_t n, float s, float zp, int8_t* out) {
  const hn::ScalableTag<float> d;
  const hn::RebindToSigned<decltype(d)> di;
  const hn::Rebind<int8_t, decltype(d)> d8;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const auto vs = hn::Set(d, s), vz = hn::Set(d, zp), lo = hn::Set(d, -128.0f), hi = hn::Set(d, 127.0f), zero = hn::Zero(d);
  int64_t i = 0;
  for (; i + N <= n; i += N) {
    auto v = hn::Div(hn::LoadU(d, x + i), vs);
    auto ok = hn::Not(hn::IsNaN(v));
    auto q = hn::Min(hn::Max(hn::Add(hn::Round(v), vz), lo), hi);  // Round: half to even
    q = hn::IfThenElse(ok, q, zero);
    hn::StoreU(hn::DemoteTo(d8, hn::ConvertTo(di, q)), d8, out + i);
  }
  for (; i < n; ++i) {
    float v = x[i] / s;
    float q = std::nearbyint(v) + zp;
    q = q > 127.0f ? 127.0f : q < -128.0f ? -128.0f : q;
    out[i] = v == v ? static_cast<int8_t>(q) : int8_t{0};
  }
}

float AbsMax(const float* x, int64_t n) {
  const hn::ScalableTag<float> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  auto m0 = hn::Zero(d), m1 = hn::Zero(d), nan = hn::Zero(d);  // nan: lanes that saw one (all bits set)
  int64_t i = 0;
  for (; i + 2 * N <= n; i += 2 * N) {
    auto a = hn::LoadU(d, x + i), b = hn::LoadU(d, x + i + N);
    nan = hn::Or(nan, hn::Or(hn::VecFromMask(d, hn::IsNaN(a)), hn::VecFromMask(d, hn::IsNaN(b))));
    m0 = hn::Max(m0, hn::Abs(a));
    m1 = hn::Max(m1, hn::Abs(b));
  }
  float m = hn::GetLane(hn::MaxOfLanes(d, hn::Max(m0, m1)));
  bool any_nan = !hn::AllFalse(d, hn::MaskFromVec(nan));
  for (; i < n; ++i) {
    any_nan = any_nan || x[i] != x[i];
    m = std::max(m, std::fabs(x[i]));
  }
  return any_nan ? std::numeric_limits<float>::quiet_NaN() : m;
}

float Extreme(const float* x, int64_t n, bool is_max) {
  const hn::ScalableTag<float> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const auto first = hn::Set(d, x[0]);
  auto m0 = first, m1 = first, nan = hn::Zero(d);  // nan: lanes that saw one (all bits set)
  int64_t i = 0;
  for (; i + 2 * N <= n; i += 2 * N) {
    auto a = hn::LoadU(d, x + i), b = hn::LoadU(d, x + i + N);
    nan = hn::Or(nan, hn::Or(hn::VecFromMask(d, hn::IsNaN(a)), hn::VecFromMask(d, hn::IsNaN(b))));
    m0 = is_max ? hn::Max(m0, a) : hn::Min(m0, a);
    m1 = is_max ? hn::Max(m1, b) : hn::Min(m1, b);
  }
  float m = is_max ? hn::GetLane(hn::MaxOfLanes(d, hn::Max(m0, m1))) : hn::GetLane(hn::MinOfLanes(d, hn::Min(m0, m1)));
  bool any_nan = !hn::AllFalse(d, hn::MaskFromVec(nan));
  for (; i < n; ++i) {
    any_nan = any_nan || x[i] != x[i];
    m = is_max ? (x[i] > m ? x[i] : m) : (x[i] < m ? x[i] : m);
  }
  return any_nan ? std::numeric_limits<float>::quiet_NaN() : m;
}

int64_t FirstEqual(const float* x, int64_t n, float v) {
  const hn::ScalableTag<float> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const auto want = hn::Set(d, v);
  int64_t i = 0;
  for (; i + N <= n; i += N) {
    auto hit = v != v ? hn::IsNaN(hn::LoadU(d, x + i)) : hn::Eq(hn::LoadU(d, x + i), want);
    if (!hn::AllFalse(d, hit)) return i + static_cast<int64_t>(hn::FindKnownFirstTrue(d, hit));
  }
  for (; i < n; ++i)
    if (v != v ? x[i] != x[i] : x[i] == v) return i;
  return n;
}

void CopyRows(const float* src, int64_t rows, int64_t ld_src, int64_t cols, float* dst, int64_t ld_dst) {
  const hn::ScalableTag<float> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t r = 0; r < rows; ++r, src += ld_src, dst += ld_dst) {
    int64_t i = 0;
    for (; i + N <= cols; i += N) hn::StoreU(hn::LoadU(d, src + i), d, dst + i);
    for (; i < cols; ++i) dst[i] = src[i];
  }
}

void CopyRowsBf16(const float* src, int64_t rows, int64_t ld_src, int64_t cols, uint16_t* dst, int64_t ld_dst) {
  for (int64_t r = 0; r < rows; ++r, src += ld_src, dst += ld_dst) ScaleToBf16(src, cols, 1.0f, dst);
}

void DotRows(const float* a, int64_t rows, int64_t lda, const float* x, int64_t cols, float* out) {
  const hn::ScalableTag<float> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  int64_t r = 0;
  // Four rows at a time: four independent FMA chains, x loaded once for all of them.
  for (; r + 4 <= rows; r += 4) {
    const float* a0 = a + r * lda;
    auto s0 = hn::Zero(d), s1 = hn::Zero(d), s2 = hn::Zero(d), s3 = hn::Zero(d);
    int64_t c = 0;
    for (; c + N <= cols; c += N) {
      auto xv = hn::LoadU(d, x + c);
      s0 = hn::MulAdd(hn::LoadU(d, a0 + c), xv, s0);
      s1 = hn::MulAdd(hn::LoadU(d, a0 + lda + c), xv, s1);
      s2 = hn::MulAdd(hn::LoadU(d, a0 + 2 * lda + c), xv, s2);
      s3 = hn::MulAdd(hn::LoadU(d, a0 + 3 * lda + c), xv, s3);
    }
    float t[4] = {hn::GetLane(hn::SumOfLanes(d, s0)), hn::GetLane(hn::SumOfLanes(d, s1)), hn::GetLane(hn::SumOfLanes(d, s2)),
                  hn::GetLane(hn::SumOfLanes(d, s3))};
    for (; c < cols; ++c)
      for (int k = 0; k < 4; ++k) t[k] += a0[k * lda + c] * x[c];
    for (int k = 0; k < 4; ++k) out[r + k] = t[k];
  }
  for (; r < rows; ++r) {
    const float* ar = a + r * lda;
    auto s0 = hn::Zero(d);
    int64_t c = 0;
    for (; c + N <= cols; c += N) s0 = hn::MulAdd(hn::LoadU(d, ar + c), hn::LoadU(d, x + c), s0);
    float t = hn::GetLane(hn::SumOfLanes(d, s0));
    for (; c < cols; ++c) t += ar[c] * x[c];
    out[r] = t;
  }
}

void WeightedRows(const float* p, const float* a, int64_t rows, int64_t lda, int64_t cols, float* y) {
  const hn::ScalableTag<float> d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t c = 0; c < cols; ++c) y[c] = 0.0f;
  // Columns in strips of four vectors held in registers across all rows.
  int64_t c0 = 0;
  for (; c0 + 4 * N <= cols; c0 += 4 * N) {
    auto y0 = hn::Zero(d), y1 = hn::Zero(d), y2 = hn::Zero(d), y3 = hn::Zero(d);
    for (int64_t r = 0; r < rows; ++r) {
      if (p[r] == 0.0f) continue;
      auto pv = hn::Set(d, p[r]);
      const float* ar = a + r * lda + c0;
      y0 = hn::MulAdd(pv, hn::LoadU(d, ar), y0);
      y1 = hn::MulAdd(pv, hn::LoadU(d, ar + N), y1);
      y2 = hn::MulAdd(pv, hn::LoadU(d, ar + 2 * N), y2);
      y3 = hn::MulAdd(pv, hn::LoadU(d, ar + 3 * N), y3);
    }
    hn::StoreU(y0, d, y + c0);
    hn::StoreU(y1, d, y + c0 + N);
    hn::StoreU(y2, d, y + c0 + 2 * N);
    hn::StoreU(y3, d, y + c0 + 3 * N);
  }
  for (int64_t r = 0; r < rows; ++r) {
    if (p[r] == 0.0f) continue;
    for (int64_t c = c0; c < cols; ++c) y[c] += p[r] * a[r * lda + c];
  }
}

const char* TargetName() { return hwy::TargetName(HWY_TARGET); }


// Four rows of splat pixels, a vector of lanes of each at a time: a Gaussian's parameters are
// read once for the four rows. A lane stops (as the scalar loop's break) when a Gaussian would
// take its transmittance below 1e-4, and the block stops when every lane has. C is the channel
// count, fixed so that the accumulators stay in registers.
template <int C>
void SplatRowsC(const SplatTile& g, int64_t y_begin, int64_t rows, int64_t x_begin, int64_t x_end, float* out, int64_t out_stride, float* t_out,
                int64_t t_stride) {
  const hn::ScalableTag<float> d;
  using V = hn::Vec<decltype(d)>;
  using M = hn::Mask<decltype(d)>;
  constexpr int R = 4;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  const V one = hn::Set(d, 1.0f), max_alpha = hn::Set(d, 0.99f), min_alpha = hn::Set(d, 1.0f / 255), min_t = hn::Set(d, 1e-4f), zero = hn::Zero(d);
  const float y_first = static_cast<float>(y_begin), y_last = static_cast<float>(y_begin + rows - 1);
  HWY_ALIGN float lanes[64];
  for (int64_t xb = x_begin; xb < x_end; xb += N) {
    const V lane_x = hn::Iota(d, static_cast<float>(xb));
    const V px = hn::Add(lane_x, hn::Set(d, 0.5f));
    const M in_row = hn::Lt(lane_x, hn::Set(d, static_cast<float>(x_end)));
    V t[R], acc[R][C];
    M live[R];
    for (int r = 0; r < R; ++r) {
      t[r] = one;
      live[r] = r < rows ? in_row : hn::FirstN(d, 0);
      for (int k = 0; k < C; ++k) acc[r][k] = zero;
    }
    const float first = static_cast<float>(xb), last = static_cast<float>(xb + N - 1);
    for (int64_t j = 0; j < g.count; ++j) {
      const float gy0 = g.y0[j], gy1 = g.y1[j];
      if (gy1 < y_first || gy0 > y_last || g.x1[j] < first || g.x0[j] > last) continue;
      const V dx = hn::Sub(px, hn::Set(d, g.mx[j]));
      const M in_box = hn::And(hn::Ge(lane_x, hn::Set(d, g.x0[j])), hn::Le(lane_x, hn::Set(d, g.x1[j])));
      const V ax = hn::Mul(hn::Set(d, 0.5f * g.ca[j]), hn::Mul(dx, dx));
      const float cb = g.cb[j], half_c = 0.5f * g.cc[j], opacity = g.opacity[j];
      V color[C];
      for (int k = 0; k < C; ++k) color[k] = hn::Set(d, g.color[j * C + k]);
      bool any_live = false;
      for (int r = 0; r < R; ++r) {
        const float fy = y_first + static_cast<float>(r);
        if (fy < gy0 || fy > gy1 || hn::AllFalse(d, live[r])) {
          any_live = any_live || !hn::AllFalse(d, live[r]);
          continue;
        }
        const float dy = fy + 0.5f - g.my[j];
        if (dy * dy * g.row_k[j] > g.row_limit[j]) {
          any_live = true;
          continue;
        }
        const V sigma = hn::MulAdd(hn::Set(d, cb * dy), dx, hn::Add(ax, hn::Set(d, half_c * dy * dy)));
        const V alpha = hn::Min(max_alpha, hn::Mul(hn::Set(d, opacity), ExpNonPositive(d, hn::Neg(sigma))));
        M m = hn::And(hn::And(live[r], in_box), hn::And(hn::Ge(sigma, zero), hn::Ge(alpha, min_alpha)));
        if (!hn::AllFalse(d, m)) {
          const V next = hn::Mul(t[r], hn::Sub(one, alpha));
          const M stop = hn::And(m, hn::Lt(next, min_t));
          live[r] = hn::AndNot(stop, live[r]);
          m = hn::AndNot(stop, m);
          const V w = hn::IfThenElseZero(m, hn::Mul(alpha, t[r]));
          for (int k = 0; k < C; ++k) acc[r][k] = hn::MulAdd(w, color[k], acc[r][k]);
          t[r] = hn::IfThenElse(m, next, t[r]);
        }
        any_live = any_live || !hn::AllFalse(d, live[r]);
      }
      if (!any_live) break;
    }
    const int64_t n = std::min<int64_t>(N, x_end - xb);
    for (int r = 0; r < rows; ++r) {
      float* o = out + r * out_stride + (xb - x_begin) * C;
      for (int k = 0; k < C; ++k) {
        hn::Store(acc[r][k], d, lanes);
        for (int64_t i = 0; i < n; ++i) o[i * C + k] = lanes[i];
      }
      hn::Store(t[r], d, lanes);
      for (int64_t i = 0; i < n; ++i) t_out[r * t_stride + xb - x_begin + i] = lanes[i];
    }
  }
}

void SplatRows(const SplatTile& g, int64_t y_begin, int64_t rows, int64_t x_begin, int64_t x_end, float* out, int64_t out_stride, float* t,
               int64_t t_stride) {
  switch (g.channels) {
    case 1: return SplatRowsC<1>(g, y_begin, rows, x_begin, x_end, out, out_stride, t, t_stride);
    case 2: return SplatRowsC<2>(g, y_begin, rows, x_begin, x_end, out, out_stride, t, t_stride);
    case 3: return SplatRowsC<3>(g, y_begin, rows, x_begin, x_end, out, out_stride, t, t_stride);
    default: return SplatRowsC<4>(g, y_begin, rows, x_begin, x_end, out, out_stride, t, t_stride);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace rlx::backends::cpu::simd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace rlx::backends::cpu::simd {

HWY_EXPORT(ScaleBiasMax);
HWY_EXPORT(ExpShiftedSum);
HWY_EXPORT(Scale);
HWY_EXPORT(ScaleToBf16);
HWY_EXPORT(QuantizeI8);
HWY_EXPORT(AbsMax);
HWY_EXPORT(Extreme);
HWY_EXPORT(FirstEqual);
HWY_EXPORT(CopyRows);
HWY_EXPORT(CopyRowsBf16);
HWY_EXPORT(DotRows);
HWY_EXPORT(WeightedRows);
HWY_EXPORT(TargetName);
HWY_EXPORT(SplatRows);

float scale_bias_max(float* x, int64_t n, float scale, const float* bias) { return HWY_DYNAMIC_DISPATCH(ScaleBiasMax)(x, n, scale, bias); }
float exp_shifted_sum(float* x, int64_t n, float shift) { return HWY_DYNAMIC_DISPATCH(ExpShiftedSum)(x, n, shift); }
void scale(float* x, int64_t n, float s) { HWY_DYNAMIC_DISPATCH(Scale)(x, n, s); }
void scale_to_bf16(const float* x, int64_t n, float s, uint16_t* out) { HWY_DYNAMIC_DISPATCH(ScaleToBf16)(x, n, s, out); }
void quantize_i8(const float* x, int64_t n, float s, float zp, int8_t* out) { HWY_DYNAMIC_DISPATCH(QuantizeI8)(x, n, s, zp, out); }
float abs_max(const float* x, int64_t n) { return HWY_DYNAMIC_DISPATCH(AbsMax)(x, n); }
float extreme(const float* x, int64_t n, bool is_max) { return HWY_DYNAMIC_DISPATCH(Extreme)(x, n, is_max); }
int64_t first_equal(const float* x, int64_t n, float v) { return HWY_DYNAMIC_DISPATCH(FirstEqual)(x, n, v); }
void copy_rows(const float* src, int64_t rows, int64_t ld_src, int64_t cols, float* dst, int64_t ld_dst) {
  HWY_DYNAMIC_DISPATCH(CopyRows)(src, rows, ld_src, cols, dst, ld_dst);
}
void copy_rows_bf16(const float* src, int64_t rows, int64_t ld_src, int64_t cols, uint16_t* dst, int64_t ld_dst) {
  HWY_DYNAMIC_DISPATCH(CopyRowsBf16)(src, rows, ld_src, cols, dst, ld_dst);
}
void dot_rows(const float* a, int64_t rows, int64_t lda, const float* x, int64_t cols, float* out) {
  HWY_DYNAMIC_DISPATCH(DotRows)(a, rows, lda, x, cols, out);
}
void weighted_rows(const float* p, const float* a, int64_t rows, int64_t lda, int64_t cols, float* y) {
  HWY_DYNAMIC_DISPATCH(WeightedRows)(p, a, rows, lda, cols, y);
}
const char* target_name() { return HWY_DYNAMIC_DISPATCH(TargetName)(); }
void splat_rows(const SplatTile& tile, int64_t y_begin, int64_t rows, int64_t x_begin, int64_t x_end, float* out, int64_t out_stride, float* t,
                int64_t t_stride) {
  HWY_DYNAMIC_DISPATCH(SplatRows)(tile, y_begin, rows, x_begin, x_end, out, out_stride, t, t_stride);
}

}  // namespace rlx::backends::cpu::simd
#endif
