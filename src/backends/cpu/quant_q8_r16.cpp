#include "backends/cpu/quant_q8_r16.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "backends/cpu/quant_q8.h"
#include "util/host_memory.h"
#include "util/thread_pool.h"
// GCC 12's AVX-512 intrinsics build their "undefined" vectors by self-initialization, which
// -Wuninitialized flags in every caller (GCC PR 105593).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

namespace rlx::backends::cpu::q8 {

namespace {

#define RLX_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,f16c")))

// Rows of x per call: M accumulators plus the block's 8 quads and its scales stay in registers.
constexpr int kRows = 8;
// The next groups' bytes, this far ahead, into L2 (the stream is sequential across groups).
constexpr int kPrefetchAhead = 4096;

// One group of 16 rows of W against MM rows of x: y[m·ldy + 0..15].
template <int MM>
RLX_VNNI void group_dot(const uint8_t* g, int64_t nblk, const int8_t* q, const float* d, const int32_t* neg, int64_t K,
                        float* y, int64_t ldy) {
  __m512 acc[MM];
  for (int m = 0; m < MM; ++m) acc[m] = _mm512_setzero_ps();
  for (int64_t b = 0; b < nblk; ++b, g += kGroupBlockBytes) {
    for (int l = 0; l < kGroupBlockBytes; l += 64) _mm_prefetch(reinterpret_cast<const char*>(g) + kPrefetchAhead + l, _MM_HINT_T1);
    __m512 ws = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(g)));
    __m512i w[8];
    for (int j = 0; j < 8; ++j) w[j] = _mm512_loadu_si512(g + 32 + 64 * j);
    for (int m = 0; m < MM; ++m) {
      const int8_t* xb = q + m * K + 32 * b;
      __m512i a = _mm512_set1_epi32(neg[m * nblk + b]);
      for (int j = 0; j < 8; ++j) {
        int32_t quad;
        std::memcpy(&quad, xb + 4 * j, 4);
        a = _mm512_dpbusd_epi32(a, w[j], _mm512_set1_epi32(quad));
      }
      __m512 sc = _mm512_mul_ps(ws, _mm512_set1_ps(d[m * nblk + b]));
      acc[m] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(a), sc, acc[m]);
    }
  }
  for (int m = 0; m < MM; ++m) _mm512_storeu_ps(y + m * ldy, acc[m]);
}

using GroupDot = void (*)(const uint8_t*, int64_t, const int8_t*, const float*, const int32_t*, int64_t, float*, int64_t);
constexpr GroupDot kGroupDot[kRows] = {group_dot<1>, group_dot<2>, group_dot<3>, group_dot<4>,
                                       group_dot<5>, group_dot<6>, group_dot<7>, group_dot<8>};

struct CacheKey {
  const uint8_t* w;
  int64_t n, k;
  bool operator<(const CacheKey& o) const { return std::tie(w, n, k) < std::tie(o.w, o.n, o.k); }
};

}  // namespace

bool repacked_q8_0_applies(int64_t n, int64_t k) { return has_vnni() && n > 0 && n % kGroupRows == 0 && k > 0 && k % 32 == 0; }

std::shared_ptr<const RepackedQ8_0> repack_q8_0(const uint8_t* w, int64_t n, int64_t k) {
  // Weak entries: the copy lives as long as a kernel holds it; a new model's bytes at a reused
  // address find an expired entry and repack.
  static std::mutex mutex;
  static std::map<CacheKey, std::weak_ptr<const RepackedQ8_0>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto& slot = cache[CacheKey{w, n, k}];
  if (auto hit = slot.lock()) return hit;
  auto r = std::make_shared<RepackedQ8_0>();
  const int64_t nblk = k / 32, rb = nblk * 34, groups = n / kGroupRows;
  r->memory = host_alloc(static_cast<size_t>(n * rb), false, "repacked Q8_0 weights");
  r->data = static_cast<const uint8_t*>(r->memory.get());
  r->n = n, r->k = k;
  auto* out = static_cast<uint8_t*>(r->memory.get());
  rlx::parallel_for(groups, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t gi = lo; gi < hi; ++gi)
      for (int64_t b = 0; b < nblk; ++b) {
        uint8_t* dst = out + (gi * nblk + b) * kGroupBlockBytes;
        for (int64_t r16 = 0; r16 < kGroupRows; ++r16) {
          const uint8_t* src = w + (gi * kGroupRows + r16) * rb + b * 34;
          std::memcpy(dst + 2 * r16, src, 2);
          for (int j = 0; j < 8; ++j)
            for (int t = 0; t < 4; ++t) dst[32 + 64 * j + 4 * r16 + t] = static_cast<uint8_t>(src[2 + 4 * j + t] ^ 0x80);
        }
      }
  });
  slot = r;
  for (auto it = cache.begin(); it != cache.end();) it = it->second.expired() ? cache.erase(it) : std::next(it);
  return r;
}

void matmul_repacked_q8_0(const RepackedQ8_0& w, const int8_t* q, const float* d, int64_t M, float* y) {
  const int64_t N = w.n, K = w.k, nblk = K / 32, groups = N / kGroupRows;
  // −128·Σq of every block of x: the integer dot's starting value (w is stored as w + 128).
  thread_local std::vector<int32_t> neg;
  neg.resize(static_cast<size_t>(M * nblk));
  for (int64_t i = 0; i < M * nblk; ++i) {
    int32_t s = 0;
    for (int t = 0; t < 32; ++t) s += q[32 * i + t];
    neg[static_cast<size_t>(i)] = -128 * s;
  }
  // Groups are handed out ~64 KiB of weights at a time: a thread that gets less of the CPU (a
  // busy machine) takes fewer of them instead of holding everyone back. Each group meets every
  // row of x while its bytes are in L1/L2.
  const int64_t block = std::max<int64_t>(1, 65536 / (nblk * kGroupBlockBytes));
  const int32_t* negs = neg.data();  // the thread-local of this thread, read by the workers
  std::atomic<int64_t> next{0};
  rlx::parallel_for(groups >= 2 * block ? num_threads() : 1, 1, [&](int64_t, int64_t) {
    for (int64_t lo; (lo = next.fetch_add(block, std::memory_order_relaxed)) < groups;) {
      int64_t hi = std::min(groups, lo + block);
      for (int64_t gi = lo; gi < hi; ++gi) {
        const uint8_t* g = w.data + gi * nblk * kGroupBlockBytes;
        for (int64_t m0 = 0; m0 < M; m0 += kRows) {
          int mm = static_cast<int>(std::min<int64_t>(kRows, M - m0));
          kGroupDot[mm - 1](g, nblk, q + m0 * K, d + m0 * nblk, negs + m0 * nblk, K, y + m0 * N + gi * kGroupRows, N);
        }
      }
    }
  });
}

}  // namespace rlx::backends::cpu::q8
