// dequant_matmul: y[m, n] = Σ_k x[m, k] · W[n, k] with W kept packed (ggml blocks, f16, bf16).
// Few rows of x (decoding): every weight row is decoded on the fly, 16 values at a time into
// AVX-512 registers, and multiplied into up to four rows of x at once; rows of W split across
// threads and are prefetched ahead, so decode runs at memory bandwidth. Many rows (prefill):
// tiles of W are decoded once and multiplied by a GEMM: oneDNN's bf16 matmul (AMX) when x is
// bf16 (the graph asked for bf16 products) and the CPU has bf16 units, OpenBLAS f32 otherwise.
// Types without an AVX-512 decoder (and machines without AVX-512) decode blocks with the shared
// ggml decoders.
#include <cblas.h>
#include <omp.h>
// GCC 12's AVX-512 intrinsics build their "undefined" vectors by self-initialization, which
// -Wuninitialized flags in every caller (GCC PR 105593).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <cstring>

#include "backends/cpu/block_decoders.h"
#include "backends/cpu/kernels.h"
#include "backends/cpu/onednn_matmul.h"
#include "backends/cpu/q4_k_scales.h"
#include "backends/cpu/quant_q8.h"
#include "backends/cpu/quant_q8_r16.h"
#include "backends/cpu/quant_rows.h"
#include "util/quant_blocks.h"

