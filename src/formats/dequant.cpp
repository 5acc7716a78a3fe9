// Block decoders, one per ggml type. Layouts (bytes within one block) are from ggml-common.h;
// the comments give each struct so the offsets below can be checked against it.
#include <cmath>
#include <cstring>
#include <limits>

#include "formats/quant.h"
#include "rlx/error.h"
#include "util/half.h"
#include "util/strings.h"

namespace rlx::formats {

namespace {

constexpr int kQK = 32;    // elements in a Q4_0 … Q8_0 block
constexpr int kQK_K = 256; // elements in a K-quant super-block

float half_at(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return f16_to_f32(h);
}

// block_q4_0 { half d; u8 qs[16]; }: element j is the low nibble of qs[j], j+16 the high one.
void q4_0(const uint8_t* b, float* y) {
  float d = half_at(b);
  const uint8_t* qs = b + 2;
  for (int j = 0; j < kQK / 2; ++j) {
    y[j] = static_cast<float>((qs[j] & 0x0f) - 8) * d;
    y[j + kQK / 2] = static_cast<float>((qs[j] >> 4) - 8) * d;
  }
}

// block_q4_1 { half d; half m; u8 qs[16]; }
void q4_1(const uint8_t* b, float* y) {
  float d = half_at(b), m = half_at(b + 2);
  const uint8_t* qs = b + 4;
  for (int j = 0; j < kQK / 2; ++j) {
    y[j] = static_cast<float>(qs[j] & 0x0f) * d + m;
    y[j + kQK / 2] = static_cast<float>(qs[j] >> 4) * d + m;
  }
}

// block_q5_0 { half d; u8 qh[4]; u8 qs[16]; }: qh bit j is the fifth bit of element j.
void q5_0(const uint8_t* b, float* y) {
  float d = half_at(b);
  uint32_t qh;
  std::memcpy(&qh, b + 2, 4);
  const uint8_t* qs = b + 6;
  for (int j = 0; j < kQK / 2; ++j) {
    int h0 = ((qh >> j) & 1) << 4, h1 = ((qh >> (j + 16)) & 1) << 4;
    y[j] = static_cast<float>(((qs[j] & 0x0f) | h0) - 16) * d;
    y[j + kQK / 2] = static_cast<float>(((qs[j] >> 4) | h1) - 16) * d;
  }
}

// block_q5_1 { half d; half m; u8 qh[4]; u8 qs[16]; }
void q5_1(const uint8_t* b, float* y) {
  float d = half_at(b), m = half_at(b + 2);
  uint32_t qh;
  std::memcpy(&qh, b + 4, 4);
  const uint8_t* qs = b + 8;
  for (int j = 0; j < kQK / 2; ++j) {
    int h0 = ((qh >> j) & 1) << 4, h1 = ((qh >> (j + 16)) & 1) << 4;
    y[j] = static_cast<float>((qs[j] & 0x0f) | h0) * d + m;
    y[j + kQK / 2] = static_cast<float>((qs[j] >> 4) | h1) * d + m;
  }
}

// block_q8_0 { half d; i8 qs[32]; }
void q8_0(const uint8_t* b, float* y) {
  float d = half_at(b);
  for (int j = 0; j < kQK; ++j) y[j] = static_cast<float>(static_cast<int8_t>(b[2 + j])) * d;
}

// block_q2_K { u8 scales[16]; u8 qs[64]; half d; half dmin; }: 16 groups of 16; each scales
// byte holds a 4-bit scale (low) and 4-bit min (high); 2-bit quants, 4 per byte, where byte l
// of a 32-byte run holds groups at shifts 0, 2, 4, 6.
void q2_k(const uint8_t* b, float* y) {
  const uint8_t* scales = b;
  const uint8_t* q = b + 16;
  float d = half_at(b + 80), dmin = half_at(b + 82);
  int is = 0;
  for (int n = 0; n < kQK_K; n += 128) {
    for (int shift = 0; shift < 8; shift += 2) {
      for (int half = 0; half < 2; ++half) {
        uint8_t sc = scales[is++];
        float dl = d * static_cast<float>(sc & 0x0f), ml = dmin * static_cast<float>(sc >> 4);
        for (int l = 0; l < 16; ++l) *y++ = dl * static_cast<float>((q[l + 16 * half] >> shift) & 3) - ml;
      }
    }
    q += 32;
  }
}

// block_q3_K { u8 hmask[32]; u8 qs[64]; u8 scales[12]; half d; }: 16 signed 6-bit scales
// (minus 32), low 4 bits in scales[0..7] (low nibble first for groups 0-7, high for 8-15) and
// high 2 bits in scales[8..11]; a quant is 2 low bits plus a high bit that, when clear,
// subtracts 4.
void q3_k(const uint8_t* b, float* y) {
  const uint8_t* hm = b;
  const uint8_t* q = b + 32;
  const uint8_t* s = b + 96;
  float d_all = half_at(b + 108);
  int scale[16];
  for (int i = 0; i < 16; ++i) {
    int low = i < 8 ? (s[i] & 0x0f) : (s[i - 8] >> 4);
    int high = (s[8 + i % 4] >> (2 * (i / 4))) & 3;
    scale[i] = (low | (high << 4)) - 32;
  }
  int is = 0;
  uint8_t m = 1;
  for (int n = 0; n < kQK_K; n += 128) {
    for (int shift = 0; shift < 8; shift += 2) {
      for (int half = 0; half < 2; ++half) {
        float dl = d_all * static_cast<float>(scale[is++]);
        for (int l = 0; l < 16; ++l) {
          int k = l + 16 * half;
          int v = ((q[k] >> shift) & 3) - ((hm[k] & m) ? 0 : 4);
          *y++ = dl * static_cast<float>(v);
        }
      }
      m = static_cast<uint8_t>(m << 1);
    }
    q += 32;
  }
}

// The 12-byte scale/min packing shared by Q4_K and Q5_K: 8 six-bit scales and 8 six-bit mins.
void scale_min_k4(int j, const uint8_t* q, int* sc, int* mn) {
  if (j < 4) {
    *sc = q[j] & 63;
    *mn = q[j + 4] & 63;
  } else {
    *sc = (q[j + 4] & 0x0f) | ((q[j - 4] >> 6) << 4);
    *mn = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}

// block_q4_K { half d; half dmin; u8 scales[12]; u8 qs[128]; }: 8 groups of 32; each 32-byte
// run of qs holds two groups (low nibbles, then high nibbles).
void q4_k(const uint8_t* b, float* y) {
  float d = half_at(b), dmin = half_at(b + 2);
  const uint8_t* scales = b + 4;
  const uint8_t* q = b + 16;
  for (int j = 0; j < 4; ++j) {
    int sc, mn;
    scale_min_k4(2 * j, scales, &sc, &mn);
    float d1 = d * static_cast<float>(sc), m1 = dmin * static_cast<float>(mn);
    scale_min_k4(2 * j + 1, scales, &sc, &mn);
    float d2 = d * static_cast<float>(sc), m2 = dmin * static_cast<float>(mn);
    for (int l = 0; l < 32; ++l) *y++ = d1 * static_cast<float>(q[l] & 0x0f) - m1;
    for (int l = 0; l < 32; ++l) *y++ = d2 * static_cast<float>(q[l] >> 4) - m2;
    q += 32;
  }
}

// block_q5_K { half d; half dmin; u8 scales[12]; u8 qh[32]; u8 qs[128]; }: like Q4_K plus a
// fifth bit per element; group g takes its high bits from bit g of qh[l].
void q5_k(const uint8_t* b, float* y) {
  float d = half_at(b), dmin = half_at(b + 2);
  const uint8_t* scales = b + 4;
  const uint8_t* qh = b + 16;
  const uint8_t* ql = b + 48;
  for (int j = 0; j < 4; ++j) {
    int sc, mn;
    scale_min_k4(2 * j, scales, &sc, &mn);
    float d1 = d * static_cast<float>(sc), m1 = dmin * static_cast<float>(mn);
    scale_min_k4(2 * j + 1, scales, &sc, &mn);
    float d2 = d * static_cast<float>(sc), m2 = dmin * static_cast<float>(mn);
    uint8_t u1 = static_cast<uint8_t>(1u << (2 * j)), u2 = static_cast<uint8_t>(2u << (2 * j));
    for (int l = 0; l < 32; ++l) *y++ = d1 * static_cast<float>((ql[l] & 0x0f) + ((qh[l] & u1) ? 16 : 0)) - m1;
    for (int l = 0; l < 32; ++l) *y++ = d2 * static_cast<float>((ql[l] >> 4) + ((qh[l] & u2) ? 16 : 0)) - m2;
    ql += 32;
  }
}

// block_q6_K { u8 ql[128]; u8 qh[64]; i8 scales[16]; half d; }: 6-bit quants minus 32; element
// i uses scales[i / 16]. Per 128 elements: ql[l] and ql[l+32] give the low nibbles of
// elements l, l+32 (low) and l+64, l+96 (high); qh[l] gives their top 2 bits at shifts 0,2,4,6.
void q6_k(const uint8_t* b, float* y) {
  const uint8_t* ql = b;
  const uint8_t* qh = b + 128;
  const auto* sc = reinterpret_cast<const int8_t*>(b + 192);
  float d = half_at(b + 208);
  for (int n = 0; n < kQK_K; n += 128) {
    for (int l = 0; l < 32; ++l) {
      int is = l / 16;
      int q1 = ((ql[l] & 0x0f) | (((qh[l] >> 0) & 3) << 4)) - 32;
      int q2 = ((ql[l + 32] & 0x0f) | (((qh[l] >> 2) & 3) << 4)) - 32;
      int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
      int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
      y[l] = d * static_cast<float>(sc[is + 0]) * static_cast<float>(q1);
      y[l + 32] = d * static_cast<float>(sc[is + 2]) * static_cast<float>(q2);
      y[l + 64] = d * static_cast<float>(sc[is + 4]) * static_cast<float>(q3);
      y[l + 96] = d * static_cast<float>(sc[is + 6]) * static_cast<float>(q4);
    }
    y += 128;
    ql += 64;
    qh += 32;
    sc += 8;
  }
}

// block_q8_K { float d; i8 qs[256]; i16 bsums[16]; }: bsums are sums for dot products only.
void q8_k(const uint8_t* b, float* y) {
  float d;
  std::memcpy(&d, b, 4);
  for (int j = 0; j < kQK_K; ++j) y[j] = d * static_cast<float>(static_cast<int8_t>(b[4 + j]));
}

using BlockFn = void (*)(const uint8_t*, float*);

BlockFn block_fn(WeightType t) {
  switch (t) {
    case WeightType::q4_0: return q4_0;
    case WeightType::q4_1: return q4_1;
    case WeightType::q5_0: return q5_0;
    case WeightType::q5_1: return q5_1;
    case WeightType::q8_0: return q8_0;
    case WeightType::q2_k: return q2_k;
    case WeightType::q3_k: return q3_k;
    case WeightType::q4_k: return q4_k;
    case WeightType::q5_k: return q5_k;
    case WeightType::q6_k: return q6_k;
    case WeightType::q8_k: return q8_k;
    default: return nullptr;
  }
}

template <class T>
void convert(const uint8_t* src, int64_t n, float* dst) {
  for (int64_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, src + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
    dst[i] = static_cast<float>(v);
  }
}

}  // namespace

float f8_e4m3_to_f32(uint8_t v) {
  // E4M3FN: bias 7, no infinities; S.1111.111 is NaN, exponent 0 is subnormal (m * 2^-9).
  float sign = (v & 0x80) ? -1.0f : 1.0f;
  int e = (v >> 3) & 0x0f, m = v & 0x07;
  if (e == 15 && m == 7) return std::numeric_limits<float>::quiet_NaN();
  if (e == 0) return sign * std::ldexp(static_cast<float>(m), -9);
  return sign * std::ldexp(1.0f + static_cast<float>(m) / 8.0f, e - 7);
}

float f8_e5m2_to_f32(uint8_t v) {
  // E5M2: IEEE-like, bias 15, with infinities and NaNs.
  float sign = (v & 0x80) ? -1.0f : 1.0f;
  int e = (v >> 2) & 0x1f, m = v & 0x03;
  if (e == 31) return m == 0 ? sign * std::numeric_limits<float>::infinity() : std::numeric_limits<float>::quiet_NaN();
  if (e == 0) return sign * std::ldexp(static_cast<float>(m), -16);
  return sign * std::ldexp(1.0f + static_cast<float>(m) / 4.0f, e - 15);
}

float f8_e8m0_to_f32(uint8_t v) {
  // E8M0 (MX scale): an unsigned power of two 2^(v-127); 0xff is NaN.
  if (v == 0xff) return std::numeric_limits<float>::quiet_NaN();
  return std::ldexp(1.0f, static_cast<int>(v) - 127);
}

bool can_dequantize(WeightType t) {
  switch (t) {
    case WeightType::c64:
    case WeightType::f6_e2m3:
    case WeightType::f6_e3m2:
    case WeightType::f4:
    case WeightType::unsupported: return false;
    default: return true;
  }
}

void dequantize_row(WeightType t, const uint8_t* src, int64_t n, float* dst) {
  if (BlockFn fn = block_fn(t)) {
    int64_t be = weight_type_block_elems(t), bb = weight_type_block_bytes(t);
    if (n % be != 0)
      throw Error(ErrorKind::invalid_argument, cat(weight_type_name(t), " rows hold whole blocks of ", be,
                                                   " elements; got ", n));
    for (int64_t i = 0; i < n / be; ++i) fn(src + i * bb, dst + i * be);
    return;
  }
  switch (t) {
    case WeightType::f32: std::memcpy(dst, src, static_cast<size_t>(n) * 4); return;
    case WeightType::f64: return convert<double>(src, n, dst);
    case WeightType::f16:
      for (int64_t i = 0; i < n; ++i) dst[i] = half_at(src + 2 * i);
      return;
    case WeightType::bf16:
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, src + 2 * i, 2);
        dst[i] = bf16_to_f32(h);
      }
      return;
    case WeightType::f8_e4m3:
      for (int64_t i = 0; i < n; ++i) dst[i] = f8_e4m3_to_f32(src[i]);
      return;
    case WeightType::f8_e5m2:
      for (int64_t i = 0; i < n; ++i) dst[i] = f8_e5m2_to_f32(src[i]);
      return;
    case WeightType::f8_e8m0:
      for (int64_t i = 0; i < n; ++i) dst[i] = f8_e8m0_to_f32(src[i]);
      return;
    case WeightType::i64: return convert<int64_t>(src, n, dst);
    case WeightType::i32: return convert<int32_t>(src, n, dst);
    case WeightType::i16: return convert<int16_t>(src, n, dst);
    case WeightType::i8: return convert<int8_t>(src, n, dst);
    case WeightType::u64: return convert<uint64_t>(src, n, dst);
    case WeightType::u32: return convert<uint32_t>(src, n, dst);
    case WeightType::u16: return convert<uint16_t>(src, n, dst);
    case WeightType::u8: return convert<uint8_t>(src, n, dst);
    case WeightType::boolean:
      for (int64_t i = 0; i < n; ++i) dst[i] = src[i] ? 1.0f : 0.0f;
      return;
    default:
      throw Error(ErrorKind::unsupported, cat("cannot convert ", weight_type_name(t), " to f32"));
  }
}

Tensor dequantize(const TensorView& view) {
  if (!can_dequantize(view.type)) {
    if (view.type == WeightType::unsupported || weight_type_is_quantized(view.type))
      throw Error(ErrorKind::unsupported, cat("tensor ", view.name, " uses quant type ", view.type_name(),
                                              ", which RLX does not support yet"));
    throw Error(ErrorKind::unsupported, cat("tensor ", view.name, " is ", view.type_name(),
                                            ", a storage-only type RLX cannot convert to f32 yet"));
  }
  Tensor out = Tensor::zeros(DType::f32, view.shape);
  int64_t n = view.numel();
  auto need = weight_type_bytes(view.type, static_cast<uint64_t>(n));
  if (!need || *need != view.nbytes)
    throw Error(ErrorKind::internal, cat("tensor ", view.name, ": ", view.nbytes, " bytes do not match its ",
                                         view.type_name(), " shape"));
  if (n > 0) dequantize_row(view.type, view.data, n, out.data_as<float>());
  return out;
}

}  // namespace rlx::formats
