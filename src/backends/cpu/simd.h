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
// A strided block of `rows` × `cols`: dst[r·ld_dst + c] = src[r·ld_src + c] (as f32, or rounded
// to bf16). One call per block: small rows do not pay a call each.
void copy_rows(const float* src, int64_t rows, int64_t ld_src, int64_t cols, float* dst, int64_t ld_dst);
void copy_rows_bf16(const float* src, int64_t rows, int64_t ld_src, int64_t cols, uint16_t* dst, int64_t ld_dst);
// out[r] = Σ_c a[r·lda + c]·x[c] for r < rows: one query against many keys (decode attention).
void dot_rows(const float* a, int64_t rows, int64_t lda, const float* x, int64_t cols, float* out);
// y[c] = Σ_r p[r]·a[r·lda + c] (y overwritten; rows with p[r] = 0 are skipped, never read).
void weighted_rows(const float* p, const float* a, int64_t rows, int64_t lda, int64_t cols, float* y);
// Which target the dispatcher picked ("AVX3", "AVX2", …), for `rlx devices` and logs.
const char* target_name();

}  // namespace rlx::backends::cpu::simd
