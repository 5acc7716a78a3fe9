// Quantizers for the types RLX writes. Each rounds to nearest; the K-quants refit each group's
// scale (and min) by least squares before the 6/8-bit scale quantization, then re-round every
// element against the scale that will actually be stored.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

#include "formats/quant.h"
#include "rlx/error.h"
#include "util/gguf_blocks.h"
#include "util/half.h"
#include "util/strings.h"

namespace rlx::formats {

namespace {

void put_half(uint8_t* p, float v) {
  uint16_t h = f32_to_f16(v);
  std::memcpy(p, &h, 2);
}
float stored_half(float v) { return f16_to_f32(f32_to_f16(v)); }
int clamp_int(int v, int lo, int hi) { return std::min(hi, std::max(lo, v)); }
int round_int(float v) { return static_cast<int>(std::lround(v)); }

// A symmetric group's scale: candidate grids around the one that maps the largest magnitude to
// -half (a slightly finer or coarser grid often rounds the group better), each refit by
// (weighted) least squares; the scale of the smallest weighted squared error wins.
float search_symmetric_scale(const float* v, int n, int half, const float* w) {
  float amax = 0, max = 0;
  for (int i = 0; i < n; ++i)
    if (std::fabs(v[i]) > amax) amax = std::fabs(v[i]), max = v[i];
  float s = 0;
  double best = INFINITY;
  for (int k = -9; k <= 9 && max != 0; ++k) {
    const float guess = max / -(static_cast<float>(half) + 0.1f * static_cast<float>(k));
    double num = 0, den = 0;
    for (int i = 0; i < n; ++i) {
      const double l = clamp_int(round_int(v[i] / guess), -half, half - 1), wi = w ? w[i] : 1.0;
      num += wi * l * v[i], den += wi * l * l;
    }
    const float fit = den > 0 ? static_cast<float>(num / den) : guess;
    double err = 0;
    for (int i = 0; i < n; ++i) {
      const double r = fit * clamp_int(round_int(v[i] / fit), -half, half - 1) - v[i];
      err += (w ? w[i] : 1.0) * r * r;
    }
    if (err < best) best = err, s = fit;
  }
  return s;
}

// Q8_0: the scale that maps the largest magnitude to 127 (ggml's), then candidate grids around
// it refit by least squares — each judged after rounding the scale to the half it is stored as,
// and the elements rounded against that stored scale — and the smallest squared error kept.
void q8_0(const float* x, uint8_t* b, const float*) {
  float amax = 0;
  for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[j]));
  auto error_of = [&](float d) {
    const float id = d != 0 ? 1.0f / d : 0.0f;
    double e = 0;
    for (int j = 0; j < 32; ++j) {
      const double r = static_cast<double>(d) * clamp_int(round_int(x[j] * id), -127, 127) - x[j];
      e += r * r;
    }
    return e;
  };
  float best_d = stored_half(amax / 127.0f);
  double best = error_of(best_d);
  for (int k = -6; k <= 6 && amax != 0; ++k) {
    const float guess = amax / (127.0f + 0.25f * static_cast<float>(k));
    const float ig = 1.0f / guess;
    double num = 0, den = 0;
    for (int j = 0; j < 32; ++j) {
      const double l = clamp_int(round_int(x[j] * ig), -127, 127);
      num += l * x[j], den += l * l;
    }
    for (float d : {stored_half(guess), den > 0 ? stored_half(static_cast<float>(num / den)) : 0.0f}) {
      if (d == 0) continue;
      const double e = error_of(d);
      if (e < best) best = e, best_d = d;
    }
  }
  const float id = best_d != 0 ? 1.0f / best_d : 0.0f;
  put_half(b, best_d);
  for (int j = 0; j < 32; ++j) b[2 + j] = static_cast<uint8_t>(static_cast<int8_t>(clamp_int(round_int(x[j] * id), -127, 127)));
}