namespace rlx::backends::cpu {

namespace {

using ir::Op;
using quant::BlockType;

bool has_avx512() {
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512dq");
  }();
  return yes;
}

// Rounds to the nearest bf16 (kept in f32 lanes): weights multiplied by bf16 activations.
RLX_AVX512 inline __m512 round_bf16(__m512 v) {
  __m512i u = _mm512_castps_si512(v);
  __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
  u = _mm512_add_epi32(u, _mm512_add_epi32(_mm512_set1_epi32(0x7fff), lsb));
  return _mm512_castsi512_ps(_mm512_and_si512(u, _mm512_set1_epi32(static_cast<int>(0xffff0000u))));
}

// Rows stream from memory: each kernel asks for the bytes 4 KiB ahead into L2 (the hardware
// prefetcher alone lags; measured on the 2-core dev machine, bf16 rows: L1 at 2 KiB 21.8 GB/s,
// L2 at 4 KiB 25.6, L2 at 16 KiB 23.0).
constexpr int kPrefetchAhead = 4096;

// out[m] = Σ_k w[k] · x[m·ldx + k] for one packed row of `nblk` blocks and M rows of x.
// Four independent FMA chains in flight whatever M is: blocks of one chunk (f16, bf16) are
// taken U at a time, each into its own accumulator (one chain would cap a core at one FMA
// per latency, below the memory bandwidth).
// U consecutive blocks of a row into the accumulators (see dot_row).
template <class D, int M, bool RoundW, int NA, int U>
RLX_AVX512 inline void dot_blocks(const uint8_t* w, const float* x, int64_t ldx, __m512 (&acc)[M][NA]) {
  constexpr int kChunks = D::kElems / 16;
  for (int u = 0; u < U; ++u) {
    auto s = D::prep(w + u * D::kBytes);
    for (int c = 0; c < kChunks; ++c) {
      __m512 v = D::chunk(w + u * D::kBytes, s, c);
      if constexpr (RoundW) v = round_bf16(v);
      for (int m = 0; m < M; ++m) {
        __m512& a = acc[m][(u * kChunks + c) % NA];
        a = _mm512_fmadd_ps(v, _mm512_loadu_ps(x + m * ldx + u * D::kElems + 16 * c), a);
      }
    }
  }
}

template <class D, int M, bool RoundW>
RLX_AVX512 void dot_row(const uint8_t* w, int64_t nblk, const float* x, int64_t ldx, float* out) {
  constexpr int NA = M >= 4 ? 1 : 4 / M;
  constexpr int kChunks = D::kElems / 16;
  constexpr int U = NA > kChunks ? NA / kChunks : 1;
  __m512 acc[M][NA];
  for (int m = 0; m < M; ++m)
    for (int a = 0; a < NA; ++a) acc[m][a] = _mm512_setzero_ps();
  int64_t b = 0;
  for (; b + U <= nblk; b += U, w += U * D::kBytes, x += U * D::kElems) {
    for (int p = 0; p < U * D::kBytes; p += 64) _mm_prefetch(reinterpret_cast<const char*>(w) + kPrefetchAhead + p, _MM_HINT_T1);
    dot_blocks<D, M, RoundW, NA, U>(w, x, ldx, acc);
  }
  for (; b < nblk; ++b, w += D::kBytes, x += D::kElems) dot_blocks<D, M, RoundW, NA, 1>(w, x, ldx, acc);
  for (int m = 0; m < M; ++m) {
    __m512 t = acc[m][0];
    for (int a = 1; a < NA; ++a) t = _mm512_add_ps(t, acc[m][a]);
    out[m] = _mm512_reduce_add_ps(t);
  }
}

template <class D>
RLX_AVX512 void decode_row(const uint8_t* w, int64_t nblk, float* y) {
  constexpr int kChunks = D::kElems / 16;
  for (int64_t b = 0; b < nblk; ++b, w += D::kBytes, y += D::kElems) {
    auto s = D::prep(w);
    for (int c = 0; c < kChunks; ++c) _mm512_storeu_ps(y + 16 * c, D::chunk(w, s, c));
  }
}

// Sums of x over each run of 16 (and 32) values: the K-quants' offsets (Q4_K's mins, Q6_K's
// -32) then cost one vector FMA per super-block instead of one per 16 values.
struct XSums {
  const float* s16 = nullptr;  // [M][k / 16]
  const float* s32 = nullptr;  // [M][k / 32]
  int64_t ld16 = 0, ld32 = 0;
};

// The sums of M rows of x over groups of 16 and 32, into `buf` (the K-quant kernels' minimums'
// term); none when K is not a multiple of 32.
XSums x_sums(const float* x, int64_t M, int64_t K, std::vector<float>& buf) {
  XSums xs;
  if (K % 32 != 0) return xs;
  xs.ld16 = K / 16, xs.ld32 = K / 32;
  buf.resize(static_cast<size_t>(M * (xs.ld16 + xs.ld32)));
  float* s16 = buf.data();
  float* s32 = s16 + M * xs.ld16;
  for (int64_t i = 0; i < M * xs.ld16; ++i) {
    float acc = 0;
    for (int j = 0; j < 16; ++j) acc += x[16 * i + j];
    s16[i] = acc;
  }
  for (int64_t i = 0; i < M * xs.ld32; ++i) s32[i] = s16[2 * i] + s16[2 * i + 1];
  xs.s16 = s16, xs.s32 = s32;
  return xs;
}

// The sums of rows m0… of `xs`.
XSums rows_from(const XSums& xs, int64_t m0) {
  XSums r = xs;
  if (xs.s16) r.s16 += m0 * xs.ld16, r.s32 += m0 * xs.ld32;
  return r;
}

// Q4_K: Σ_g d·sc_g·Σ q·x − dmin·Σ_g mn_g·Σx_g over the 8 groups of 32 of each super-block.
template <int M>
RLX_AVX512 void dot_q4_k(const uint8_t* w, int64_t nblk, const float* x, int64_t ldx, const XSums& xs, float* out) {
  __m512 acc[M][2];
  __m256 macc[M];
  for (int m = 0; m < M; ++m) acc[m][0] = acc[m][1] = _mm512_setzero_ps(), macc[m] = _mm256_setzero_ps();
  const __m256i m4 = _mm256_set1_epi8(0x0f);
  for (int64_t b = 0; b < nblk; ++b, w += 144) {
    for (int p = 0; p < 144; p += 64) _mm_prefetch(reinterpret_cast<const char*>(w) + kPrefetchAhead + p, _MM_HINT_T1);
    DecQ4_K::State st = DecQ4_K::prep(w);  // sc = d·scale, mn = −dmin·min
    __m256 mn = _mm256_load_ps(st.mn);
    for (int m = 0; m < M; ++m) macc[m] = _mm256_fmadd_ps(mn, _mm256_loadu_ps(xs.s32 + m * xs.ld32 + 8 * b), macc[m]);
    const float* xb = x + 256 * b;
    for (int j = 0; j < 4; ++j) {
      __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 16 + 32 * j));
      __m256i lo = _mm256_and_si256(raw, m4), hi = _mm256_and_si256(_mm256_srli_epi16(raw, 4), m4);
      __m512 q0 = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm256_castsi256_si128(lo)));
      __m512 q1 = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm256_extracti128_si256(lo, 1)));
      __m512 q2 = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm256_castsi256_si128(hi)));
      __m512 q3 = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm256_extracti128_si256(hi, 1)));
      __m512 s_lo = _mm512_set1_ps(st.sc[2 * j]), s_hi = _mm512_set1_ps(st.sc[2 * j + 1]);
      for (int m = 0; m < M; ++m) {
        const float* xj = xb + m * ldx + 64 * j;
        __m512 a = _mm512_fmadd_ps(q1, _mm512_loadu_ps(xj + 16), _mm512_mul_ps(q0, _mm512_loadu_ps(xj)));
        __m512 c = _mm512_fmadd_ps(q3, _mm512_loadu_ps(xj + 48), _mm512_mul_ps(q2, _mm512_loadu_ps(xj + 32)));
        acc[m][0] = _mm512_fmadd_ps(s_lo, a, acc[m][0]);
        acc[m][1] = _mm512_fmadd_ps(s_hi, c, acc[m][1]);
      }
    }
  }
  for (int m = 0; m < M; ++m) {
    __m256 t = macc[m];
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(t), _mm256_extractf128_ps(t, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    h = _mm_add_ss(h, _mm_movehdup_ps(h));
    out[m] = _mm512_reduce_add_ps(_mm512_add_ps(acc[m][0], acc[m][1])) + _mm_cvtss_f32(h);
  }
}

