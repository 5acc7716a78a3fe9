#include "text/jinja/value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "rlx/error.h"
#include "text/utf8.h"
#include "util/strings.h"

namespace rlx::text::jinja {

const Value* Dict::find(const std::string& key) const {
  for (const auto& [k, v] : items)
    if (k == key) return &v;
  return nullptr;
}

void Dict::set(const std::string& key, Value v) {
  for (auto& [k, old] : items)
    if (k == key) {
      old = std::move(v);
      return;
    }
  items.emplace_back(key, std::move(v));
}

Value Value::undefined(std::string name) {
  Value v;
  v.undefined_name = std::move(name);
  return v;
}
Value Value::none() {
  Value v;
  v.kind = Kind::none;
  return v;
}
Value Value::boolean(bool x) {
  Value v;
  v.kind = Kind::boolean, v.b = x;
  return v;
}
Value Value::integer(int64_t x) {
  Value v;
  v.kind = Kind::integer, v.i = x;
  return v;
}
Value Value::number(double x) {
  Value v;
  v.kind = Kind::number, v.d = x;
  return v;
}
Value Value::string(std::string x) {
  Value v;
  v.kind = Kind::string, v.s = std::move(x);
  return v;
}
namespace {
void check_nesting(int nesting) {
  if (nesting > Value::kMaxNesting)
    throw Error(ErrorKind::invalid_argument, cat("chat template: lists and dicts nested deeper than ", Value::kMaxNesting, " levels"));
}
}  // namespace

Value Value::make_list(List x) {
  Value v;
  v.kind = Kind::list;
  for (const Value& e : x) v.nesting = std::max(v.nesting, e.nesting + 1);
  check_nesting(v.nesting);
  v.list = std::make_shared<List>(std::move(x));
  return v;
}
Value Value::make_dict(Dict x) {
  Value v;
  v.kind = Kind::dict;
  for (const auto& kv : x.items) v.nesting = std::max(v.nesting, kv.second.nesting + 1);
  check_nesting(v.nesting);
  v.dict = std::make_shared<Dict>(std::move(x));
  return v;
}
Value Value::callable(std::string name, std::function<Value(Interpreter&, List&, KwArgs&)> fn) {
  Value v;
  v.kind = Kind::callable, v.fn = std::make_shared<Callable>(Callable{std::move(name), std::move(fn)});
  return v;
}

Value Value::from_json(const nlohmann::ordered_json& j, int depth) {
  if (depth > kMaxJsonDepth) throw Error(ErrorKind::invalid_argument, cat("a chat template's variables nest deeper than ", kMaxJsonDepth, " levels"));
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::null: return none();
    case nlohmann::ordered_json::value_t::boolean: return boolean(j.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer: return integer(j.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned: return integer(static_cast<int64_t>(j.get<uint64_t>()));
    case nlohmann::ordered_json::value_t::number_float: return number(j.get<double>());
    case nlohmann::ordered_json::value_t::string: return string(j.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      List l;
      for (const auto& e : j) l.push_back(from_json(e, depth + 1));
      return make_list(std::move(l));
    }
    case nlohmann::ordered_json::value_t::object: {
      Dict d;
      for (const auto& [k, e] : j.items()) d.items.emplace_back(k, from_json(e, depth + 1));
      return make_dict(std::move(d));
    }
    default: return undefined();
  }
}

double Value::as_double() const { return kind == Kind::number ? d : kind == Kind::integer ? static_cast<double>(i) : (b ? 1.0 : 0.0); }

const char* kind_name(Value::Kind k) {
  switch (k) {
    case Value::Kind::undefined: return "Undefined";
    case Value::Kind::none: return "NoneType";
    case Value::Kind::boolean: return "bool";
    case Value::Kind::integer: return "int";
    case Value::Kind::number: return "float";
    case Value::Kind::string: return "str";
    case Value::Kind::list: return "list";
    case Value::Kind::dict: return "dict";
    case Value::Kind::callable: return "function";
  }
  return "?";
}

bool truthy(const Value& v) {
  switch (v.kind) {
    case Value::Kind::undefined:
    case Value::Kind::none: return false;
    case Value::Kind::boolean: return v.b;
    case Value::Kind::integer: return v.i != 0;
    case Value::Kind::number: return v.d != 0;
    case Value::Kind::string: return !v.s.empty();
    case Value::Kind::list: return !v.list->empty();
    case Value::Kind::dict: return !v.dict->items.empty();
    case Value::Kind::callable: return true;
  }
  return false;
}

std::string python_float(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
  if (d == 0) return std::signbit(d) ? "-0.0" : "0.0";
  // The shortest digits that round-trip, then Python's layout: scientific when the exponent is
  // below −4 or at least 16, positional otherwise (float_repr_style 'short').
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string sci(buf, r.ptr);
  size_t e = sci.find('e');
  std::string mant = sci.substr(0, e);
  int exp = std::stoi(sci.substr(e + 1));
  bool neg = mant[0] == '-';
  if (neg) mant.erase(0, 1);
  std::string digits;
  for (char c : mant)
    if (c != '.') digits += c;
  std::string out;
  if (exp < -4 || exp >= 16) {
    out = digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char eb[16];
    std::snprintf(eb, sizeof eb, "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
    out += eb;
  } else if (exp < 0) {
    out = "0." + std::string(static_cast<size_t>(-exp - 1), '0') + digits;
  } else {
    auto n = static_cast<size_t>(exp + 1);
    if (digits.size() <= n) out = digits + std::string(n - digits.size(), '0') + ".0";
    else out = digits.substr(0, n) + "." + digits.substr(n);
  }
  return neg ? "-" + out : out;
}

namespace {

std::string repr_string(const std::string& s) {
  bool has_single = s.find('\'') != std::string::npos, has_double = s.find('"') != std::string::npos;
  char q = has_single && !has_double ? '"' : '\'';
  std::string out(1, q);
  for (unsigned char c : s) {
    if (c == static_cast<unsigned char>(q) || c == '\\') out += '\\', out += static_cast<char>(c);
    else if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20 || c == 0x7f) {
      char b[8];
      std::snprintf(b, sizeof b, "\\x%02x", c);
      out += b;
    } else out += static_cast<char>(c);
  }
  return out + q;
}

void json_string(std::string& out, const std::string& s, bool ascii) {
  out += '"';
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c == '"') out += "\\\"", ++i;
    else if (c == '\\') out += "\\\\", ++i;
    else if (c == '\n') out += "\\n", ++i;
    else if (c == '\r') out += "\\r", ++i;
    else if (c == '\t') out += "\\t", ++i;
    else if (c == '\b') out += "\\b", ++i;
    else if (c == '\f') out += "\\f", ++i;
    else if (c < 0x20 || (ascii && c == 0x7f)) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", c);
      out += b, ++i;
    } else if (c < 0x80 || !ascii) {
      out += static_cast<char>(c), ++i;
    } else {
      char32_t cp = utf8_next(s, i);
      auto put = [&](unsigned u) {
        char b[8];
        std::snprintf(b, sizeof b, "\\u%04x", u);
        out += b;
      };
      if (cp >= 0x10000) {
        cp -= 0x10000;
        put(0xd800 + (static_cast<unsigned>(cp) >> 10)), put(0xdc00 + (static_cast<unsigned>(cp) & 0x3ff));
      } else {
        put(static_cast<unsigned>(cp));
      }
    }
  }
  out += '"';
}