void q4_0(const float* x, uint8_t* b, const float* w) {
  // The element of largest magnitude maps to -8 exactly, so the sign of d carries its sign
  // (ggml's rounding, byte for byte); with importance weights, the searched scale.
  float amax = 0, max = 0;
  for (int j = 0; j < 32; ++j)
    if (std::fabs(x[j]) > amax) amax = std::fabs(x[j]), max = x[j];
  float d = w ? search_symmetric_scale(x, 32, 8, w) : max / -8.0f, id = d != 0 ? 1.0f / d : 0.0f;
  put_half(b, d);
  for (int j = 0; j < 16; ++j) {
    int q0 = clamp_int(round_int(x[j] * id) + 8, 0, 15);
    int q1 = clamp_int(round_int(x[j + 16] * id) + 8, 0, 15);
    b[2 + j] = static_cast<uint8_t>(q0 | (q1 << 4));
  }
}

// Fits x ≈ scale * L - min with L in [0, nmax] for one group — min >= 0 for the K-quants, any
// sign for Q4_1/Q5_1 (free_min): start from the range, then alternate rounding and a
// least-squares refit, keeping the best.
// `w` (may be null: all 1) weighs each element's squared error: the importance of its column.
void fit_scale_min(const float* x, int n, int nmax, float* scale, float* min, bool free_min = false, const float* w = nullptr) {
  float lo = x[0], hi = x[0];
  for (int i = 1; i < n; ++i) lo = std::min(lo, x[i]), hi = std::max(hi, x[i]);
  if (!free_min) lo = std::min(lo, 0.0f);  // ggml's K-quants subtract a non-negative min
  float s = (hi - lo) / static_cast<float>(nmax), m = -lo;
  if (s == 0) {
    *scale = 0, *min = m;
    return;
  }
  auto error = [&](float sc, float mn) {
    float e = 0;
    for (int i = 0; i < n; ++i) {
      int l = clamp_int(round_int((x[i] + mn) / sc), 0, nmax);
      float r = sc * static_cast<float>(l) - mn - x[i];
      e += (w ? w[i] : 1.0f) * r * r;
    }
    return e;
  };
  float best = error(s, m);
  *scale = s, *min = m;
  for (int it = 0; it < 4; ++it) {
    double sw = 0, sl = 0, sll = 0, sx = 0, slx = 0;  // weighted sums
    for (int i = 0; i < n; ++i) {
      double l = clamp_int(round_int((x[i] + m) / s), 0, nmax), wi = w ? w[i] : 1.0;
      sw += wi, sl += wi * l, sll += wi * l * l, sx += wi * x[i], slx += wi * l * x[i];
    }
    double det = sw * sll - sl * sl;
    if (det <= 0 || sw <= 0) break;
    double ns = (sw * slx - sl * sx) / det, nm = -(sx - ns * sl) / sw;  // x ≈ ns*l - nm
    if (ns <= 0) break;
    if (nm < 0 && !free_min) nm = 0, ns = sll > 0 ? slx / sll : ns;
    s = static_cast<float>(ns), m = static_cast<float>(nm);
    float e = error(s, m);
    if (!(e < best)) break;
    best = e, *scale = s, *min = m;
  }
}