// Q6_K: Σ_c d·sc_c·(Σ q·x − 32·Σx) over the 16 runs of 16 of each super-block.
template <int M>
RLX_AVX512 void dot_q6_k(const uint8_t* w, int64_t nblk, const float* x, int64_t ldx, const XSums& xs, float* out) {
  __m512 acc[M][2], macc[M];
  for (int m = 0; m < M; ++m) acc[m][0] = acc[m][1] = macc[m] = _mm512_setzero_ps();
  const __m256i m4 = _mm256_set1_epi8(0x0f), m2 = _mm256_set1_epi8(0x03), m30 = _mm256_set1_epi8(0x30);
  alignas(64) float sc[16];
  for (int64_t b = 0; b < nblk; ++b, w += 210) {
    for (int p = 0; p < 210; p += 64) _mm_prefetch(reinterpret_cast<const char*>(w) + kPrefetchAhead + p, _MM_HINT_T1);
    __m512 scv = _mm512_mul_ps(_mm512_set1_ps(f16_at(w + 208)),
                               _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + 192)))));
    _mm512_store_ps(sc, scv);
    __m512 off = _mm512_mul_ps(scv, _mm512_set1_ps(-32.0f));
    for (int m = 0; m < M; ++m) macc[m] = _mm512_fmadd_ps(off, _mm512_loadu_ps(xs.s16 + m * xs.ld16 + 16 * b), macc[m]);
    const float* xb = x + 256 * b;
    for (int h = 0; h < 2; ++h) {
      const uint8_t* ql = w + 64 * h;
      __m256i l0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql));
      __m256i l1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql + 32));
      __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 128 + 32 * h));
      __m256i q[4] = {
          _mm256_or_si256(_mm256_and_si256(l0, m4), _mm256_slli_epi16(_mm256_and_si256(qh, m2), 4)),
          _mm256_or_si256(_mm256_and_si256(l1, m4), _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2), m2), 4)),
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m4), _mm256_and_si256(qh, m30)),
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), m4), _mm256_and_si256(_mm256_srli_epi16(qh, 2), m30)),
      };
      for (int t = 0; t < 4; ++t) {
        __m512 qa = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm256_castsi256_si128(q[t])));
        __m512 qb = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm256_extracti128_si256(q[t], 1)));
        __m512 sa = _mm512_set1_ps(sc[8 * h + 2 * t]), sb = _mm512_set1_ps(sc[8 * h + 2 * t + 1]);
        for (int m = 0; m < M; ++m) {
          const float* xt = xb + m * ldx + 128 * h + 32 * t;
          acc[m][0] = _mm512_fmadd_ps(sa, _mm512_mul_ps(qa, _mm512_loadu_ps(xt)), acc[m][0]);
          acc[m][1] = _mm512_fmadd_ps(sb, _mm512_mul_ps(qb, _mm512_loadu_ps(xt + 16)), acc[m][1]);
        }
      }
    }
  }
  for (int m = 0; m < M; ++m) out[m] = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(acc[m][0], acc[m][1]), macc[m]));
}

// Rows decoded straight to bf16 (round to nearest even), the B operand of the AMX GEMM.
template <class D>
RLX_AVX512 void decode_row_bf16(const uint8_t* w, int64_t nblk, uint16_t* y) {
  constexpr int kChunks = D::kElems / 16;
  for (int64_t b = 0; b < nblk; ++b, w += D::kBytes, y += D::kElems) {
    auto s = D::prep(w);
    for (int c = 0; c < kChunks; ++c) {
      __m512i u = _mm512_srli_epi32(_mm512_castps_si512(round_bf16(D::chunk(w, s, c))), 16);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + 16 * c), _mm512_cvtepi32_epi16(u));
    }
  }
}

// ---- any type, any x86-64-v3 machine: the shared block decoders, then an AVX2 dot.

float dot_f32(const float* a, const float* b, int64_t n) {
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
    s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
  }
  alignas(32) float t[8];
  _mm256_store_ps(t, _mm256_add_ps(s0, s1));
  float s = t[0] + t[1] + t[2] + t[3] + t[4] + t[5] + t[6] + t[7];
  for (; i < n; ++i) s += a[i] * b[i];
  return s;
}

