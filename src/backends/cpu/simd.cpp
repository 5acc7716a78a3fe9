// Highway row kernels (see simd.h). This file is compiled once per target: foreach_target.h
// re-includes it with HWY_NAMESPACE set to N_AVX2, N_AVX3, …; HWY_EXPORT / HWY_DYNAMIC_DISPATCH
// pick the best compiled target the CPU supports on the first call.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/simd.cpp"
#include <hwy/foreach_target.h>  // must come before highway.h
#include <hwy/highway.h>

#include "backends/cpu/vmath.h"

HWY_BEFORE_NAMESPACE();
namespace rlx::backends::cpu::simd {
namespace HWY_NAMESPACE {

namespace hn = hwy::HWY_NAMESPACE;

// vm::exp, one vector at a time.
template <class D, class V>
HWY_INLINE V Exp(D d, V x) {
  const hn::RebindToSigned<D> di;
  V xc = hn::Min(hn::Max(x, hn::Set(d, -87.3f)), hn::Set(d, 88.7f));
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
  V scale = hn::BitCast(d, hn::ShiftLeft<23>(hn::Add(hn::ConvertTo(di, n), hn::Set(di, 127))));
  V y = hn::Mul(p, scale);
  y = hn::IfThenElse(hn::Gt(x, hn::Set(d, 88.72283f)), hn::Set(d, __builtin_inff()), y);
  y = hn::IfThenZeroElse(hn::Lt(x, hn::Set(d, -103.97208f)), y);
  return hn::IfThenElse(hn::Eq(x, x), y, x);  // NaN in, NaN out
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

const char* TargetName() { return hwy::TargetName(HWY_TARGET); }

}  // namespace HWY_NAMESPACE
}  // namespace rlx::backends::cpu::simd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace rlx::backends::cpu::simd {

HWY_EXPORT(ScaleBiasMax);
HWY_EXPORT(ExpShiftedSum);
HWY_EXPORT(Scale);
HWY_EXPORT(ScaleToBf16);
HWY_EXPORT(CopyRows);
HWY_EXPORT(CopyRowsBf16);
HWY_EXPORT(TargetName);

float scale_bias_max(float* x, int64_t n, float scale, const float* bias) { return HWY_DYNAMIC_DISPATCH(ScaleBiasMax)(x, n, scale, bias); }
float exp_shifted_sum(float* x, int64_t n, float shift) { return HWY_DYNAMIC_DISPATCH(ExpShiftedSum)(x, n, shift); }
void scale(float* x, int64_t n, float s) { HWY_DYNAMIC_DISPATCH(Scale)(x, n, s); }
void scale_to_bf16(const float* x, int64_t n, float s, uint16_t* out) { HWY_DYNAMIC_DISPATCH(ScaleToBf16)(x, n, s, out); }
void copy_rows(const float* src, int64_t rows, int64_t ld_src, int64_t cols, float* dst, int64_t ld_dst) {
  HWY_DYNAMIC_DISPATCH(CopyRows)(src, rows, ld_src, cols, dst, ld_dst);
}
void copy_rows_bf16(const float* src, int64_t rows, int64_t ld_src, int64_t cols, uint16_t* dst, int64_t ld_dst) {
  HWY_DYNAMIC_DISPATCH(CopyRowsBf16)(src, rows, ld_src, cols, dst, ld_dst);
}
const char* target_name() { return HWY_DYNAMIC_DISPATCH(TargetName)(); }

}  // namespace rlx::backends::cpu::simd
#endif