// The super-block header of Q4_K and Q5_K: each group of 32 fitted with L in [0, nmax], the
// 6-bit scales and mins packed as scale_min_k4 reads them; the levels re-rounded against the
// scales as stored go to L.
void k4_header(const float* x, int nmax, uint8_t* b, uint8_t* L, const float* w) {
  float scales[8], mins[8];
  float max_scale = 0, max_min = 0;
  for (int g = 0; g < 8; ++g) {
    fit_scale_min(x + 32 * g, 32, nmax, &scales[g], &mins[g], false, w ? w + 32 * g : nullptr);
    max_scale = std::max(max_scale, scales[g]);
    max_min = std::max(max_min, mins[g]);
  }
  float d = max_scale / 63.0f, dmin = max_min / 63.0f;
  put_half(b, d);
  put_half(b + 2, dmin);
  float ds = stored_half(d), dm = stored_half(dmin);
  int sc[8], mn[8];
  for (int g = 0; g < 8; ++g) {
    sc[g] = ds > 0 ? clamp_int(round_int(scales[g] / ds), 0, 63) : 0;
    mn[g] = dm > 0 ? clamp_int(round_int(mins[g] / dm), 0, 63) : 0;
  }
  uint8_t* s = b + 4;
  std::memset(s, 0, 12);
  for (int j = 0; j < 8; ++j) {
    if (j < 4) {
      s[j] = static_cast<uint8_t>(sc[j]);
      s[j + 4] = static_cast<uint8_t>(mn[j]);
    } else {
      s[j + 4] = static_cast<uint8_t>((sc[j] & 0x0f) | ((mn[j] & 0x0f) << 4));
      s[j - 4] |= static_cast<uint8_t>((sc[j] >> 4) << 6);
      s[j] |= static_cast<uint8_t>((mn[j] >> 4) << 6);
    }
  }
  for (int g = 0; g < 8; ++g) {
    float gs = ds * static_cast<float>(sc[g]), gm = dm * static_cast<float>(mn[g]);
    for (int i = 0; i < 32; ++i)
      L[32 * g + i] = static_cast<uint8_t>(gs > 0 ? clamp_int(round_int((x[32 * g + i] + gm) / gs), 0, nmax) : 0);
  }
}

void q4_k(const float* x, uint8_t* b, const float* w) {
  uint8_t L[256];
  k4_header(x, 15, b, L, w);
  uint8_t* qs = b + 16;
  for (int j = 0; j < 4; ++j)
    for (int l = 0; l < 32; ++l) qs[32 * j + l] = static_cast<uint8_t>(L[64 * j + l] | (L[64 * j + 32 + l] << 4));
}

// Q5_K: Q4_K's header, the low nibbles in qs, and group g's fifth bits in bit g of qh[l].
void q5_k(const float* x, uint8_t* b, const float* w) {
  uint8_t L[256];
  k4_header(x, 31, b, L, w);
  uint8_t* qh = b + 16;
  uint8_t* qs = b + 48;
  std::memset(qh, 0, 32);
  for (int j = 0; j < 4; ++j)
    for (int l = 0; l < 32; ++l) {
      const int lo = L[64 * j + l], hi = L[64 * j + 32 + l];
      qs[32 * j + l] = static_cast<uint8_t>((lo & 0x0f) | ((hi & 0x0f) << 4));
      qh[l] |= static_cast<uint8_t>(((lo >> 4) << (2 * j)) | ((hi >> 4) << (2 * j + 1)));
    }
}

// Q4_1 and Q5_1: x ≈ d * L + m per block of 32, L in [0, nmax] (the fifth bits in qh for Q5_1).
template <int nmax>
void q_1(const float* x, uint8_t* b, const float* w) {
  float d = 0, neg_m = 0;
  fit_scale_min(x, 32, nmax, &d, &neg_m, true, w);
  put_half(b, d);
  put_half(b + 2, -neg_m);
  const float ds = stored_half(d), m = stored_half(-neg_m);
  uint8_t* qs = b + (nmax == 15 ? 4 : 8);
  uint32_t qh = 0;
  int L[32];
  for (int j = 0; j < 32; ++j) L[j] = ds > 0 ? clamp_int(round_int((x[j] - m) / ds), 0, nmax) : 0;
  for (int j = 0; j < 16; ++j) {
    qs[j] = static_cast<uint8_t>((L[j] & 0x0f) | ((L[j + 16] & 0x0f) << 4));
    qh |= static_cast<uint32_t>(L[j] >> 4) << j | static_cast<uint32_t>(L[j + 16] >> 4) << (j + 16);
  }
  if (nmax == 31) std::memcpy(b + 4, &qh, 4);
}