void json_value(std::string& out, const Value& v, const JsonStyle& st, int depth) {
  std::string item_sep = !st.item_sep.empty() ? st.item_sep : (st.indent >= 0 ? "," : ", ");
  std::string key_sep = !st.key_sep.empty() ? st.key_sep : ": ";
  auto newline = [&](int d) {
    if (st.indent >= 0) out += "\n" + std::string(static_cast<size_t>(st.indent * d), ' ');
  };
  switch (v.kind) {
    case Value::Kind::none: out += "null"; return;
    case Value::Kind::boolean: out += v.b ? "true" : "false"; return;
    case Value::Kind::integer: out += std::to_string(v.i); return;
    case Value::Kind::number:
      out += std::isnan(v.d) ? "NaN" : std::isinf(v.d) ? (v.d < 0 ? "-Infinity" : "Infinity") : python_float(v.d);
      return;
    case Value::Kind::string: json_string(out, v.s, st.ensure_ascii); return;
    case Value::Kind::list: {
      if (v.list->empty()) {
        out += "[]";
        return;
      }
      out += '[';
      for (size_t k = 0; k < v.list->size(); ++k) {
        if (k) out += item_sep;
        newline(depth + 1);
        json_value(out, (*v.list)[k], st, depth + 1);
      }
      newline(depth);
      out += ']';
      return;
    }
    case Value::Kind::dict: {
      // a namespace may hold itself (set ns.me = ns): not JSON, as in Python
      if (v.dict->is_namespace) throw Error(ErrorKind::invalid_argument, "tojson: Object of type Namespace is not JSON serializable");
      if (v.dict->items.empty()) {
        out += "{}";
        return;
      }
      std::vector<const std::pair<std::string, Value>*> items;
      for (const auto& kv : v.dict->items) items.push_back(&kv);
      if (st.sort_keys) std::stable_sort(items.begin(), items.end(), [](auto* a, auto* b) { return a->first < b->first; });
      out += '{';
      for (size_t k = 0; k < items.size(); ++k) {
        if (k) out += item_sep;
        newline(depth + 1);
        json_string(out, items[k]->first, st.ensure_ascii);
        out += key_sep;
        json_value(out, items[k]->second, st, depth + 1);
      }
      newline(depth);
      out += '}';
      return;
    }
    case Value::Kind::undefined: throw Error(ErrorKind::invalid_argument, "tojson: Object of type Undefined is not JSON serializable");
    case Value::Kind::callable: throw Error(ErrorKind::invalid_argument, "tojson: Object of type function is not JSON serializable");
  }
}

}  // namespace

