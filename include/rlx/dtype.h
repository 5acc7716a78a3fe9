// Element types. i4 is storage only (two values per byte, low nibble first). c64 and c128 are
// complex numbers of two f32 / two f64 (real part first), as numpy's complex64 / complex128.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rlx {

#define RLX_DTYPES(X)      \
  X(f32, 32, float_)        \
  X(f16, 16, float_)        \
  X(bf16, 16, float_)       \
  X(f64, 64, float_)        \
  X(c64, 64, complex)      \
  X(i8, 8, signed_int)     \
  X(u8, 8, unsigned_int)   \
  X(i16, 16, signed_int)   \
  X(i32, 32, signed_int)   \
  X(i64, 64, signed_int)   \
  X(boolean, 8, boolean)   \
  X(i4, 4, signed_int)      \
  X(c128, 128, complex)

enum class DType : uint8_t {
#define X(name, bits, cls) name,
  RLX_DTYPES(X)
#undef X
};
constexpr int kNumDTypes = 13;

enum class DTypeClass : uint8_t { float_, complex, signed_int, unsigned_int, boolean };

// Text name: "f32", "bool", "i4" …
const char* dtype_name(DType t);
std::optional<DType> dtype_from_name(std::string_view name);
int dtype_bits(DType t);
DTypeClass dtype_class(DType t);
// Bytes for n elements (rounds packed i4 up to whole bytes).
size_t dtype_bytes(DType t, int64_t n);
// Bytes of one element; 0 for i4 (packed, no whole-byte element).
size_t dtype_size(DType t);

inline bool is_float(DType t) { return dtype_class(t) == DTypeClass::float_; }
inline bool is_complex(DType t) { return t == DType::c64 || t == DType::c128; }
// The real type of a complex type's parts (c64 → f32, c128 → f64); other types unchanged.
inline DType real_part_dtype(DType t) { return t == DType::c64 ? DType::f32 : t == DType::c128 ? DType::f64 : t; }
// The complex type whose parts are `t` (f32 → c64, f64 → c128); nullopt for other types.
inline std::optional<DType> complex_dtype_of(DType t) {
  if (t == DType::f32) return DType::c64;
  if (t == DType::f64) return DType::c128;
  return std::nullopt;
}
inline bool is_integer(DType t) {
  auto c = dtype_class(t);
  return c == DTypeClass::signed_int || c == DTypeClass::unsigned_int;
}
inline bool is_bool(DType t) { return t == DType::boolean; }
// Everything arithmetic works on: floats, complex and integers (i4 excluded: storage only).
inline bool is_numeric(DType t) { return t != DType::boolean && t != DType::i4; }

}  // namespace rlx