// Q5_0: as Q4_0 with 32 levels (the largest magnitude maps to -16), fifth bits in qh.
void q5_0(const float* x, uint8_t* b, const float* w) {
  float amax = 0, max = 0;
  for (int j = 0; j < 32; ++j)
    if (std::fabs(x[j]) > amax) amax = std::fabs(x[j]), max = x[j];
  float d = w ? search_symmetric_scale(x, 32, 16, w) : max / -16.0f, id = d != 0 ? 1.0f / d : 0.0f;
  put_half(b, d);
  uint32_t qh = 0;
  for (int j = 0; j < 16; ++j) {
    int q0 = clamp_int(round_int(x[j] * id) + 16, 0, 31);
    int q1 = clamp_int(round_int(x[j + 16] * id) + 16, 0, 31);
    b[6 + j] = static_cast<uint8_t>((q0 & 0x0f) | ((q1 & 0x0f) << 4));
    qh |= static_cast<uint32_t>(q0 >> 4) << j | static_cast<uint32_t>(q1 >> 4) << (j + 16);
  }
  std::memcpy(b + 2, &qh, 4);
}

void q6_k(const float* x, uint8_t* b, const float* w) {
  // Groups of 16 with a signed scale near the one mapping the largest magnitude to -32 (as
  // Q4_0 does), searched and refit by least squares.
  float scales[16];
  float max_abs_scale = 0, max_scale = 0;
  for (int g = 0; g < 16; ++g) {
    const float* v = x + 16 * g;
    const float s = search_symmetric_scale(v, 16, 32, w ? w + 16 * g : nullptr);
    scales[g] = s;
    if (std::fabs(s) > max_abs_scale) max_abs_scale = std::fabs(s), max_scale = s;
  }
  float d = max_scale / -128.0f;
  float ds = stored_half(d);
  uint8_t* ql = b;
  uint8_t* qh = b + 128;
  auto* sc = reinterpret_cast<int8_t*>(b + 192);
  put_half(b + 208, d);
  uint8_t L[256];
  for (int g = 0; g < 16; ++g) {
    sc[g] = static_cast<int8_t>(ds != 0 ? clamp_int(round_int(scales[g] / ds), -128, 127) : 0);
    float gs = ds * static_cast<float>(sc[g]);
    for (int i = 0; i < 16; ++i)
      L[16 * g + i] = static_cast<uint8_t>((gs != 0 ? clamp_int(round_int(x[16 * g + i] / gs), -32, 31) : 0) + 32);
  }
  for (int c = 0; c < 2; ++c) {
    const uint8_t* q = L + 128 * c;
    for (int l = 0; l < 32; ++l) {
      int q1 = q[l], q2 = q[l + 32], q3 = q[l + 64], q4 = q[l + 96];
      ql[64 * c + l] = static_cast<uint8_t>((q1 & 0x0f) | ((q3 & 0x0f) << 4));
      ql[64 * c + l + 32] = static_cast<uint8_t>((q2 & 0x0f) | ((q4 & 0x0f) << 4));
      qh[32 * c + l] = static_cast<uint8_t>((q1 >> 4) | ((q2 >> 4) << 2) | ((q3 >> 4) << 4) | ((q4 >> 4) << 6));
    }
  }
}

// The 2- and 3-bit K-quants lay out 16 groups of 16 the same way: group (n, j, half) of a
// 128-element half-block takes bits 2j of bytes half·16 … half·16+15 of its 32-byte run.
// Element i of the super-block: its byte in the run and its shift index j.
inline void k_low_bits_at(int i, int* byte, int* j) {
  const int r = i % 128;
  *byte = (i / 128) * 32 + r % 32;
  *j = r / 32;
}