// Functions of one packed type: dot of one row with M ≤ 4 rows of x, and decode of rows.
struct RowFns {
  // round_w: the weights are rounded to bf16 first (x was bf16).
  void (*dot)(BlockType t, const uint8_t* w, int64_t k, const float* x, int64_t ldx, const XSums& xs, int M, float* out, bool round_w);
  void (*decode)(BlockType t, const uint8_t* w, int64_t k, float* y);
  void (*decode_bf16)(BlockType t, const uint8_t* w, int64_t k, uint16_t* y);
};

void generic_dot(BlockType t, const uint8_t* w, int64_t k, const float* x, int64_t ldx, const XSums&, int M, float* out, bool round_w) {
  int64_t be = quant::block_elems(t), bb = quant::block_bytes(t);
  int64_t per = std::max<int64_t>(1, 256 / be);  // decode ~256 values at a time into L1
  alignas(64) float buf[256];
  for (int m = 0; m < M; ++m) out[m] = 0;
  for (int64_t k0 = 0; k0 < k; k0 += per * be) {
    int64_t n = std::min(per * be, k - k0);
    quant::decode_blocks(t, w + k0 / be * bb, n / be, buf);
    if (round_w) round_to_bf16(buf, n);
    for (int m = 0; m < M; ++m) out[m] += dot_f32(buf, x + m * ldx + k0, n);
  }
}

void generic_decode(BlockType t, const uint8_t* w, int64_t k, float* y) { quant::decode_blocks(t, w, k / quant::block_elems(t), y); }

void generic_decode_bf16(BlockType t, const uint8_t* w, int64_t k, uint16_t* y) {
  thread_local std::vector<float> row;
  row.resize(static_cast<size_t>(k));
  generic_decode(t, w, k, row.data());
  for (int64_t i = 0; i < k; ++i) y[i] = f32_to_bf16(row[static_cast<size_t>(i)]);
}

template <class D, bool RoundW>
void fast_dot_m(const uint8_t* w, int64_t nblk, const float* x, int64_t ldx, int M, float* out) {
  switch (M) {
    case 1: return dot_row<D, 1, RoundW>(w, nblk, x, ldx, out);
    case 2: return dot_row<D, 2, RoundW>(w, nblk, x, ldx, out);
    case 3: return dot_row<D, 3, RoundW>(w, nblk, x, ldx, out);
    default: return dot_row<D, 4, RoundW>(w, nblk, x, ldx, out);
  }
}

template <class D>
void fast_dot(BlockType, const uint8_t* w, int64_t k, const float* x, int64_t ldx, const XSums&, int M, float* out, bool round_w) {
  if (round_w) return fast_dot_m<D, true>(w, k / D::kElems, x, ldx, M, out);
  fast_dot_m<D, false>(w, k / D::kElems, x, ldx, M, out);
}

// The K-quants' own dot products (f32 activations); bf16 activations take the chunk decoder
// path, which rounds every decoded weight to bf16 first.
template <class D, void (*F1)(const uint8_t*, int64_t, const float*, int64_t, const XSums&, float*),
          void (*F2)(const uint8_t*, int64_t, const float*, int64_t, const XSums&, float*),
          void (*F3)(const uint8_t*, int64_t, const float*, int64_t, const XSums&, float*),
          void (*F4)(const uint8_t*, int64_t, const float*, int64_t, const XSums&, float*)>
void kquant_dot(BlockType t, const uint8_t* w, int64_t k, const float* x, int64_t ldx, const XSums& xs, int M, float* out, bool round_w) {
  if (round_w) return fast_dot<D>(t, w, k, x, ldx, xs, M, out, true);
  int64_t nblk = k / 256;
  switch (M) {
    case 1: return F1(w, nblk, x, ldx, xs, out);
    case 2: return F2(w, nblk, x, ldx, xs, out);
    case 3: return F3(w, nblk, x, ldx, xs, out);
    default: return F4(w, nblk, x, ldx, xs, out);
  }
}

template <class D>
void fast_decode(BlockType, const uint8_t* w, int64_t k, float* y) { decode_row<D>(w, k / D::kElems, y); }

template <class D>
void fast_decode_bf16(BlockType, const uint8_t* w, int64_t k, uint16_t* y) { decode_row_bf16<D>(w, k / D::kElems, y); }

