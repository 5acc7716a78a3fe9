// Row kernels written once with Highway and compiled for every x86 target it knows (AVX2,
// AVX-512, …); each call runs the best one this CPU supports (runtime dispatch). The math is
// vmath.h's, lane for lane, so results do not depend on which target ran (up to the order of
// the sums).
#pragma once
#include <cstdint>

namespace rlx::backends::cpu::simd {

// x[i] = x[i]·scale (+ bias[i] when bias); returns max x[i] (−inf for n = 0).
float scale_bias_max(float* x, int64_t n, float scale, const float* bias);
// x[i] = exp(x[i] − shift); returns Σ x[i].
float exp_shifted_sum(float* x, int64_t n, float shift);
// x[i] *= s.
void scale(float* x, int64_t n, float s);
// out[i] = bf16(x[i]·s), rounded to nearest even (NaN stays NaN).
void scale_to_bf16(const float* x, int64_t n, float s, uint16_t* out);
// out[i] = clamp(round_half_even(x[i] / s) + zp, −128, 127) as int8; NaN → 0 (quantize_linear).
void quantize_i8(const float* x, int64_t n, float s, float zp, int8_t* out);
// max |x[i]| (0 for n = 0; NaN when any x[i] is NaN, as reduce max).
float abs_max(const float* x, int64_t n);
// max x[i] (is_max) or min x[i] of n ≥ 1 values; NaN when any x[i] is NaN, as reduce max/min.
float extreme(const float* x, int64_t n, bool is_max);
// The first i with x[i] == v (x[i] NaN when v is NaN); n when there is none.
int64_t first_equal(const float* x, int64_t n, float v);
// A strided block of `rows` × `cols`: dst[r·ld_dst + c] = src[r·ld_src + c] (as f32, or rounded
// to bf16). One call per block: small rows do not pay a call each.
void copy_rows(const float* src, int64_t rows, int64_t ld_src, int64_t cols, float* dst, int64_t ld_dst);
void copy_rows_bf16(const float* src, int64_t rows, int64_t ld_src, int64_t cols, uint16_t* dst, int64_t ld_dst);
// out[r] = Σ_c a[r·lda + c]·x[c] for r < rows: one query against many keys (decode attention).
void dot_rows(const float* a, int64_t rows, int64_t lda, const float* x, int64_t cols, float* out);
// y[c] = Σ_r p[r]·a[r·lda + c] (y overwritten; rows with p[r] = 0 are skipped, never read).
void weighted_rows(const float* p, const float* a, int64_t rows, int64_t lda, int64_t cols, float* y);
// The Gaussians of one splatting tile, nearest first, as columns (cpu/splat.cpp packs them);
// x0 … y1 are each one's pixel box (inclusive, as floats), color is [count, channels]. row_k and
// row_limit let a row be skipped whole: along a row at height dy from the mean, the exponent is at
// least dy²·row_k (= dy²·det/(2a)), and a row whose least exponent exceeds row_limit (ln(255·o)
// plus a margin for rounding) has every α below 1/255.
struct SplatTile {
  int64_t count = 0, channels = 0;
  const float *mx, *my, *ca, *cb, *cc, *opacity, *x0, *x1, *y0, *y1, *row_k, *row_limit, *color;
};
// Composites pixels x_begin ≤ x < x_end of rows y_begin … y_begin + rows − 1 (rows ≤ 4; centres
// x + ½, y + ½) front to back by splat_rasterize's rules: out[r·out_stride + (x − x_begin)·channels
// + k] = Σ α·T·c_k and t[r·t_stride + x − x_begin] = the final transmittance. channels ≤ 4.
void splat_rows(const SplatTile& tile, int64_t y_begin, int64_t rows, int64_t x_begin, int64_t x_end, float* out, int64_t out_stride, float* t,
                int64_t t_stride);
// Which target the dispatcher picked ("AVX3", "AVX2", …), for `rlx devices` and logs.
const char* target_name();

}  // namespace rlx::backends::cpu::simd