// Q2_K: x ≈ d·sc·L − dmin·mn with L in 0…3 and 4-bit sc and mn per group of 16.
void q2_k(const float* x, uint8_t* b, const float* w) {
  float scales[16], mins[16], max_scale = 0, max_min = 0;
  for (int g = 0; g < 16; ++g) {
    fit_scale_min(x + 16 * g, 16, 3, &scales[g], &mins[g], false, w ? w + 16 * g : nullptr);
    max_scale = std::max(max_scale, scales[g]);
    max_min = std::max(max_min, mins[g]);
  }
  const float d = max_scale / 15.0f, dmin = max_min / 15.0f;
  put_half(b + 80, d);
  put_half(b + 82, dmin);
  const float ds = stored_half(d), dm = stored_half(dmin);
  std::memset(b, 0, 80);
  for (int g = 0; g < 16; ++g) {
    const int sc = ds > 0 ? clamp_int(round_int(scales[g] / ds), 0, 15) : 0, mn = dm > 0 ? clamp_int(round_int(mins[g] / dm), 0, 15) : 0;
    b[g] = static_cast<uint8_t>(sc | (mn << 4));
    const float gs = ds * static_cast<float>(sc), gm = dm * static_cast<float>(mn);
    for (int l = 0; l < 16; ++l) {
      const int i = 16 * g + l, L = gs > 0 ? clamp_int(round_int((x[i] + gm) / gs), 0, 3) : 0;
      int byte, j;
      k_low_bits_at(i, &byte, &j);
      b[16 + byte] |= static_cast<uint8_t>(L << (2 * j));
    }
  }
}

// Q3_K: x ≈ d·sc·v with v in −4…3 (two low bits, and a high bit that when clear subtracts 4) and
// signed 6-bit sc per group of 16.
void q3_k(const float* x, uint8_t* b, const float* w) {
  float scales[16], max_abs = 0, max_scale = 0;
  for (int g = 0; g < 16; ++g) {
    scales[g] = search_symmetric_scale(x + 16 * g, 16, 4, w ? w + 16 * g : nullptr);
    if (std::fabs(scales[g]) > max_abs) max_abs = std::fabs(scales[g]), max_scale = scales[g];
  }
  const float d = max_scale / -32.0f;
  put_half(b + 108, d);
  const float ds = stored_half(d);
  std::memset(b, 0, 108);
  uint8_t* hm = b;
  uint8_t* qs = b + 32;
  uint8_t* sc = b + 96;
  for (int g = 0; g < 16; ++g) {
    const int s = ds != 0 ? clamp_int(round_int(scales[g] / ds), -32, 31) : 0, u = s + 32;
    if (g < 8) sc[g] |= static_cast<uint8_t>(u & 0x0f);
    else sc[g - 8] |= static_cast<uint8_t>((u & 0x0f) << 4);
    sc[8 + g % 4] |= static_cast<uint8_t>((u >> 4) << (2 * (g / 4)));
    const float gs = ds * static_cast<float>(s);
    for (int l = 0; l < 16; ++l) {
      const int i = 16 * g + l, q = (gs != 0 ? clamp_int(round_int(x[i] / gs), -4, 3) : 0) + 4;
      int byte, j;
      k_low_bits_at(i, &byte, &j);
      qs[byte] |= static_cast<uint8_t>((q & 3) << (2 * j));
      if (q & 4) hm[byte % 32] |= static_cast<uint8_t>(1u << (j + 4 * (i / 128)));
    }
  }
}

// ---- IQ4_NL / IQ4_XS: indices into quant::iq4_grid's 16 values, the nearest for each element.

// The grid's midpoints are multiples of ½, so the nearest index is constant on every half-unit
// interval [k/2, (k+1)/2): one table lookup of ⌊2v⌋. Ties (v on a midpoint) go up.
int nearest_iq4(float v) {  // v in grid units
  static const auto table = [] {
    std::array<uint8_t, 512> t{};
    for (int k = 0; k < 512; ++k) {
      const float mid = (static_cast<float>(k - 256) + 0.5f) / 2.0f;  // the interval's centre
      int best = 0;
      for (int i = 1; i < 16; ++i)
        if (std::fabs(mid - static_cast<float>(quant::iq4_grid(i))) < std::fabs(mid - static_cast<float>(quant::iq4_grid(best)))) best = i;
      t[static_cast<size_t>(k)] = static_cast<uint8_t>(best);
    }
    return t;
  }();
  const float h = 2.0f * v + 256.0f;
  if (!(h >= 0.0f)) return 0;  // NaN too
  return table[static_cast<size_t>(std::min(511.0f, h))];
}

