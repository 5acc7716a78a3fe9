#include "formats/gguf_value.h"

#include <cmath>

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::formats {

namespace {

// Element i of a packed number/bool array, as a scalar GgufValue.
GgufValue raw_element(GgufType t, const uint8_t* p) {
  auto load = [p](auto v) {
    std::memcpy(&v, p, sizeof(v));
    return GgufValue(v);
  };
  switch (t) {
    case GgufType::u8: return load(uint8_t{});
    case GgufType::i8: return load(int8_t{});
    case GgufType::u16: return load(uint16_t{});
    case GgufType::i16: return load(int16_t{});
    case GgufType::u32: return load(uint32_t{});
    case GgufType::i32: return load(int32_t{});
    case GgufType::f32: return load(float{});
    case GgufType::boolean: return GgufValue(*p != 0);
    case GgufType::u64: return load(uint64_t{});
    case GgufType::i64: return load(int64_t{});
    case GgufType::f64: return load(double{});
    default: throw Error(ErrorKind::internal, "raw_element of a non-number type");
  }
}

template <class F>
void for_each_element(const GgufArray& a, F&& f) {
  size_t es = gguf_type_size(a.elem);
  if (es) {
    for (size_t i = 0; i + es <= a.raw.size(); i += es) f(raw_element(a.elem, a.raw.data() + i));
  } else if (a.elem == GgufType::string) {
    for (const auto& s : a.strings) f(GgufValue(s));
  } else {
    for (const auto& v : a.arrays) f(v);
  }
}

}  // namespace

const char* gguf_type_name(GgufType t) {
  static const char* names[] = {"uint8", "int8",   "uint16", "int16",  "uint32", "int32",  "float32",
                                "bool",  "string", "array",  "uint64", "int64",  "float64"};
  auto i = static_cast<uint32_t>(t);
  return i < 13 ? names[i] : "unknown";
}

size_t gguf_type_size(GgufType t) {
  switch (t) {
    case GgufType::u8: case GgufType::i8: case GgufType::boolean: return 1;
    case GgufType::u16: case GgufType::i16: return 2;
    case GgufType::u32: case GgufType::i32: case GgufType::f32: return 4;
    case GgufType::u64: case GgufType::i64: case GgufType::f64: return 8;
    default: return 0;
  }
}

size_t GgufArray::size() const {
  size_t es = gguf_type_size(elem);
  if (es) return raw.size() / es;
  return elem == GgufType::string ? strings.size() : arrays.size();
}

bool GgufValue::is_integer() const {
  switch (type()) {
    case GgufType::u8: case GgufType::i8: case GgufType::u16: case GgufType::i16: case GgufType::u32:
    case GgufType::i32: case GgufType::u64: case GgufType::i64: return true;
    default: return false;
  }
}

std::optional<int64_t> GgufValue::as_int() const {
  if (!is_integer()) return std::nullopt;
  if (auto* u = std::get_if<uint64_t>(&v)) {
    if (*u > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
    return static_cast<int64_t>(*u);
  }
  return std::visit([](auto x) -> int64_t {
    if constexpr (std::is_integral_v<decltype(x)>) return static_cast<int64_t>(x);
    else return 0;
  }, v);
}

std::optional<uint64_t> GgufValue::as_uint() const {
  if (auto* u = std::get_if<uint64_t>(&v)) return *u;
  auto i = as_int();
  if (!i || *i < 0) return std::nullopt;
  return static_cast<uint64_t>(*i);
}

std::optional<double> GgufValue::as_double() const {
  if (auto* f = std::get_if<float>(&v)) return *f;
  if (auto* d = std::get_if<double>(&v)) return *d;
  if (auto* u = std::get_if<uint64_t>(&v)) return static_cast<double>(*u);
  if (auto i = as_int()) return static_cast<double>(*i);
  return std::nullopt;
}

nlohmann::json GgufValue::to_json() const {
  switch (type()) {
    case GgufType::f32:
    case GgufType::f64: {
      double d = *as_double();
      return std::isfinite(d) ? nlohmann::json(d) : nlohmann::json(nullptr);
    }
    case GgufType::boolean: return std::get<bool>(v);
    case GgufType::string: return std::get<std::string>(v);
    case GgufType::u64: return std::get<uint64_t>(v);
    case GgufType::array: {
      nlohmann::json out = nlohmann::json::array();
      for_each_element(std::get<GgufArray>(v), [&](const GgufValue& e) { out.push_back(e.to_json()); });
      return out;
    }
    default: return *as_int();
  }
}

std::string GgufValue::summary(size_t max_items) const {
  if (const GgufArray* a = as_array()) {
    std::string out = cat("[", a->size(), " × ", gguf_type_name(a->elem), ": ");
    size_t i = 0;
    bool stop = false;
    for_each_element(*a, [&](const GgufValue& e) {
      if (stop) return;
      if (i == max_items) {
        out += ", …";
        stop = true;
        return;
      }
      if (i++) out += ", ";
      out += e.summary(max_items);
    });
    return out + "]";
  }
  if (const std::string* s = as_string()) {
    std::string q = json_quote(*s);
    return q.size() > 80 ? q.substr(0, 77) + "…\"" : q;
  }
  if (type() == GgufType::boolean) return std::get<bool>(v) ? "true" : "false";
  if (is_float()) return format_double(*as_double());
  if (auto* u = std::get_if<uint64_t>(&v)) return std::to_string(*u);
  return std::to_string(*as_int());
}

GgufValue gguf_array(const std::vector<std::string>& items) {
  GgufArray a;
  a.elem = GgufType::string;
  a.strings = items;
  return GgufValue(std::move(a));
}

GgufValue gguf_array(const std::vector<GgufValue>& items) {
  GgufArray a;
  a.elem = items.empty() ? GgufType::u8 : items[0].type();
  for (const auto& it : items) {
    if (it.type() != a.elem)
      throw Error(ErrorKind::invalid_argument, cat("a GGUF array holds one type; got ", gguf_type_name(a.elem),
                                                   " and ", gguf_type_name(it.type())));
    if (size_t es = gguf_type_size(a.elem)) {
      size_t at = a.raw.size();
      a.raw.resize(at + es);
      std::visit([&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, bool>) a.raw[at] = x ? 1 : 0;
        else if constexpr (std::is_arithmetic_v<T>) std::memcpy(a.raw.data() + at, &x, sizeof(T));
      }, it.v);
    } else if (a.elem == GgufType::string) {
      a.strings.push_back(*it.as_string());
    } else {
      a.arrays.push_back(it);
    }
  }
  return GgufValue(std::move(a));
}

}  // namespace rlx::formats