RowFns row_fns(BlockType t, int64_t k) {
  if (has_avx512()) {
    switch (t) {
      case BlockType::q8_0: return {fast_dot<DecQ8_0>, fast_decode<DecQ8_0>, fast_decode_bf16<DecQ8_0>};
      case BlockType::q4_0: return {fast_dot<DecQ4_0>, fast_decode<DecQ4_0>, fast_decode_bf16<DecQ4_0>};
      case BlockType::q4_1: return {fast_dot<DecQ4_1>, fast_decode<DecQ4_1>, fast_decode_bf16<DecQ4_1>};
      case BlockType::q5_0: return {fast_dot<DecQ5_0>, fast_decode<DecQ5_0>, fast_decode_bf16<DecQ5_0>};
      case BlockType::q5_1: return {fast_dot<DecQ5_1>, fast_decode<DecQ5_1>, fast_decode_bf16<DecQ5_1>};
      case BlockType::q2_k: return {fast_dot<DecQ2_K>, fast_decode<DecQ2_K>, fast_decode_bf16<DecQ2_K>};
      case BlockType::q3_k: return {fast_dot<DecQ3_K>, fast_decode<DecQ3_K>, fast_decode_bf16<DecQ3_K>};
      case BlockType::q5_k: return {fast_dot<DecQ5_K>, fast_decode<DecQ5_K>, fast_decode_bf16<DecQ5_K>};
      case BlockType::iq4_nl: return {fast_dot<DecIQ4_NL>, fast_decode<DecIQ4_NL>, fast_decode_bf16<DecIQ4_NL>};
      case BlockType::iq4_xs: return {fast_dot<DecIQ4_XS>, fast_decode<DecIQ4_XS>, fast_decode_bf16<DecIQ4_XS>};
      case BlockType::q4_k:
        return {kquant_dot<DecQ4_K, dot_q4_k<1>, dot_q4_k<2>, dot_q4_k<3>, dot_q4_k<4>>, fast_decode<DecQ4_K>, fast_decode_bf16<DecQ4_K>};
      case BlockType::q6_k:
        return {kquant_dot<DecQ6_K, dot_q6_k<1>, dot_q6_k<2>, dot_q6_k<3>, dot_q6_k<4>>, fast_decode<DecQ6_K>, fast_decode_bf16<DecQ6_K>};
      case BlockType::f16:
        if (k % 16 == 0) return {fast_dot<DecF16>, fast_decode<DecF16>, fast_decode_bf16<DecF16>};
        break;
      case BlockType::bf16:
        if (k % 16 == 0) return {fast_dot<DecBF16>, fast_decode<DecBF16>, fast_decode_bf16<DecBF16>};
        break;
      default: break;
    }
  }
  return {generic_dot, generic_decode, generic_decode_bf16};
}

// Rows of x at which decoding tiles of W for a GEMM beats decoding per dot product.
constexpr int64_t kGemmRows = 16;
constexpr int64_t kTileRows = 256;
// f32 tiles: a quarter of a thread's share of N, 64 to 256 rows — enough tiles to balance the
// threads where N is a few hundred, few enough that x is not repacked for every narrow tile
constexpr int64_t kF32TileRows = 64;
constexpr int64_t kWholeDecodeRows = 256;

bool has_amx() {
  static const bool yes = onednn_available() && dnnl::get_effective_cpu_isa() >= dnnl::cpu_isa::avx512_core_amx;
  return yes;
}

bool has_bf16_gemm() {
  static const bool yes = onednn_available() && dnnl::get_effective_cpu_isa() >= dnnl::cpu_isa::avx512_core_bf16;
  return yes;
}

// Products of x[M, K] with one decoded tile W[nt, K] (both bf16, or both f32), f32 results
// written into columns [n0, n0 + nt) of y[M, N]: one oneDNN primitive per tile width, run
// single-threaded inside each pool thread with its own scratchpad.
struct TileGemm {
  struct Prim {
    dnnl::matmul prim;
    dnnl::memory::desc a, b, c, scratch;
  };
  std::vector<Prim> prims;  // [0]: full tiles, [1]: the last, narrower one (if any)
  int64_t M = 0, K = 0, N = 0, tile = kTileRows;

  TileGemm(int64_t m, int64_t k, int64_t n, dnnl::memory::data_type operands, int64_t tile_rows = kTileRows) : M(m), K(k), N(n), tile(tile_rows) {
    using dt = dnnl::memory::data_type;
    for (int64_t nt : {std::min(tile, N), N % tile}) {
      if (nt == 0 || (!prims.empty() && N <= tile)) break;
      Prim p;
      p.a = dnnl::memory::desc({M, K}, operands, dnnl::memory::dims{K, 1});
      p.b = dnnl::memory::desc({K, nt}, operands, dnnl::memory::dims{1, K});
      p.c = dnnl::memory::desc({M, nt}, dt::f32, dnnl::memory::dims{N, 1});
      dnnl::primitive_attr attr;
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(p.a, p.b, p.c), attr, onednn_engine());
      p.prim = dnnl::matmul(pd);
      p.scratch = pd.scratchpad_desc();
      prims.push_back(std::move(p));
    }
  }

  void run(const void* x, const void* w_tile, int64_t nt, float* y_cols) const {
    omp_set_num_threads(1);  // oneDNN's OpenMP stays single-threaded inside our pool threads
    const Prim& p = nt == std::min(tile, N) ? prims[0] : prims.back();
    thread_local dnnl::stream stream(onednn_engine());
    thread_local std::vector<uint8_t> scratch;
    if (scratch.size() < p.scratch.get_size()) scratch.resize(p.scratch.get_size());
    dnnl::engine& e = onednn_engine();
    p.prim.execute(stream, {{DNNL_ARG_SRC, dnnl::memory(p.a, e, const_cast<void*>(x))},
                            {DNNL_ARG_WEIGHTS, dnnl::memory(p.b, e, const_cast<void*>(w_tile))},
                            {DNNL_ARG_DST, dnnl::memory(p.c, e, y_cols)},
                            {DNNL_ARG_SCRATCHPAD, dnnl::memory(p.scratch, e, scratch.data())}});
  }
};

