#include "codegen/dialect_c.h"

#include "util/strings.h"

namespace rlx::codegen {

std::string CDialect::call(Fn f, ValueClass, const std::vector<std::string>& a) const {
  auto u = [](const std::string& x) { return cat("(unsigned long long)(", x, ")"); };
  switch (f) {
    case Fn::abs: return cat("fabsf(", a[0], ")");
    case Fn::fmod: return cat("fmodf(", a[0], ", ", a[1], ")");
    case Fn::pow: return cat("powf(", a[0], ", ", a[1], ")");
    case Fn::wrap_add: return cat("(long long)(", u(a[0]), " + ", u(a[1]), ")");
    case Fn::wrap_sub: return cat("(long long)(", u(a[0]), " - ", u(a[1]), ")");
    case Fn::wrap_mul: return cat("(long long)(", u(a[0]), " * ", u(a[1]), ")");
    case Fn::quot: return cat("(", a[0], " / ", a[1], ")");
    case Fn::rem: return cat("(", a[0], " % ", a[1], ")");
    case Fn::ipow: return cat("rlx_ipow(", a[0], ", ", a[1], ")");
    default: return cat(fn_name(f), "f(", a[0], ")");  // expf, log1pf, rintf (half to even), …
  }
}

std::string CDialect::prelude() const {
  // scalar.h's ipow_wrapping, spelled in C
  return cat(qualifier_,
             " long long rlx_ipow(long long a, long long e) {\n"
             "  if (e < 0) return a == 1 ? 1 : a == -1 ? ((e % 2) ? -1 : 1) : 0;\n"
             "  unsigned long long r = 1, b = (unsigned long long)a;\n"
             "  for (unsigned long long k = (unsigned long long)e; k; k >>= 1) {\n"
             "    if (k & 1) r *= b;\n"
             "    b *= b;\n"
             "  }\n"
             "  return (long long)r;\n"
             "}\n");
}

const Dialect& c99() {
  static const CDialect d("c99", "static inline");
  return d;
}

const Dialect& cuda_c() {
  static const CDialect d("cuda", "__device__ __forceinline__");
  return d;
}

}  // namespace rlx::codegen
