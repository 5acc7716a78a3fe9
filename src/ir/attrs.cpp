#include "ir/attrs.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <functional>
#include <limits>

#include "rlx/error.h"
#include "ir/tensor_text.h"
#include "util/strings.h"

namespace rlx::ir {

bool attr_equal(const AttrValue& a, const AttrValue& b) {
  if (a.index() != b.index()) return false;
  if (auto* ta = std::get_if<Tensor>(&a)) return ta->bytes_equal(std::get<Tensor>(b));
  if (auto* da = std::get_if<double>(&a)) {
    double x = *da, y = std::get<double>(b);
    return std::memcmp(&x, &y, sizeof(double)) == 0;  // NaN-safe, -0 distinct
  }
  return std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, Tensor>) return false;  // handled above
        else return x == std::get<T>(b);
      },
      a);
}

size_t attr_hash(const AttrValue& v) {
  size_t h = v.index() * 0x9e3779b97f4a7c15ull;
  auto mix = [&](size_t x) { h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); };
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, int64_t> || std::is_same_v<T, double>) {
          mix(std::hash<T>()(x));
        } else if constexpr (std::is_same_v<T, std::string>) {
          mix(std::hash<std::string>()(x));
        } else if constexpr (std::is_same_v<T, Ints>) {
          for (auto e : x) mix(std::hash<int64_t>()(e));
        } else if constexpr (std::is_same_v<T, Intss>) {
          for (const auto& r : x) {
            mix(r.size());
            for (auto e : r) mix(std::hash<int64_t>()(e));
          }
        } else if constexpr (std::is_same_v<T, DType>) {
          mix(static_cast<size_t>(x));
        } else if constexpr (std::is_same_v<T, Shape>) {
          for (const auto& d : x) mix(std::hash<std::string>()(d.str()));
        } else {
          // dtype, size and a sample of the bytes: equal-shaped weights must not collide
          // (CSE would compare megabytes for every pair).
          mix(static_cast<size_t>(x.dtype()));
          mix(static_cast<size_t>(x.numel()));
          Tensor c = x.contiguous();
          const uint8_t* p = static_cast<const uint8_t*>(c.data());
          size_t n = c.nbytes();
          for (size_t i = 0; i < n && i < 64; ++i) mix(p[i]);
          for (size_t i = n > 64 ? n - 64 : 0; i < n; ++i) mix(p[i]);
          for (size_t i = 0; i < 64 && n > 0; ++i) mix(p[(i * 2654435761u) % n]);
        }
      },
      v);
  return h;
}

bool attr_has_type(const AttrValue& v, const AttrSpec& spec) {
  switch (spec.type) {
    case AttrType::Int: return std::holds_alternative<int64_t>(v);
    case AttrType::Float: return std::holds_alternative<double>(v);
    case AttrType::Bool: return std::holds_alternative<bool>(v);
    case AttrType::Str: return std::holds_alternative<std::string>(v);
    case AttrType::Enum: {
      auto* s = std::get_if<std::string>(&v);
      return s && std::find(spec.choices.begin(), spec.choices.end(), *s) != spec.choices.end();
    }
    case AttrType::Ints: return std::holds_alternative<Ints>(v);
    case AttrType::Intss: return std::holds_alternative<Intss>(v);
    case AttrType::DType: return std::holds_alternative<DType>(v);
    case AttrType::Dims: return std::holds_alternative<Shape>(v);
    case AttrType::Tensor: return std::holds_alternative<Tensor>(v);
  }
  return false;
}

static std::string ints_text(const Ints& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + std::to_string(v[i]);
  return out + "]";
}

std::string attr_to_text(const AttrValue& v, AttrType type) {
  switch (type) {
    case AttrType::Int: return std::to_string(std::get<int64_t>(v));
    case AttrType::Float: return format_double(std::get<double>(v));
    case AttrType::Bool: return std::get<bool>(v) ? "true" : "false";
    case AttrType::Str: return json_quote(std::get<std::string>(v));
    case AttrType::Enum: return std::get<std::string>(v);
    case AttrType::Ints: return ints_text(std::get<Ints>(v));
    case AttrType::Intss: {
      const auto& x = std::get<Intss>(v);
      std::string out = "[";
      for (size_t i = 0; i < x.size(); ++i) out += (i ? "," : "") + ints_text(x[i]);
      return out + "]";
    }
    case AttrType::DType: return dtype_name(std::get<DType>(v));
    case AttrType::Dims: return shape_str(std::get<Shape>(v));
    case AttrType::Tensor: return tensor_to_text(std::get<Tensor>(v));
  }
  return "?";
}

