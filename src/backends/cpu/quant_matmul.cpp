// dequant_matmul: y[m, n] = Σ_k x[m, k] · W[n, k] with W kept packed (ggml blocks, f16, bf16).
// Few rows of x (decoding): every weight row is decoded on the fly, 16 values at a time into
// AVX-512 registers, and multiplied into up to four rows of x at once; rows of W split across
// threads and are prefetched ahead, so decode runs at memory bandwidth. Many rows (prefill):
// tiles of W are decoded to f32 once and multiplied by a BLAS GEMM. Types without an AVX-512
// decoder (and machines without AVX-512) decode blocks with the shared ggml decoders.
#include <cblas.h>
// GCC 12's AVX-512 intrinsics build their "undefined" vectors by self-initialization, which
// -Wuninitialized flags in every caller (GCC PR 105593).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "backends/cpu/kernels.h"
#include "util/quant_blocks.h"

namespace rlx::backends::cpu {

namespace {

using ir::Op;
using quant::BlockType;

#define RLX_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))

bool has_avx512() {
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512dq");
  }();
  return yes;
}

inline float f16_at(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return _cvtsh_ss(h);
}

// ---- AVX-512 decoders: a block type's bytes → its values, 16 at a time (chunk c of a block).

struct DecQ8_0 {
  static constexpr int kElems = 32, kBytes = 34;
  struct State {
    __m512 d;
  };
  RLX_AVX512 static State prep(const uint8_t* b) { return {_mm512_set1_ps(f16_at(b))}; }
  RLX_AVX512 static __m512 chunk(const uint8_t* b, const State& s, int c) {
    __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 2 + 16 * c));
    return _mm512_mul_ps(s.d, _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q)));
  }
};

// Element j is the low nibble of qs[j], j + 16 the high one; values are nibble - 8.
struct DecQ4_0 {
  static constexpr int kElems = 32, kBytes = 18;
  struct State {
    __m512 d, off;
  };
  RLX_AVX512 static State prep(const uint8_t* b) {
    float d = f16_at(b);
    return {_mm512_set1_ps(d), _mm512_set1_ps(-8.0f * d)};
  }
  RLX_AVX512 static __m512 chunk(const uint8_t* b, const State& s, int c) {
    __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 2));
    if (c) raw = _mm_srli_epi16(raw, 4);
    __m128i q = _mm_and_si128(raw, _mm_set1_epi8(0x0f));
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(q)), s.d, s.off);
  }
};

// 8 groups of 32: group 2j is the low nibbles of qs[32j .. 32j+31], group 2j+1 the high ones;
// value = d·scale_g·q − dmin·min_g with 6-bit scales and mins packed in 12 bytes.
struct DecQ4_K {
  static constexpr int kElems = 256, kBytes = 144;
  struct State {
    alignas(64) float sc[8], mn[8];
  };
  RLX_AVX512 static State prep(const uint8_t* b) {
    uint32_t u[4];
    std::memcpy(u, b + 4, 12);
    const uint32_t k1 = 0x3f3f3f3f, k2 = 0x0f0f0f0f, k3 = 0x03030303;
    u[3] = ((u[2] >> 4) & k2) | (((u[1] >> 6) & k3) << 4);
    uint32_t lo = u[1] & k1;
    u[1] = (u[2] & k2) | (((u[0] >> 6) & k3) << 4);
    u[2] = lo;
    u[0] &= k1;  // bytes 0-7: scales, 8-15: mins
    __m256 sc = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(u))));
    __m256 mn = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(u + 2))));
    State s;
    _mm256_store_ps(s.sc, _mm256_mul_ps(sc, _mm256_set1_ps(f16_at(b))));
    _mm256_store_ps(s.mn, _mm256_mul_ps(mn, _mm256_set1_ps(-f16_at(b + 2))));
    return s;
  }
  RLX_AVX512 static __m512 chunk(const uint8_t* b, const State& s, int c) {
    int j = c >> 2, sub = c & 3, g = 2 * j + (sub >> 1);
    __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 16 + 32 * j + 16 * (sub & 1)));
    if (sub >> 1) raw = _mm_srli_epi16(raw, 4);
    __m128i q = _mm_and_si128(raw, _mm_set1_epi8(0x0f));
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(q)), _mm512_set1_ps(s.sc[g]), _mm512_set1_ps(s.mn[g]));
  }
};

