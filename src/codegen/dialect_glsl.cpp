#include "codegen/dialect_glsl.h"

#include "util/strings.h"

namespace rlx::codegen {

std::string GlslDialect::call(Fn f, ValueClass, const std::vector<std::string>& a) const {
  switch (f) {
    case Fn::abs: return cat("abs(", a[0], ")");
    case Fn::rint: return cat("roundEven(", a[0], ")");  // half to even, as rintf
    case Fn::erf: return cat("rlx_erf(", a[0], ")");
    case Fn::sin: return cat("rlx_sin(", a[0], ")");
    case Fn::cos: return cat("rlx_cos(", a[0], ")");
    case Fn::expm1: return cat("rlx_expm1(", a[0], ")");
    case Fn::log1p: return cat("rlx_log1p(", a[0], ")");
    case Fn::pow: return cat("rlx_pow(", a[0], ", ", a[1], ")");
    case Fn::fmod: return cat("rlx_fmod(", a[0], ", ", a[1], ")");
    case Fn::wrap_add: return cat("(", a[0], " + ", a[1], ")");  // GLSL integers wrap
    case Fn::wrap_sub: return cat("(", a[0], " - ", a[1], ")");
    case Fn::wrap_mul: return cat("(", a[0], " * ", a[1], ")");
    case Fn::quot: return cat("(", a[0], " / ", a[1], ")");  // truncating (OpSDiv)
    case Fn::rem: return cat("rlx_rem(", a[0], ", ", a[1], ")");
    case Fn::ipow: return cat("rlx_ipow(", a[0], ", ", a[1], ")");
    default: return cat(fn_name(f), "(", a[0], ")");  // exp, log, sqrt, sin, cos, atan, tanh, floor, ceil
  }
}

std::string GlslDialect::literal(double v, ValueClass cls) const {
  if (cls == ValueClass::integer) return cat("int64_t(", static_cast<long long>(v), "l)");
  return Dialect::literal(v, cls);  // "1.5f"
}

std::string GlslDialect::is_nan(const std::string& a) const { return cat("isnan(", a, ")"); }

std::string GlslDialect::prelude() const {
  return R"(// sin and cos of arguments reduced to [−π, π] first (Cody–Waite, 2π in three parts): GLSL
// lets drivers approximate both only near 0 (NVIDIA's lose digits on RoPE's large angles)
// (`precise`: a driver that reassociates would fold the three parts back into one inexact 2π)
float rlx_reduce_2pi(float x) {
  float k = roundEven(x * 0.15915494309189535);
  precise float r = x - k * 6.28125;
  r = r - k * 0.0019353071693331003;
  r = r - k * 1.0253131677018246e-11;
  return r;
}
// NaN as a constant: NVIDIA's GL compiler folds x − x and (a − a) / (a − a) to 0
float rlx_sin(float x) { return isinf(x) ? uintBitsToFloat(0x7fc00000u) : sin(rlx_reduce_2pi(x)); }
float rlx_cos(float x) { return isinf(x) ? uintBitsToFloat(0x7fc00000u) : cos(rlx_reduce_2pi(x)); }
// erf: Abramowitz–Stegun 7.1.26 refined (|error| < 1.2e-7), odd in x
float rlx_erf(float x) {
  float t = 1.0 / (1.0 + 0.5 * abs(x));
  float y = 1.0 - t * exp(-x * x - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 +
            t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))));
  return x >= 0.0 ? y : -y;
}
// Kahan's expm1 and log1p: exact near 0 without a series
float rlx_expm1(float x) {
  float u = exp(x);
  if (u == 1.0) return x;
  float um1 = u - 1.0;
  if (um1 == -1.0) return -1.0;
  return isinf(u) ? u : um1 * x / log(u);
}
float rlx_log1p(float x) {
  float u = 1.0 + x;
  return u == 1.0 ? x : (isinf(u) ? u : log(u) * x / (u - 1.0));
}
// C's powf for what GLSL leaves undefined: negative bases with integer exponents, zero bases
float rlx_pow(float a, float b) {
  if (b == 0.0) return 1.0;
  if (isnan(a) || isnan(b)) return a + b;
  if (a == 0.0) return b < 0.0 ? uintBitsToFloat(0x7f800000u) : 0.0;  // +inf
  if (a < 0.0) {
    if (b != floor(b)) return uintBitsToFloat(0x7fc00000u);  // NaN
    float r = pow(-a, b);
    return mod(b, 2.0) == 1.0 ? -r : r;
  }
  return pow(a, b);
}
// C's fmodf: the sign of a, |result| < |b|
float rlx_fmod(float a, float b) {
  if (b == 0.0 || isinf(a) || isnan(a) || isnan(b)) return uintBitsToFloat(0x7fc00000u);
  if (isinf(b)) return a;
  float r = abs(a) - abs(b) * trunc(abs(a) / abs(b));
  if (r >= abs(b)) r -= abs(b);
  if (r < 0.0) r += abs(b);
  return a < 0.0 ? -r : r;
}
int64_t rlx_rem(int64_t a, int64_t b) { return a - (a / b) * b; }
int64_t rlx_ipow(int64_t a, int64_t e) {
  if (e < 0) return a == 1l ? 1l : a == -1l ? ((e & 1l) != 0l ? -1l : 1l) : 0l;
  uint64_t r = 1ul, b = uint64_t(a);
  for (uint64_t k = uint64_t(e); k != 0ul; k >>= 1) {
    if ((k & 1ul) != 0ul) r *= b;
    b *= b;
  }
  return int64_t(r);
}
)";
}