namespace {

struct AttrTextParser {
  std::string_view s;
  const std::string& what;
  size_t i = 0;

  [[noreturn]] void fail(const std::string& msg) const {
    throw Error(ErrorKind::parse, cat("attribute ", what, ": ", msg, " in '", s, "'"));
  }
  void skip() {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  }
  void expect(char c) {
    skip();
    if (i >= s.size() || s[i] != c) fail(cat("expected '", c, "'"));
    ++i;
  }
  bool peek(char c) {
    skip();
    return i < s.size() && s[i] == c;
  }
  int64_t integer() {
    skip();
    size_t b = i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    int64_t v = 0;
    auto r = std::from_chars(s.data() + (s[b] == '+' ? b + 1 : b), s.data() + i, v);
    if (r.ec != std::errc() || b == i) fail("expected an integer");
    return v;
  }
  Ints ints() {
    Ints out;
    expect('[');
    if (peek(']')) {
      ++i;
      return out;
    }
    for (;;) {
      out.push_back(integer());
      if (peek(',')) {
        ++i;
        continue;
      }
      expect(']');
      return out;
    }
  }
  void done() {
    skip();
    if (i != s.size()) fail("unexpected trailing text");
  }
};

}  // namespace

AttrValue attr_from_text(std::string_view text, const AttrSpec& spec, const std::string& what) {
  AttrTextParser p{text, what};
  text = trim(text);
  p.s = text;
  switch (spec.type) {
    case AttrType::Int: {
      int64_t v = p.integer();
      p.done();
      return v;
    }
    case AttrType::Float: {
      std::string t(text);
      if (t == "nan") return std::numeric_limits<double>::quiet_NaN();
      if (t == "inf") return std::numeric_limits<double>::infinity();
      if (t == "-inf") return -std::numeric_limits<double>::infinity();
      double v = 0;
      auto r = std::from_chars(t.data(), t.data() + t.size(), v);
      if (r.ec != std::errc() || r.ptr != t.data() + t.size()) p.fail("expected a number");
      return v;
    }
    case AttrType::Bool:
      if (text == "true") return true;
      if (text == "false") return false;
      p.fail("expected true or false");
    case AttrType::Str: {
      if (text.size() < 2 || text.front() != '"' || text.back() != '"') p.fail("expected a quoted string");
      std::string out;
      for (size_t k = 1; k + 1 < text.size(); ++k) {
        char c = text[k];
        if (c == '\\' && k + 2 < text.size()) {
          char n = text[++k];
          if (n == 'n') out += '\n';
          else if (n == 't') out += '\t';
          else if (n == 'r') out += '\r';
          else if (n == 'u' && k + 4 < text.size()) {
            out += static_cast<char>(std::stoi(std::string(text.substr(k + 1, 4)), nullptr, 16));
            k += 4;
          } else out += n;
        } else {
          out += c;
        }
      }
      return out;
    }
    case AttrType::Enum: {
      std::string v(text);
      if (std::find(spec.choices.begin(), spec.choices.end(), v) == spec.choices.end())
        p.fail(cat("'", v, "' is not one of ", join(spec.choices, "|")));
      return v;
    }
    case AttrType::Ints: {
      Ints v = p.ints();
      p.done();
      return v;
    }
    case AttrType::Intss: {
      Intss out;
      p.expect('[');
      if (p.peek(']')) {
        ++p.i;
      } else {
        for (;;) {
          out.push_back(p.ints());
          if (p.peek(',')) {
            ++p.i;
            continue;
          }
          p.expect(']');
          break;
        }
      }
      p.done();
      return out;
    }
    case AttrType::DType: {
      auto d = dtype_from_name(text);
      if (!d) p.fail(cat("unknown dtype '", text, "'"));
      return *d;
    }
    case AttrType::Dims: {
      if (text.size() < 2 || text.front() != '[' || text.back() != ']') p.fail("expected [dim,…]");
      Shape out;
      std::string_view inner = trim(text.substr(1, text.size() - 2));
      if (!inner.empty())
        for (const auto& part : split(inner, ',')) out.push_back(Dim::parse(trim(part)));
      return out;
    }
    case AttrType::Tensor: return tensor_from_text(text, what);
  }
  p.fail("unknown attribute type");
}

