// Reading and writing single elements of any dtype through wide types (f64, i64, c128).
// These conversions are the definition of `mir.cast`: float→int truncates toward zero,
// saturates at the type's range and maps NaN to 0; int→int wraps (two's complement);
// anything→bool is "!= 0"; complex→real takes the real part.
#pragma once
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>

#include "rlx/dtype.h"
#include "util/half.h"

namespace rlx {

using c128 = std::complex<double>;

template <class I>
inline I saturate_to_int(double v) {
  if (std::isnan(v)) return 0;
  double t = std::trunc(v);
  if (t <= static_cast<double>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  if (t >= static_cast<double>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  return static_cast<I>(t);
}

inline int64_t load_i64(const void* p, DType t, int64_t i) {
  switch (t) {
    case DType::f32: return saturate_to_int<int64_t>(static_cast<const float*>(p)[i]);
    case DType::f64: return saturate_to_int<int64_t>(static_cast<const double*>(p)[i]);
    case DType::f16: return saturate_to_int<int64_t>(f16_to_f32(static_cast<const uint16_t*>(p)[i]));
    case DType::bf16: return saturate_to_int<int64_t>(bf16_to_f32(static_cast<const uint16_t*>(p)[i]));
    case DType::c64: return saturate_to_int<int64_t>(static_cast<const float*>(p)[2 * i]);
    case DType::c128: return saturate_to_int<int64_t>(static_cast<const double*>(p)[2 * i]);
    case DType::i8: return static_cast<const int8_t*>(p)[i];
    case DType::u8: return static_cast<const uint8_t*>(p)[i];
    case DType::i16: return static_cast<const int16_t*>(p)[i];
    case DType::i32: return static_cast<const int32_t*>(p)[i];
    case DType::i64: return static_cast<const int64_t*>(p)[i];
    case DType::boolean: return static_cast<const uint8_t*>(p)[i] != 0;
    case DType::i4: {
      uint8_t byte = static_cast<const uint8_t*>(p)[i / 2];
      int v = (i & 1) ? (byte >> 4) : (byte & 0xf);
      return v >= 8 ? v - 16 : v;
    }
  }
  return 0;
}

inline double load_f64(const void* p, DType t, int64_t i) {
  switch (t) {
    case DType::f32: return static_cast<const float*>(p)[i];
    case DType::f64: return static_cast<const double*>(p)[i];
    case DType::f16: return f16_to_f32(static_cast<const uint16_t*>(p)[i]);
    case DType::bf16: return bf16_to_f32(static_cast<const uint16_t*>(p)[i]);
    case DType::c64: return static_cast<const float*>(p)[2 * i];
    case DType::c128: return static_cast<const double*>(p)[2 * i];
    default: return static_cast<double>(load_i64(p, t, i));
  }
}

inline c128 load_c128(const void* p, DType t, int64_t i) {
  if (t == DType::c64) {
    const float* f = static_cast<const float*>(p);
    return {f[2 * i], f[2 * i + 1]};
  }
  if (t == DType::c128) {
    const double* f = static_cast<const double*>(p);
    return {f[2 * i], f[2 * i + 1]};
  }
  return {load_f64(p, t, i), 0.0};
}

inline void store_i64(void* p, DType t, int64_t i, int64_t v) {
  switch (t) {
    case DType::f32: static_cast<float*>(p)[i] = static_cast<float>(v); return;
    case DType::f64: static_cast<double*>(p)[i] = static_cast<double>(v); return;
    case DType::f16: static_cast<uint16_t*>(p)[i] = f32_to_f16(static_cast<float>(v)); return;
    case DType::bf16: static_cast<uint16_t*>(p)[i] = f32_to_bf16(static_cast<float>(v)); return;
    case DType::c64: {
      float* f = static_cast<float*>(p);
      f[2 * i] = static_cast<float>(v);
      f[2 * i + 1] = 0;
      return;
    }
    case DType::c128: {
      double* f = static_cast<double*>(p);
      f[2 * i] = static_cast<double>(v);
      f[2 * i + 1] = 0;
      return;
    }
    case DType::i8: static_cast<int8_t*>(p)[i] = static_cast<int8_t>(v); return;
    case DType::u8: static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(v); return;
    case DType::i16: static_cast<int16_t*>(p)[i] = static_cast<int16_t>(v); return;
    case DType::i32: static_cast<int32_t*>(p)[i] = static_cast<int32_t>(v); return;
    case DType::i64: static_cast<int64_t*>(p)[i] = v; return;
    case DType::boolean: static_cast<uint8_t*>(p)[i] = v != 0; return;
    case DType::i4: {
      uint8_t& byte = static_cast<uint8_t*>(p)[i / 2];
      uint8_t nib = static_cast<uint8_t>(v) & 0xf;
      byte = (i & 1) ? static_cast<uint8_t>((byte & 0x0f) | (nib << 4)) : static_cast<uint8_t>((byte & 0xf0) | nib);
      return;
    }
  }
}

inline void store_f64(void* p, DType t, int64_t i, double v) {
  switch (t) {
    case DType::f32: static_cast<float*>(p)[i] = static_cast<float>(v); return;
    case DType::f64: static_cast<double*>(p)[i] = v; return;
    case DType::f16: static_cast<uint16_t*>(p)[i] = f32_to_f16(static_cast<float>(v)); return;
    case DType::bf16: static_cast<uint16_t*>(p)[i] = f32_to_bf16(static_cast<float>(v)); return;
    case DType::c64: {
      float* f = static_cast<float*>(p);
      f[2 * i] = static_cast<float>(v);
      f[2 * i + 1] = 0;
      return;
    }
    case DType::c128: {
      double* f = static_cast<double*>(p);
      f[2 * i] = v;
      f[2 * i + 1] = 0;
      return;
    }
    case DType::boolean: static_cast<uint8_t*>(p)[i] = v != 0; return;
    case DType::i8: store_i64(p, t, i, saturate_to_int<int8_t>(v)); return;
    case DType::u8: store_i64(p, t, i, saturate_to_int<uint8_t>(v)); return;
    case DType::i16: store_i64(p, t, i, saturate_to_int<int16_t>(v)); return;
    case DType::i32: store_i64(p, t, i, saturate_to_int<int32_t>(v)); return;
    case DType::i64: store_i64(p, t, i, saturate_to_int<int64_t>(v)); return;
    case DType::i4: {
      double c = std::isnan(v) ? 0 : std::fmax(-8.0, std::fmin(7.0, std::trunc(v)));
      store_i64(p, t, i, static_cast<int64_t>(c));
      return;
    }
  }
}

inline void store_c128(void* p, DType t, int64_t i, c128 v) {
  if (t == DType::c64) {
    float* f = static_cast<float*>(p);
    f[2 * i] = static_cast<float>(v.real());
    f[2 * i + 1] = static_cast<float>(v.imag());
  } else if (t == DType::c128) {
    double* f = static_cast<double*>(p);
    f[2 * i] = v.real();
    f[2 * i + 1] = v.imag();
  } else {
    store_f64(p, t, i, v.real());
  }
}

}  // namespace rlx