// Two halves of 128; in half h, chunk c' (0-7) takes low (c' < 4) or high nibbles of
// ql[64h + 16(c'&1) + 32((c'>>1)&1)], top bits (qh[32h + 16(c'&1)] >> 2(c'>>1)) & 3, scale
// scales[8h + c']; value = d·scale·(q − 32).
struct DecQ6_K {
  static constexpr int kElems = 256, kBytes = 210;
  struct State {
    float d;
  };
  RLX_AVX512 static State prep(const uint8_t* b) { return {f16_at(b + 208)}; }
  RLX_AVX512 static __m512 chunk(const uint8_t* b, const State& s, int c) {
    int h = c >> 3, cc = c & 7, lh = cc & 1, t = cc >> 1;
    const uint8_t* ql = b + 64 * h + 16 * lh + 32 * (t & 1);
    const uint8_t* qh = b + 128 + 32 * h + 16 * lh;
    __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(ql));
    if (t >> 1) lo = _mm_srli_epi16(lo, 4);
    lo = _mm_and_si128(lo, _mm_set1_epi8(0x0f));
    __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qh));
    hi = _mm_and_si128(_mm_srl_epi16(hi, _mm_cvtsi32_si128(2 * t)), _mm_set1_epi8(0x03));
    __m128i q = _mm_or_si128(lo, _mm_slli_epi16(hi, 4));
    float scale = s.d * static_cast<float>(static_cast<int8_t>(b[192 + 8 * h + cc]));
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(q)), _mm512_set1_ps(scale), _mm512_set1_ps(-32.0f * scale));
  }
};

// f16 and bf16 rows, taken 16 values (32 bytes) at a time.
struct DecF16 {
  static constexpr int kElems = 16, kBytes = 32;
  struct State {};
  RLX_AVX512 static State prep(const uint8_t*) { return {}; }
  RLX_AVX512 static __m512 chunk(const uint8_t* b, const State&, int) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b)));
  }
};

struct DecBF16 {
  static constexpr int kElems = 16, kBytes = 32;
  struct State {};
  RLX_AVX512 static State prep(const uint8_t*) { return {}; }
  RLX_AVX512 static __m512 chunk(const uint8_t* b, const State&, int) {
    __m512i v = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b)));
    return _mm512_castsi512_ps(_mm512_slli_epi32(v, 16));
  }
};

// out[m] = Σ_k w[k] · x[m·ldx + k] for one packed row of `nblk` blocks and M rows of x.
// Four independent FMA chains in flight whatever M is.
template <class D, int M>
RLX_AVX512 void dot_row(const uint8_t* w, int64_t nblk, const float* x, int64_t ldx, float* out) {
  constexpr int NA = M >= 4 ? 1 : 4 / M;
  constexpr int kChunks = D::kElems / 16;
  __m512 acc[M][NA];
  for (int m = 0; m < M; ++m)
    for (int a = 0; a < NA; ++a) acc[m][a] = _mm512_setzero_ps();
  for (int64_t b = 0; b < nblk; ++b, w += D::kBytes, x += D::kElems) {
    // Rows stream from memory: fetch ~2 KiB ahead (the hardware prefetcher alone lags).
    for (int p = 0; p < D::kBytes; p += 64) _mm_prefetch(reinterpret_cast<const char*>(w) + 2048 + p, _MM_HINT_T0);
    auto s = D::prep(w);
    for (int c = 0; c < kChunks; ++c) {
      __m512 v = D::chunk(w, s, c);
      for (int m = 0; m < M; ++m) acc[m][c % NA] = _mm512_fmadd_ps(v, _mm512_loadu_ps(x + m * ldx + 16 * c), acc[m][c % NA]);
    }
  }
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
  void (*dot)(BlockType t, const uint8_t* w, int64_t k, const float* x, int64_t ldx, int M, float* out);
  void (*decode)(BlockType t, const uint8_t* w, int64_t k, float* y);
};

void generic_dot(BlockType t, const uint8_t* w, int64_t k, const float* x, int64_t ldx, int M, float* out) {
  int64_t be = quant::block_elems(t), bb = quant::block_bytes(t);
  int64_t per = std::max<int64_t>(1, 256 / be);  // decode ~256 values at a time into L1
  alignas(64) float buf[256];
  for (int m = 0; m < M; ++m) out[m] = 0;
  for (int64_t k0 = 0; k0 < k; k0 += per * be) {
    int64_t n = std::min(per * be, k - k0);
    quant::decode_blocks(t, w + k0 / be * bb, n / be, buf);
    for (int m = 0; m < M; ++m) out[m] += dot_f32(buf, x + m * ldx + k0, n);
  }
}

void generic_decode(BlockType t, const uint8_t* w, int64_t k, float* y) { quant::decode_blocks(t, w, k / quant::block_elems(t), y); }

template <class D>
void fast_dot(BlockType, const uint8_t* w, int64_t k, const float* x, int64_t ldx, int M, float* out) {
  int64_t nblk = k / D::kElems;
  switch (M) {
    case 1: return dot_row<D, 1>(w, nblk, x, ldx, out);
    case 2: return dot_row<D, 2>(w, nblk, x, ldx, out);
    case 3: return dot_row<D, 3>(w, nblk, x, ldx, out);
    default: return dot_row<D, 4>(w, nblk, x, ldx, out);
  }
}