std::string repr(const Value& v) {
  switch (v.kind) {
    case Value::Kind::string: return repr_string(v.s);
    case Value::Kind::list: {
      std::string out = v.tuple ? "(" : "[";
      for (size_t k = 0; k < v.list->size(); ++k) out += (k ? ", " : "") + repr((*v.list)[k]);
      if (v.tuple) return out + (v.list->size() == 1 ? ",)" : ")");
      return out + "]";
    }
    case Value::Kind::dict: {
      if (v.dict->is_namespace) return "<Namespace>";
      std::string out = "{";
      for (size_t k = 0; k < v.dict->items.size(); ++k)
        out += (k ? ", " : "") + repr_string(v.dict->items[k].first) + ": " + repr(v.dict->items[k].second);
      return out + "}";
    }
    default: return str(v);
  }
}

std::string str(const Value& v) {
  switch (v.kind) {
    case Value::Kind::undefined: return "";
    case Value::Kind::none: return "None";
    case Value::Kind::boolean: return v.b ? "True" : "False";
    case Value::Kind::integer: return std::to_string(v.i);
    case Value::Kind::number: return python_float(v.d);
    case Value::Kind::string: return v.s;
    case Value::Kind::callable: return cat("<function ", v.fn->name, ">");
    default: return repr(v);
  }
}

bool equal(const Value& a, const Value& b) {
  if (a.is_numeric() && b.is_numeric()) {
    if (a.kind != Value::Kind::number && b.kind != Value::Kind::number) return (a.kind == Value::Kind::integer ? a.i : a.b) == (b.kind == Value::Kind::integer ? b.i : b.b);
    return a.as_double() == b.as_double();
  }
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case Value::Kind::undefined:
    case Value::Kind::none: return true;
    case Value::Kind::string: return a.s == b.s;
    case Value::Kind::list: {
      if (a.list->size() != b.list->size()) return false;
      for (size_t k = 0; k < a.list->size(); ++k)
        if (!equal((*a.list)[k], (*b.list)[k])) return false;
      return true;
    }
    case Value::Kind::dict: {
      if (a.dict->is_namespace || b.dict->is_namespace) return a.dict == b.dict;  // Python compares namespaces by identity
      if (a.dict->items.size() != b.dict->items.size()) return false;
      for (const auto& [k, v] : a.dict->items) {
        const Value* o = b.dict->find(k);
        if (!o || !equal(v, *o)) return false;
      }
      return true;
    }
    case Value::Kind::callable: return a.fn == b.fn;
    default: return false;
  }
}

bool less(const Value& a, const Value& b) {
  if (a.is_numeric() && b.is_numeric()) return a.as_double() < b.as_double();
  if (a.is_string() && b.is_string()) return a.s < b.s;  // UTF-8 byte order is code point order
  if (a.is_list() && b.is_list()) {
    for (size_t k = 0; k < std::min(a.list->size(), b.list->size()); ++k) {
      if (less((*a.list)[k], (*b.list)[k])) return true;
      if (less((*b.list)[k], (*a.list)[k])) return false;
    }
    return a.list->size() < b.list->size();
  }
  throw Error(ErrorKind::invalid_argument, cat("'<' not supported between instances of '", kind_name(a.kind), "' and '", kind_name(b.kind), "'"));
}

std::string to_json(const Value& v, const JsonStyle& style) {
  std::string out;
  json_value(out, v, style, 0);
  return out;
}

std::vector<std::string> code_points(const std::string& s) {
  std::vector<std::string> out;
  for (size_t i = 0; i < s.size();) {
    size_t start = i;
    utf8_next(s, i);
    out.push_back(s.substr(start, i - start));
  }
  return out;
}

int64_t length(const Value& v) {
  switch (v.kind) {
    case Value::Kind::undefined: return 0;
    case Value::Kind::string: return static_cast<int64_t>(utf8_char_count(v.s));
    case Value::Kind::list: return static_cast<int64_t>(v.list->size());
    case Value::Kind::dict: return static_cast<int64_t>(v.dict->items.size());
    default: throw Error(ErrorKind::invalid_argument, cat("object of type '", kind_name(v.kind), "' has no len()"));
  }
}

}  // namespace rlx::text::jinja
