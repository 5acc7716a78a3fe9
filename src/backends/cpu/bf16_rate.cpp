#include "backends/cpu/bf16_rate.h"

#include <immintrin.h>

#include <algorithm>
#include <chrono>

#include "backends/cpu/quant_rows.h"
#include "rlx/error.h"
#include "util/flags.h"
#include "util/log.h"
#include "util/strings.h"

namespace rlx::backends::cpu {

namespace {

constexpr int kIterations = 4096;  // × 8 independent chains: ~40 µs a pass at 3 GHz

double seconds_since(std::chrono::steady_clock::time_point t) { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count(); }

// (not _mm512_reduce_add_ps: GCC 12's header warns of an uninitialized temporary in it)
__attribute__((target("avx512f"))) float lanes_sum(__m512 v) {
  alignas(64) float t[16];
  _mm512_store_ps(t, v);
  float s = 0;
  for (float x : t) s += x;
  return s;
}

// Eight independent accumulator chains (more than the FMA latency × ports), so the loop runs
// at the instruction's issue rate; the returned sum keeps the work.
__attribute__((target("avx512f"), noinline)) float fma_chains(int n) {
  __m512 a0 = _mm512_set1_ps(0.f), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
  const __m512 x = _mm512_set1_ps(0.999f), y = _mm512_set1_ps(1e-3f);
  for (int i = 0; i < n; ++i) {
    a0 = _mm512_fmadd_ps(a0, x, y), a1 = _mm512_fmadd_ps(a1, x, y), a2 = _mm512_fmadd_ps(a2, x, y), a3 = _mm512_fmadd_ps(a3, x, y);
    a4 = _mm512_fmadd_ps(a4, x, y), a5 = _mm512_fmadd_ps(a5, x, y), a6 = _mm512_fmadd_ps(a6, x, y), a7 = _mm512_fmadd_ps(a7, x, y);
  }
  return lanes_sum(_mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)), _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7))));
}

__attribute__((target("avx512f,avx512bf16"), noinline)) float dpbf16_chains(int n) {
  __m512 a0 = _mm512_set1_ps(0.f), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
  const __m512bh x = (__m512bh)_mm512_set1_epi16(0x3f80), y = (__m512bh)_mm512_set1_epi16(0x3a83);  // 1, ~1e-3
  for (int i = 0; i < n; ++i) {
    a0 = _mm512_dpbf16_ps(a0, x, y), a1 = _mm512_dpbf16_ps(a1, x, y), a2 = _mm512_dpbf16_ps(a2, x, y), a3 = _mm512_dpbf16_ps(a3, x, y);
    a4 = _mm512_dpbf16_ps(a4, x, y), a5 = _mm512_dpbf16_ps(a5, x, y), a6 = _mm512_dpbf16_ps(a6, x, y), a7 = _mm512_dpbf16_ps(a7, x, y);
  }
  return lanes_sum(_mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)), _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7))));
}

// Best of five passes, GFLOP/s (a multiply-add is two): 8 chains × 16 lanes × (1 FMA | 2 products).
template <class F>
double rate(F&& f, double flops_per_iteration) {
  double best = 1e30;
  volatile float sink = 0;
  for (int pass = 0; pass < 5; ++pass) {
    auto t = std::chrono::steady_clock::now();
    sink = sink + f(kIterations);
    best = std::min(best, seconds_since(t));
  }
  return flops_per_iteration * kIterations / best / 1e9;
}

}  // namespace

Bf16Rates bf16_rates() {
  static const Bf16Rates r = [] {
    Bf16Rates out;
    if (!__builtin_cpu_supports("avx512f")) return out;
    out.f32_fma = rate(fma_chains, 8 * 16 * 2);
    if (__builtin_cpu_supports("avx512bf16")) out.bf16_dot = rate(dpbf16_chains, 8 * 16 * 4);
    return out;
  }();
  return r;
}

bool bf16_products_native() {
  static const bool native = [] {
    const std::string& mode = flags().RLX_CPU_BF16_DOT;
    if (mode == "native") return true;
    if (mode == "widen") return false;
    if (mode != "auto") throw Error(ErrorKind::invalid_argument, cat("RLX_CPU_BF16_DOT: '", mode, "' is not one of auto, native, widen"));
    if (cpu_has_amx()) return true;
    const Bf16Rates r = bf16_rates();
    const bool yes = r.bf16_dot > 1.2 * r.f32_fma;  // bf16 only where it is clearly faster
    if (debug_at(1))
      log_line(cat("cpu: bf16 products ", yes ? "native" : "widened to f32", " (one core: vdpbf16ps ", static_cast<int>(r.bf16_dot), " GFLOP/s, f32 FMA ",
                   static_cast<int>(r.f32_fma), " GFLOP/s)"));
    return yes;
  }();
  return native;
}

}  // namespace rlx::backends::cpu