HostKernel make_dequant_matmul(const ir::Node& node, const ir::Graph& lir) {
  BlockType t = *quant::block_type_from_name(node.attrs.s("type"));
  int64_t N = node.attrs.i("n"), K = node.attrs.i("k");
  int64_t rb = *quant::row_bytes(t, K);
  RowFns fns = row_fns(t, K);
  bool half_x = lir.type(node.inputs[0]).dtype == DType::bf16;
  bool half_out = lir.type(node.outputs[0]).dtype == DType::bf16;
  // Shapes are static in the LIR: bf16 activations get an AMX GEMM plan for this many rows.
  int64_t rows = shape_numel(lir.type(node.inputs[0]).shape).value() / K;
  // act=q8: x rounded to 8-bit blocks; few rows of f32 x take the integer kernel where the type
  // has one, everything else multiplies the rounded x as f32 (same values, same definition).
  bool act_q8 = node.attrs.has("act") && node.attrs.s("act") == "q8";
  q8::DotFn q8dot = act_q8 && !half_x ? q8::dot_fn(t) : nullptr;
  // A constant weight of a type with a repacked layout (quant_q8_r16.h: the 32-value types and
  // the K-quants) meets 8-bit x there, at every M: one arithmetic for decode, batched decode and prefill.
  std::shared_ptr<const q8::Repacked16> repacked;
  if (act_q8 && !half_x && q8::repacked_applies(t, N, K)) {
    const ir::Node* p = lir.producer(node.inputs[1]);
    if (p && p->op == ir::Op::constant) {
      const Tensor& value = p->attrs.tensor("value");
      if (value.nbytes() == static_cast<size_t>(N * rb)) repacked = q8::repack(t, static_cast<const uint8_t*>(value.data()), N, K);
    }
  }
  std::shared_ptr<TileGemm> bf16_gemm, f32_gemm;
  if (half_x && !act_q8 && rows >= kGemmRows && has_bf16_gemm() && has_amx())
    bf16_gemm = std::make_shared<TileGemm>(rows, K, N, dnnl::memory::data_type::bf16);
  // f32 rows (weight-only quantized models, f32-activation prefill): oneDNN's f32 GEMM on the
  // decoded tile, single-threaded in each pool thread (OpenBLAS's below, where oneDNN is absent);
  // from kWholeDecodeRows rows the whole matrix is decoded into a scratch first and multiplied
  // by one threaded oneDNN product — the decode is then a small part of the work, and the
  // weights still stay packed between calls.
  HostKernel whole;
  if (!half_x && !half_out && !act_q8 && rows >= kWholeDecodeRows && onednn_available()) {
    MatmulShape ms;
    ms.M = rows, ms.K = K, ms.N = N, ms.b_nk = true;  // B as decoded: [N, K] rows
    if (onednn_matmul_buildable(ms)) whole = make_onednn_matmul(ms, nullptr);
  }
  if (!bf16_gemm && !act_q8 && rows >= kGemmRows && !whole && onednn_available())
    f32_gemm = std::make_shared<TileGemm>(rows, K, N, dnnl::memory::data_type::f32,
                                          std::clamp<int64_t>(N / (4 * num_threads()) / 32 * 32, kF32TileRows, kTileRows));
  return [=](const KernelArgs& a) {
    const auto* w = static_cast<const uint8_t*>(a.in[1].data);
    int64_t M = a.in[0].numel / K;
    // bf16 activations are widened to f32 for the f32 paths; a bf16 result is narrowed at the end.
    thread_local std::vector<float> xs, ys;
    const float* x = a.in[0].as<float>();
    float* y = a.out[0].as<float>();
    bool gemm16 = bf16_gemm && M == bf16_gemm->M;
    if (half_x && !gemm16) {
      xs.resize(static_cast<size_t>(M * K));
      const auto* xb = a.in[0].as<uint16_t>();
      for (int64_t i = 0; i < M * K; ++i) xs[static_cast<size_t>(i)] = bf16_to_f32(xb[i]);
      x = xs.data();
    }
    if (half_out) {
      ys.resize(static_cast<size_t>(M * N));
      y = ys.data();
    }
    q8::Rows xr;
    bool integer = false;
    if (repacked) {
      thread_local std::vector<int8_t> rq;
      thread_local std::vector<float> rd, rs;
      rq.resize(static_cast<size_t>(M * K));
      rd.resize(static_cast<size_t>(M * K / 32));
      rs.resize(static_cast<size_t>(M * K / 32));
      q8::quantize_rows(x, M, K, rq.data(), rd.data(), rs.data(), nullptr);
      q8::matmul_repacked(*repacked, rq.data(), rd.data(), rs.data(), M, y);
    } else if (act_q8) {
      thread_local std::vector<int8_t> xq;
      thread_local std::vector<float> xd, xdeq;
      integer = q8dot && M < kGemmRows;
      int64_t nb = M * K / 32;
      xq.resize(static_cast<size_t>(M * K));
      xd.resize(static_cast<size_t>(2 * nb));
      if (!integer) xdeq.resize(static_cast<size_t>(M * K));
      q8::quantize_rows(x, M, K, xq.data(), xd.data(), xd.data() + nb, integer ? nullptr : xdeq.data());
      xr = {xq.data(), xd.data(), xd.data() + nb, K, K / 32};
      if (integer) {
        thread_local q8::RowExtras extras;
        q8::prepare_rows(t, M, K, extras, xr);
      }
      if (!integer) x = xdeq.data();
    }
    if (whole && M == rows) {
      thread_local std::vector<float> wf;
      wf.resize(static_cast<size_t>(N * K));
      float* wd = wf.data();  // the pool's threads name their own thread_local: pass the pointer
      parallel_items(N, std::max<int64_t>(1, 65536 / K), [&](int64_t r) { fns.decode(t, w + r * rb, K, wd + r * K); });
      const std::vector<runtime::HostView> in = {a.in[0], runtime::HostView{wd, DType::f32, {N, K}, N * K}};
      whole(KernelArgs{a.node, in, a.out});
      return;
    }
    int64_t tiles = (N + kTileRows - 1) / kTileRows;
    int64_t tile_grain = std::max<int64_t>(1, tiles / num_threads());
    if (repacked) {
    } else if (M < kGemmRows) {
      thread_local std::vector<float> sums;
      XSums xs = integer ? XSums{} : x_sums(x, M, K, sums);
      // Rows are handed out ~64 KiB of weights at a time: a thread that gets less of the CPU
      // (a busy machine) takes fewer of them instead of holding everyone back.
      int64_t block = std::max<int64_t>(8, 65536 / std::max<int64_t>(1, rb));
      std::atomic<int64_t> next{0};
      rlx::parallel_for(N >= 2 * block ? num_threads() : 1, 1, [&](int64_t, int64_t) {
        float out[q8::kMaxRows];
        for (int64_t lo; (lo = next.fetch_add(block, std::memory_order_relaxed)) < N;) {
          int64_t hi = std::min(N, lo + block);
          for (int64_t n = lo; n < hi; ++n)
            for (int64_t m0 = 0; m0 < M; m0 += integer ? q8::kMaxRows : 4) {
              if (integer) {
                int mm = static_cast<int>(std::min<int64_t>(q8::kMaxRows, M - m0));
                q8dot(w + n * rb, K, xr.from(m0), mm, out);
                for (int m = 0; m < mm; ++m) y[(m0 + m) * N + n] = out[m];
                continue;
              }
              int mm = static_cast<int>(std::min<int64_t>(4, M - m0));
              fns.dot(t, w + n * rb, K, x + m0 * K, K, rows_from(xs, m0), mm, out, half_x);
              for (int m = 0; m < mm; ++m) y[(m0 + m) * N + n] = out[m];
            }
        }
      });
    } else if (gemm16) {
      const auto* xb = a.in[0].as<uint16_t>();
      rlx::parallel_for(tiles, tile_grain, [&](int64_t lo, int64_t hi) {
        thread_local std::vector<uint16_t> tile16;
        tile16.resize(static_cast<size_t>(kTileRows * K));
        for (int64_t ti = lo; ti < hi; ++ti) {
          int64_t n0 = ti * kTileRows, nt = std::min(kTileRows, N - n0);
          for (int64_t r = 0; r < nt; ++r) fns.decode_bf16(t, w + (n0 + r) * rb, K, tile16.data() + r * K);
          bf16_gemm->run(xb, tile16.data(), nt, y + n0);
        }
      });
    } else {
      const bool f32_tiles = f32_gemm && M == f32_gemm->M;
      const int64_t width = f32_tiles ? f32_gemm->tile : kTileRows, count = (N + width - 1) / width;
      rlx::parallel_for(count, std::max<int64_t>(1, count / num_threads()), [&](int64_t lo, int64_t hi) {
        thread_local std::vector<float> tile;
        tile.resize(static_cast<size_t>(width * K));
        for (int64_t ti = lo; ti < hi; ++ti) {
          int64_t n0 = ti * width, nt = std::min(width, N - n0);
          for (int64_t r = 0; r < nt; ++r) fns.decode(t, w + (n0 + r) * rb, K, tile.data() + r * K);
          if (half_x) round_to_bf16(tile.data(), nt * K);
          if (f32_tiles) {
            f32_gemm->run(x, tile.data(), nt, y + n0);
            continue;
          }
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(M), static_cast<int>(nt), static_cast<int>(K), 1.0f, x,
                      static_cast<int>(K), tile.data(), static_cast<int>(K), 0.0f, y + n0, static_cast<int>(N));
        }
      });
    }
    if (half_out) {
      auto* yb = a.out[0].as<uint16_t>();
      for (int64_t i = 0; i < M * N; ++i) yb[i] = f32_to_bf16(ys[static_cast<size_t>(i)]);
    }
  };
}

