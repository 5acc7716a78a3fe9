// GGUF metadata values: the 13 value types of the GGUF spec, arrays (of any type, nested
// included) kept compact: numbers as their packed little-endian bytes, not one node each.
#pragma once
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace rlx::formats {

enum class GgufType : uint32_t {
  u8 = 0, i8 = 1, u16 = 2, i16 = 3, u32 = 4, i32 = 5, f32 = 6, boolean = 7,
  string = 8, array = 9, u64 = 10, i64 = 11, f64 = 12,
};
const char* gguf_type_name(GgufType t);  // "uint32", "string", "array" … as gguf.md names them
// Bytes of one element of a number/bool type; 0 for string and array.
size_t gguf_type_size(GgufType t);

struct GgufValue;

struct GgufArray {
  GgufType elem = GgufType::u8;
  std::vector<uint8_t> raw;             // number and bool elements, packed as in the file
  std::vector<std::string> strings;     // string elements
  std::vector<GgufValue> arrays;        // array elements (each a GgufValue holding a GgufArray)

  size_t size() const;
};

// The variant's index is the GgufType id, so type() is just index().
using GgufVariant = std::variant<uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, float, bool, std::string,
                                 GgufArray, uint64_t, int64_t, double>;

struct GgufValue {
  GgufVariant v;

  GgufValue() = default;
  template <class T, class = std::enable_if_t<std::is_constructible_v<GgufVariant, T&&> &&
                                              !std::is_same_v<std::decay_t<T>, GgufValue>>>
  GgufValue(T&& x) : v(std::forward<T>(x)) {}  // NOLINT: GgufValue{uint32_t{5}}, GgufValue{std::string("x")}
  GgufValue(const char* s) : v(std::string(s)) {}  // NOLINT

  GgufType type() const { return static_cast<GgufType>(v.index()); }
  bool is_integer() const;
  bool is_float() const { return type() == GgufType::f32 || type() == GgufType::f64; }
  // Typed reads that accept any integer type whose value fits.
  std::optional<int64_t> as_int() const;
  std::optional<uint64_t> as_uint() const;
  std::optional<double> as_double() const;  // integers and floats
  const std::string* as_string() const { return std::get_if<std::string>(&v); }
  const GgufArray* as_array() const { return std::get_if<GgufArray>(&v); }

  // JSON: numbers, strings, booleans, arrays (NaN and infinities become null).
  nlohmann::json to_json() const;
  // One line for humans; arrays longer than `max_items` are elided.
  std::string summary(size_t max_items = 8) const;
};

// Builders for arrays of one element type.
GgufValue gguf_array(const std::vector<std::string>& items);
GgufValue gguf_array(const std::vector<GgufValue>& items);  // all items of one type; nested allowed
template <class T>
GgufValue gguf_array_of(GgufType elem, const std::vector<T>& items) {
  GgufArray a;
  a.elem = elem;
  a.raw.resize(items.size() * sizeof(T));
  if (!items.empty()) std::memcpy(a.raw.data(), items.data(), a.raw.size());
  return GgufValue(std::move(a));
}

}  // namespace rlx::formats