const Dialect& glsl() {
  static const GlslDialect d;
  return d;
}

std::string GlslInt32Dialect::call(Fn f, ValueClass cls, const std::vector<std::string>& a) const {
  switch (f) {
    case Fn::wrap_add: return cat("rlx_cadd(", a[0], ", ", a[1], ")");
    case Fn::wrap_sub: return cat("rlx_csub(", a[0], ", ", a[1], ")");
    case Fn::wrap_mul: return cat("rlx_cmul(", a[0], ", ", a[1], ")");
    case Fn::ipow: return cat("rlx_cipow(", a[0], ", ", a[1], ")");
    default: return GlslDialect::call(f, cls, a);
  }
}

std::string GlslInt32Dialect::prelude() const {
  // written with the 64-bit class's names, which the language's printer spells 32-bit; the
  // operations wrap (through the unsigned type) and the tests are the usual sign ones
  return GlslDialect::prelude() + R"(int64_t rlx_cadd(int64_t a, int64_t b) {
  int64_t r = int64_t(uint64_t(a) + uint64_t(b));
  if (((a ^ r) & (b ^ r)) < 0l) rlx_ovf = true;
  return r;
}
int64_t rlx_csub(int64_t a, int64_t b) {
  int64_t r = int64_t(uint64_t(a) - uint64_t(b));
  if (((a ^ b) & (a ^ r)) < 0l) rlx_ovf = true;
  return r;
}
int64_t rlx_cmul(int64_t a, int64_t b) {
  int64_t r = int64_t(uint64_t(a) * uint64_t(b));
  if (a == -1l) { if (b == (-2147483647l - 1l)) rlx_ovf = true; }
  else if (a != 0l && r / a != b) rlx_ovf = true;
  return r;
}
int64_t rlx_cipow(int64_t a, int64_t e) {
  if (e < 0l) return a == 1l ? 1l : a == -1l ? ((e & 1l) != 0l ? -1l : 1l) : 0l;
  int64_t r = 1l, b = a;
  for (int64_t k = e; k != 0l; k >>= 1) {
    if ((k & 1l) != 0l) r = rlx_cmul(r, b);
    if (k > 1l) b = rlx_cmul(b, b);
  }
  return r;
}
)";
}

const Dialect& glsl_int32() {
  static const GlslInt32Dialect d;
  return d;
}

}  // namespace rlx::codegen