// Variants: act (8-bit activations) only — register.cpp's allow-list keeps glu and norm_eps away.
bool claims_dequant_matmul(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs&) {
  return in.size() == 2 && (in[0].dtype == DType::f32 || in[0].dtype == DType::bf16) && (out[0].dtype == DType::f32 || out[0].dtype == DType::bf16);
}
// dequantize: rows of packed blocks → f32, split across threads.
HostKernel make_dequantize(const ir::Node& node, const ir::Graph&) {
  BlockType t = *quant::block_type_from_name(node.attrs.s("type"));
  int64_t K = node.attrs.dims("shape").back().value();
  int64_t rb = *quant::row_bytes(t, K);
  RowFns fns = row_fns(t, K);
  return [=](const KernelArgs& a) {
    const auto* w = static_cast<const uint8_t*>(a.in[0].data);
    float* y = a.out[0].as<float>();
    int64_t rows = a.out[0].numel / K;
    parallel_items(rows, std::max<int64_t>(1, 65536 / K), [&](int64_t r) { fns.decode(t, w + r * rb, K, y + r * K); });
  };
}

bool claims_dequantize(Op, const std::vector<ir::Type>&, const std::vector<ir::Type>&, const ir::Attrs&) { return true; }

}  // namespace

void packed_rows_decode_bf16(BlockType t, const uint8_t* w, int64_t rb, int64_t K, int64_t n0, int64_t count, uint16_t* out) {
  RowFns fns = row_fns(t, K);
  for (int64_t r = 0; r < count; ++r) fns.decode_bf16(t, w + (n0 + r) * rb, K, out + r * K);
}