template <class D>
void fast_decode(BlockType, const uint8_t* w, int64_t k, float* y) { decode_row<D>(w, k / D::kElems, y); }

RowFns row_fns(BlockType t, int64_t k) {
  if (has_avx512()) {
    switch (t) {
      case BlockType::q8_0: return {fast_dot<DecQ8_0>, fast_decode<DecQ8_0>};
      case BlockType::q4_0: return {fast_dot<DecQ4_0>, fast_decode<DecQ4_0>};
      case BlockType::q4_k: return {fast_dot<DecQ4_K>, fast_decode<DecQ4_K>};
      case BlockType::q6_k: return {fast_dot<DecQ6_K>, fast_decode<DecQ6_K>};
      case BlockType::f16:
        if (k % 16 == 0) return {fast_dot<DecF16>, fast_decode<DecF16>};
        break;
      case BlockType::bf16:
        if (k % 16 == 0) return {fast_dot<DecBF16>, fast_decode<DecBF16>};
        break;
      default: break;
    }
  }
  return {generic_dot, generic_decode};
}

// Rows of x at which decoding tiles of W for a GEMM beats decoding per dot product.
constexpr int64_t kGemmRows = 16;
constexpr int64_t kTileRows = 64;

HostKernel make_dequant_matmul(const ir::Node& node, const ir::Graph&) {
  BlockType t = *quant::block_type_from_name(node.attrs.s("type"));
  int64_t N = node.attrs.i("n"), K = node.attrs.i("k");
  int64_t rb = *quant::row_bytes(t, K);
  RowFns fns = row_fns(t, K);
  return [=](const KernelArgs& a) {
    const auto* w = static_cast<const uint8_t*>(a.in[1].data);
    int64_t M = a.in[0].numel / K;
    bool half = a.in[0].dtype == DType::bf16;
    // bf16 activations are widened to f32 (and the result narrowed back).
    thread_local std::vector<float> xs, ys;
    const float* x = a.in[0].as<float>();
    float* y = a.out[0].as<float>();
    if (half) {
      xs.resize(static_cast<size_t>(M * K));
      ys.resize(static_cast<size_t>(M * N));
      const auto* xb = a.in[0].as<uint16_t>();
      for (int64_t i = 0; i < M * K; ++i) xs[static_cast<size_t>(i)] = bf16_to_f32(xb[i]);
      x = xs.data();
      y = ys.data();
    }
    if (M < kGemmRows) {
      rlx::parallel_for(N, std::max<int64_t>(8, 32768 / std::max<int64_t>(1, rb)), [&](int64_t lo, int64_t hi) {
        float out[4];
        for (int64_t n = lo; n < hi; ++n)
          for (int64_t m0 = 0; m0 < M; m0 += 4) {
            int mm = static_cast<int>(std::min<int64_t>(4, M - m0));
            fns.dot(t, w + n * rb, K, x + m0 * K, K, mm, out);
            for (int m = 0; m < mm; ++m) y[(m0 + m) * N + n] = out[m];
          }
      });
    } else {
      int64_t tiles = (N + kTileRows - 1) / kTileRows;
      rlx::parallel_for(tiles, 1, [&](int64_t lo, int64_t hi) {
        thread_local std::vector<float> tile;
        tile.resize(static_cast<size_t>(kTileRows * K));
        for (int64_t ti = lo; ti < hi; ++ti) {
          int64_t n0 = ti * kTileRows, nt = std::min(kTileRows, N - n0);
          for (int64_t r = 0; r < nt; ++r) fns.decode(t, w + (n0 + r) * rb, K, tile.data() + r * K);
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(M), static_cast<int>(nt), static_cast<int>(K), 1.0f, x,
                      static_cast<int>(K), tile.data(), static_cast<int>(K), 0.0f, y + n0, static_cast<int>(N));
        }
      });
    }
    if (half) {
      auto* yb = a.out[0].as<uint16_t>();
      for (int64_t i = 0; i < M * N; ++i) yb[i] = f32_to_bf16(ys[static_cast<size_t>(i)]);
    }
  };
}

bool claims_dequant_matmul(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>&, const ir::Attrs&) {
  return in[0].dtype == DType::f32 || in[0].dtype == DType::bf16;
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

void register_quant(KernelTable& t) {
  t[static_cast<size_t>(Op::dequant_matmul)] = {claims_dequant_matmul, make_dequant_matmul};
  t[static_cast<size_t>(Op::dequantize)] = {claims_dequantize, make_dequantize};
}

}  // namespace rlx::backends::cpu