Attrs::Attrs(std::initializer_list<std::pair<std::string, AttrValue>> items) {
  for (const auto& [k, v] : items) set(k, v);
}

const AttrValue* Attrs::find(std::string_view key) const {
  auto it = std::lower_bound(items_.begin(), items_.end(), key, [](const auto& a, std::string_view k) { return a.first < k; });
  if (it != items_.end() && it->first == key) return &it->second;
  return nullptr;
}

void Attrs::set(const std::string& key, AttrValue v) {
  auto it = std::lower_bound(items_.begin(), items_.end(), key, [](const auto& a, const std::string& k) { return a.first < k; });
  if (it != items_.end() && it->first == key) it->second = std::move(v);
  else items_.insert(it, {key, std::move(v)});
}

void Attrs::erase(std::string_view key) {
  items_.erase(std::remove_if(items_.begin(), items_.end(), [&](const auto& a) { return a.first == key; }), items_.end());
}

template <class T>
const T& Attrs::get(std::string_view key, const char* type) const {
  const AttrValue* v = find(key);
  if (!v) throw Error(ErrorKind::invalid_graph, cat("attribute '", key, "' is missing"));
  const T* t = std::get_if<T>(v);
  if (!t) throw Error(ErrorKind::invalid_graph, cat("attribute '", key, "' is not of type ", type));
  return *t;
}

int64_t Attrs::i(std::string_view k) const { return get<int64_t>(k, "int"); }
double Attrs::f(std::string_view k) const { return get<double>(k, "float"); }
bool Attrs::b(std::string_view k) const { return get<bool>(k, "bool"); }
const std::string& Attrs::s(std::string_view k) const { return get<std::string>(k, "str"); }
const Ints& Attrs::ints(std::string_view k) const { return get<Ints>(k, "ints"); }
const Intss& Attrs::intss(std::string_view k) const { return get<Intss>(k, "intss"); }
DType Attrs::dtype(std::string_view k) const { return get<DType>(k, "dtype"); }
const Shape& Attrs::dims(std::string_view k) const { return get<Shape>(k, "dims"); }
const Tensor& Attrs::tensor(std::string_view k) const { return get<Tensor>(k, "tensor"); }

bool Attrs::operator==(const Attrs& o) const {
  if (items_.size() != o.items_.size()) return false;
  for (size_t i = 0; i < items_.size(); ++i)
    if (items_[i].first != o.items_[i].first || !attr_equal(items_[i].second, o.items_[i].second)) return false;
  return true;
}

size_t Attrs::hash() const {
  size_t h = items_.size();
  for (const auto& [k, v] : items_) h = h * 31 + std::hash<std::string>()(k) + attr_hash(v);
  return h;
}

void normalize_attrs(Op op, Attrs& attrs) {
  const OpInfo& info = op_info(op);
  for (const auto& [key, value] : attrs.items()) {
    const AttrSpec* spec = find_attr_spec(op, key);
    if (!spec) {
      std::vector<std::string> names;
      for (const auto& s : info.attrs) names.push_back(s.name);
      throw Error(ErrorKind::invalid_graph, cat(op_keyword(op), " has no attribute '", key, "'",
                                                names.empty() ? std::string(" (it takes none)") : cat(" (it takes ", join(names), ")")));
    }
    if (!attr_has_type(value, *spec)) {
      std::string hint = spec->type == AttrType::Enum ? cat(" (one of ", join(spec->choices, "|"), ")") : "";
      throw Error(ErrorKind::invalid_graph,
                  cat(op_keyword(op), " attribute '", key, "' must be ", attr_type_name(spec->type), hint));
    }
  }
  for (const auto& spec : info.attrs) {
    if (attrs.has(spec.name)) continue;
    if (!spec.default_text.empty()) {
      attrs.set(spec.name, attr_from_text(spec.default_text, spec, cat(op_name(op), ".", spec.name)));
    } else if (!spec.optional) {
      throw Error(ErrorKind::invalid_graph, cat(op_keyword(op), " needs attribute '", spec.name, "' (", attr_type_name(spec.type), ")"));
    }
  }
}

}  // namespace rlx::ir
