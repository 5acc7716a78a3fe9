// Unpacking of every weight type to f32: plain types by conversion, ggml blocks through the
// shared decoders of util/quant_blocks.h.
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

#include "formats/quant.h"
#include "rlx/error.h"
#include "util/quant_blocks.h"
#include "util/strings.h"

namespace rlx::formats {

namespace {

template <class T>
void convert(const uint8_t* src, int64_t n, float* dst) {
  for (int64_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, src + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
    dst[i] = static_cast<float>(v);
  }
}

}  // namespace

std::optional<quant::BlockType> block_type_of(WeightType t) {
  switch (t) {
    case WeightType::q4_0: return quant::BlockType::q4_0;
    case WeightType::q4_1: return quant::BlockType::q4_1;
    case WeightType::q5_0: return quant::BlockType::q5_0;
    case WeightType::q5_1: return quant::BlockType::q5_1;
    case WeightType::q8_0: return quant::BlockType::q8_0;
    case WeightType::q2_k: return quant::BlockType::q2_k;
    case WeightType::q3_k: return quant::BlockType::q3_k;
    case WeightType::q4_k: return quant::BlockType::q4_k;
    case WeightType::q5_k: return quant::BlockType::q5_k;
    case WeightType::q6_k: return quant::BlockType::q6_k;
    case WeightType::q8_k: return quant::BlockType::q8_k;
    case WeightType::iq4_nl: return quant::BlockType::iq4_nl;
    case WeightType::iq4_xs: return quant::BlockType::iq4_xs;
    case WeightType::f16: return quant::BlockType::f16;
    case WeightType::bf16: return quant::BlockType::bf16;
    default: return std::nullopt;
  }
}

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
  if (auto bt = block_type_of(t)) {
    int64_t be = quant::block_elems(*bt);
    if (n % be != 0)
      throw Error(ErrorKind::invalid_argument, cat(weight_type_name(t), " rows hold whole blocks of ", be,
                                                   " elements; got ", n));
    quant::decode_blocks(*bt, src, n / be, dst);
    return;
  }
  switch (t) {
    case WeightType::f32: std::memcpy(dst, src, static_cast<size_t>(n) * 4); return;
    case WeightType::f64: return convert<double>(src, n, dst);
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