// The (signed: the grid is lopsided) scale for n values on the grid. Candidate scales map the
// largest magnitude onto either end of the grid or a little inside it; each picks its indices,
// and the least-squares scale for those indices scores Σ(w·l·x)² / Σ(w·l²) (the error it removes,
// so the highest wins — no second pass per candidate).
float search_iq4_scale(const float* v, int n, const float* w) {
  float amax = 0, max = 0;
  for (int i = 0; i < n; ++i)
    if (std::fabs(v[i]) > amax) amax = std::fabs(v[i]), max = v[i];
  if (max == 0) return 0;
  float s = max / -127.0f;
  double best = -1;
  for (float end : {-127.0f, 113.0f})
    for (int k = 0; k <= 8; ++k) {
      const float inv = end * (1.0f - 0.03f * static_cast<float>(k)) / max;
      double num = 0, den = 0;
      for (int i = 0; i < n; ++i) {
        const double l = quant::iq4_grid(nearest_iq4(v[i] * inv)), wi = w ? w[i] : 1.0;
        num += wi * l * v[i], den += wi * l * l;
      }
      if (den > 0 && num * num / den > best) best = num * num / den, s = static_cast<float>(num / den);
    }
  return s;
}

// 32 values against a stored scale d → 16 bytes: element j's index in the low nibble of byte j,
// element j + 16's in the high one.
void pack_iq4(const float* x, float d, uint8_t* qs) {
  const float id = d != 0 ? 1.0f / d : 0.0f;
  for (int j = 0; j < 16; ++j)
    qs[j] = static_cast<uint8_t>(nearest_iq4(x[j] * id) | (nearest_iq4(x[j + 16] * id) << 4));
}

void iq4_nl(const float* x, uint8_t* b, const float* w) {
  const float d = stored_half(search_iq4_scale(x, 32, w));
  put_half(b, d);
  pack_iq4(x, d, b + 2);
}

// IQ4_XS: each group's own best scale, then one half d with the groups' scales as 6-bit signed
// multiples of it (d·(ls − 32), ls in 0…63; d maps the largest group scale to −32).
void iq4_xs(const float* x, uint8_t* b, const float* w) {
  float sc[8], max = 0;
  for (int g = 0; g < 8; ++g) {
    sc[g] = search_iq4_scale(x + 32 * g, 32, w ? w + 32 * g : nullptr);
    if (std::fabs(sc[g]) > std::fabs(max)) max = sc[g];
  }
  const float d = stored_half(max / -32.0f);
  put_half(b, d);
  const float id = d != 0 ? 1.0f / d : 0.0f;
  unsigned scales_h = 0;
  std::memset(b + 4, 0, 4);
  for (int g = 0; g < 8; ++g) {
    const int ls = clamp_int(round_int(sc[g] * id), -32, 31) + 32;
    b[4 + g / 2] = static_cast<uint8_t>(b[4 + g / 2] | ((ls & 0x0f) << (4 * (g % 2))));
    scales_h |= static_cast<unsigned>(ls >> 4) << (2 * g);
    pack_iq4(x + 32 * g, d * static_cast<float>(ls - 32), b + 8 + 16 * g);
  }
  b[2] = static_cast<uint8_t>(scales_h & 0xff);
  b[3] = static_cast<uint8_t>(scales_h >> 8);
}

}  // namespace

bool can_quantize(WeightType t) {
  switch (t) {
    case WeightType::f32:
    case WeightType::f16:
    case WeightType::bf16:
    case WeightType::q8_0:
    case WeightType::q4_0:
    case WeightType::q4_1:
    case WeightType::q5_0:
    case WeightType::q5_1:
    case WeightType::q2_k:
    case WeightType::q3_k:
    case WeightType::q4_k:
    case WeightType::q5_k:
    case WeightType::q6_k:
    case WeightType::iq4_nl:
    case WeightType::iq4_xs: return true;
    default: return false;
  }
}

std::vector<uint8_t> quantize(WeightType t, const float* src, int64_t n) { return quantize(t, src, n, nullptr, 0); }