bool cpu_has_bf16_gemm() { return has_bf16_gemm(); }
bool cpu_has_amx() { return has_amx(); }

void packed_rows_product(BlockType t, const uint8_t* w, int64_t rb, int64_t K, int64_t n0, int64_t count, const float* x, int64_t M, float* y,
                         int64_t ldy, bool round_w) {
  RowFns fns = row_fns(t, K);
  if (M >= kGemmRows) {
    thread_local std::vector<float> tile;
    for (int64_t r0 = 0; r0 < count; r0 += kTileRows) {
      int64_t nt = std::min(kTileRows, count - r0);
      tile.resize(static_cast<size_t>(nt * K));
      for (int64_t r = 0; r < nt; ++r) fns.decode(t, w + (n0 + r0 + r) * rb, K, tile.data() + r * K);
      if (round_w) round_to_bf16(tile.data(), nt * K);
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(M), static_cast<int>(nt), static_cast<int>(K), 1.0f, x,
                  static_cast<int>(K), tile.data(), static_cast<int>(K), 0.0f, y + r0, static_cast<int>(ldy));
    }
    return;
  }
  thread_local std::vector<float> sums;
  const XSums xs = x_sums(x, M, K, sums);
  float out[4];
  for (int64_t j = 0; j < count; ++j)
    for (int64_t m0 = 0; m0 < M; m0 += 4) {
      int mm = static_cast<int>(std::min<int64_t>(4, M - m0));
      fns.dot(t, w + (n0 + j) * rb, K, x + m0 * K, K, rows_from(xs, m0), mm, out, round_w);
      for (int m = 0; m < mm; ++m) y[(m0 + m) * ldy + j] = out[m];
    }
}

void register_quant(KernelTable& t) {
  t[static_cast<size_t>(Op::dequant_matmul)] = {claims_dequant_matmul, make_dequant_matmul};
  t[static_cast<size_t>(Op::dequantize)] = {claims_dequantize, make_dequantize};
}

}  // namespace rlx::backends::cpu