std::vector<uint8_t> quantize(WeightType t, const float* src, int64_t n, const float* importance, int64_t row) {
  if (importance && (row <= 0 || n % row || row % weight_type_block_elems(t)))
    throw Error(ErrorKind::invalid_argument, cat("quantize: importance for rows of ", row, " values does not fit ", n, " values of ", weight_type_name(t)));
  if (!can_quantize(t))
    throw Error(ErrorKind::unsupported, cat("RLX cannot quantize to ", weight_type_name(t),
                                            "; it writes F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL and IQ4_XS"));
  auto nbytes = n >= 0 ? weight_type_bytes(t, static_cast<uint64_t>(n)) : std::nullopt;
  if (!nbytes)
    throw Error(ErrorKind::invalid_argument, cat(weight_type_name(t), " packs whole blocks of ",
                                                 weight_type_block_elems(t), " values; got ", n));
  std::vector<uint8_t> out(static_cast<size_t>(*nbytes));
  switch (t) {
    case WeightType::f32:
      if (n) std::memcpy(out.data(), src, out.size());
      return out;
    case WeightType::f16:
      for (int64_t i = 0; i < n; ++i) put_half(out.data() + 2 * i, src[i]);
      return out;
    case WeightType::bf16:
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h = f32_to_bf16(src[i]);
        std::memcpy(out.data() + 2 * i, &h, 2);
      }
      return out;
    default: break;
  }
  void (*fn)(const float*, uint8_t*, const float*) = nullptr;
  switch (t) {
    case WeightType::q8_0: fn = q8_0; break;
    case WeightType::q4_0: fn = q4_0; break;
    case WeightType::q4_1: fn = q_1<15>; break;
    case WeightType::q5_0: fn = q5_0; break;
    case WeightType::q5_1: fn = q_1<31>; break;
    case WeightType::q2_k: fn = q2_k; break;
    case WeightType::q3_k: fn = q3_k; break;
    case WeightType::q4_k: fn = q4_k; break;
    case WeightType::q5_k: fn = q5_k; break;
    case WeightType::iq4_nl: fn = iq4_nl; break;
    case WeightType::iq4_xs: fn = iq4_xs; break;
    default: fn = q6_k; break;
  }
  const int64_t be = weight_type_block_elems(t), bb = weight_type_block_bytes(t);
  // Each element's weight: its column's importance times sqrt(σ² + x²), σ² the row's mean
  // square — the activations say which columns matter, the values keep large weights exact.
  auto rows = [&](int64_t r0, int64_t r1) {
    std::vector<float> w(static_cast<size_t>(be));
    for (int64_t r = r0; r < r1; ++r) {
      const float* x = src + r * row;
      if (!importance) {
        for (int64_t j = 0; j < row; j += be) fn(x + j, out.data() + (r * row + j) / be * bb, nullptr);
        continue;
      }
      double sigma2 = 0;
      for (int64_t j = 0; j < row; ++j) sigma2 += static_cast<double>(x[j]) * x[j];
      sigma2 /= static_cast<double>(row);
      for (int64_t j = 0; j < row; j += be) {
        for (int64_t e = 0; e < be; ++e)
          w[static_cast<size_t>(e)] = importance[j + e] * static_cast<float>(std::sqrt(sigma2 + static_cast<double>(x[j + e]) * x[j + e]));
        fn(x + j, out.data() + (r * row + j) / be * bb, w.data());
      }
    }
  };
  if (!importance) row = be;  // rows of one block: any split is a whole number of blocks
  // Blocks are independent: a large tensor is split over the machine's cores by rows.
  const int64_t nrows = n / row;
  const int64_t threads = std::min<int64_t>(std::max(1u, std::thread::hardware_concurrency()), n / (1 << 16));
  if (threads <= 1) {
    rows(0, nrows);
    return out;
  }
  std::vector<std::thread> pool;
  for (int64_t i = 0; i < threads; ++i) pool.emplace_back(rows, nrows * i / threads, nrows * (i + 1) / threads);
  for (auto& th : pool) th.join();
  return out;
}

}  // namespace rlx::formats
