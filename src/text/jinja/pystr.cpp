// Python's str, its whitespace and case rules, and the value helpers jinja2's filters and the
// str/dict/list methods share.
#include "text/jinja/pystr.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include <utf8proc.h>

#include "rlx/error.h"
#include "text/utf8.h"
#include "util/strings.h"

namespace rlx::text::jinja {

namespace {

template <class F>
std::string map_cps(const std::string& s, F f) {
  std::string out;
  for (size_t i = 0; i < s.size();) utf8_append(out, f(utf8_next(s, i)));
  return out;
}

utf8proc_category_t category(char32_t c) { return utf8proc_category(static_cast<utf8proc_int32_t>(c)); }

}  // namespace

bool is_int(const Value& v) { return v.kind == Value::Kind::integer || v.kind == Value::Kind::boolean; }
int64_t as_int(const Value& v) { return v.kind == Value::Kind::integer ? v.i : (v.b ? 1 : 0); }

// Argument k of a call: positional, else by keyword, else the default.
Value arg(const List& args, const KwArgs& kw, size_t k, const char* name, Value def) {
  if (k < args.size()) return args[k];
  for (const auto& [n, v] : kw)
    if (n == name) return v;
  return def;
}

bool py_space(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' || c == 0x1c || c == 0x1d || c == 0x1e || c == 0x1f; }

// Python's str.isspace for one code point (UTF-8): ASCII's plus NEL, NBSP and Unicode's spaces.
bool py_space_cp(const std::string& cp) {
  if (cp.size() == 1) return py_space(static_cast<unsigned char>(cp[0]));
  size_t i = 0;
  char32_t c = utf8_next(cp, i);
  return c == 0x85 || c == 0xa0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
}

std::string strip(const std::string& s, const Value& chars, bool left, bool right) {
  auto drop = [&](const std::string& cp) {
    if (chars.is_undefined() || chars.is_none()) return py_space_cp(cp);
    return chars.s.find(cp) != std::string::npos;
  };
  std::vector<std::string> cps = code_points(s);
  size_t a = 0, b = cps.size();
  while (left && a < b && drop(cps[a])) ++a;
  while (right && b > a && drop(cps[b - 1])) --b;
  std::string out;
  for (size_t k = a; k < b; ++k) out += cps[k];
  return out;
}

// Python's case mappings and character classes, per code point (utf8proc's Unicode tables).
char32_t cp_lower(char32_t c) { return static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c))); }
char32_t cp_upper(char32_t c) { return static_cast<char32_t>(utf8proc_toupper(static_cast<utf8proc_int32_t>(c))); }
char32_t cp_title(char32_t c) { return static_cast<char32_t>(utf8proc_totitle(static_cast<utf8proc_int32_t>(c))); }
bool cp_cased(char32_t c) {
  auto k = category(c);
  return k == UTF8PROC_CATEGORY_LU || k == UTF8PROC_CATEGORY_LL || k == UTF8PROC_CATEGORY_LT;
}
bool cp_alpha(char32_t c) {
  auto k = category(c);
  return k == UTF8PROC_CATEGORY_LU || k == UTF8PROC_CATEGORY_LL || k == UTF8PROC_CATEGORY_LT || k == UTF8PROC_CATEGORY_LM || k == UTF8PROC_CATEGORY_LO;
}
bool cp_alnum(char32_t c) {
  auto k = category(c);
  return cp_alpha(c) || k == UTF8PROC_CATEGORY_ND || k == UTF8PROC_CATEGORY_NL || k == UTF8PROC_CATEGORY_NO;
}
bool cp_digit(char32_t c) { return category(c) == UTF8PROC_CATEGORY_ND; }

std::string lower(const std::string& s) { return map_cps(s, cp_lower); }
std::string upper(const std::string& s) { return map_cps(s, cp_upper); }
std::string capitalize(const std::string& s) {
  bool first = true;
  return map_cps(s, [&](char32_t c) {
    char32_t r = first ? cp_title(c) : cp_lower(c);
    first = false;
    return r;
  });
}
std::string title(const std::string& s) {
  bool prev_cased = false;
  return map_cps(s, [&](char32_t c) {
    char32_t r = prev_cased ? cp_lower(c) : cp_title(c);
    prev_cased = cp_cased(c);
    return r;
  });
}
bool istitle(const std::string& s) {
  bool prev_cased = false, any = false;
  for (size_t i = 0; i < s.size();) {
    char32_t c = utf8_next(s, i);
    auto k = category(c);
    if (k == UTF8PROC_CATEGORY_LU || k == UTF8PROC_CATEGORY_LT) {
      if (prev_cased) return false;
      prev_cased = any = true;
    } else if (k == UTF8PROC_CATEGORY_LL) {
      if (!prev_cased) return false;
      prev_cased = any = true;
    } else {
      prev_cased = false;
    }
  }
  return any;
}
bool all_cps(const std::string& s, bool (*p)(char32_t)) {
  if (s.empty()) return false;
  for (size_t i = 0; i < s.size();)
    if (!p(utf8_next(s, i))) return false;
  return true;
}

std::string replace(const std::string& s, const std::string& from, const std::string& to, int64_t count) {
  if (from.empty()) {  // Python inserts `to` around every code point
    std::string out;
    int64_t n = 0;
    for (const std::string& cp : code_points(s)) {
      if (count < 0 || n < count) out += to, ++n;
      out += cp;
    }
    if (count < 0 || n < count) out += to;
    return out;
  }
  std::string out;
  size_t pos = 0;
  int64_t n = 0;
  for (size_t hit; (count < 0 || n < count) && (hit = s.find(from, pos)) != std::string::npos; ++n) {
    out.append(s, pos, hit - pos);
    out += to;
    pos = hit + from.size();
  }
  out.append(s, pos, std::string::npos);
  return out;
}

List split(const std::string& s, const Value& sep, int64_t maxsplit) {
  List out;
  if (sep.is_undefined() || sep.is_none()) {
    size_t i = 0;
    while (true) {
      while (i < s.size() && py_space(static_cast<unsigned char>(s[i]))) ++i;
      if (i >= s.size()) break;
      if (maxsplit >= 0 && static_cast<int64_t>(out.size()) == maxsplit) {
        out.push_back(Value::string(strip(s.substr(i), Value::undefined(), false, true)));
        break;
      }
      size_t j = i;
      while (j < s.size() && !py_space(static_cast<unsigned char>(s[j]))) ++j;
      out.push_back(Value::string(s.substr(i, j - i)));
      i = j;
    }
    return out;
  }
  if (sep.s.empty()) throw Error(ErrorKind::invalid_argument, "empty separator");
  size_t pos = 0;
  for (size_t hit; (maxsplit < 0 || static_cast<int64_t>(out.size()) < maxsplit) && (hit = s.find(sep.s, pos)) != std::string::npos;) {
    out.push_back(Value::string(s.substr(pos, hit - pos)));
    pos = hit + sep.s.size();
  }
  out.push_back(Value::string(s.substr(pos)));
  return out;
}

List splitlines(const std::string& s) {
  List out;
  size_t a = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\n' || s[i] == '\r') {
      out.push_back(Value::string(s.substr(a, i - a)));
      if (s[i] == '\r' && i + 1 < s.size() && s[i + 1] == '\n') ++i;
      a = i + 1;
    }
  }
  if (a < s.size()) out.push_back(Value::string(s.substr(a)));
  return out;
}

// Code point index of a byte offset (find, rfind return Python indices).
int64_t cp_index(const std::string& s, size_t byte) { return static_cast<int64_t>(code_points(s.substr(0, byte)).size()); }

List iterate(Interpreter& in, const Value& v) {
  switch (v.kind) {
    case Value::Kind::list: return *v.list;
    case Value::Kind::undefined: return {};
    case Value::Kind::dict: {
      List l;
      for (const auto& kv : v.dict->items) l.push_back(Value::string(kv.first));
      return l;
    }
    case Value::Kind::string: {
      List l;
      for (auto& c : code_points(v.s)) l.push_back(Value::string(c));
      return l;
    }
    default: in.fail(cat("'", kind_name(v.kind), "' object is not iterable"));
  }
}

// attribute="a.b.0" as jinja2's make_attrgetter reads it.
Value attribute(Interpreter& in, Value v, const std::string& path) {
  size_t pos = 0;
  while (true) {
    size_t dot = path.find('.', pos);
    std::string part = path.substr(pos, dot == std::string::npos ? std::string::npos : dot - pos);
    bool digits = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    if (v.is_undefined()) return v;
    v = in.get_item(v, digits ? Value::integer(std::stoll(part)) : Value::string(part));
    if (dot == std::string::npos) return v;
    pos = dot + 1;
  }
}

// str.format with {} / {0} / {name} fields (no format specs).
std::string py_format(Interpreter& in, const std::string& f, const List& args, const KwArgs& kw) {
  std::string out;
  size_t auto_index = 0;
  for (size_t i = 0; i < f.size(); ++i) {
    char c = f[i];
    if (c == '{' && i + 1 < f.size() && f[i + 1] == '{') {
      out += '{', ++i;
      continue;
    }
    if (c == '}' && i + 1 < f.size() && f[i + 1] == '}') {
      out += '}', ++i;
      continue;
    }
    if (c != '{') {
      out += c;
      continue;
    }
    size_t close = f.find('}', i);
    if (close == std::string::npos) in.fail("format: a '{' without its '}'");
    std::string field = f.substr(i + 1, close - i - 1);
    if (field.find_first_of(":!") != std::string::npos) in.fail("format: format specs and conversions are not supported");
    Value v;
    if (field.empty()) {
      if (auto_index >= args.size()) in.fail("format: not enough arguments");
      v = args[auto_index++];
    } else if (std::all_of(field.begin(), field.end(), [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)); })) {
      size_t k = std::stoul(field);
      if (k >= args.size()) in.fail("format: not enough arguments");
      v = args[k];
    } else {
      v = arg({}, kw, 0, field.c_str());
      if (v.is_undefined()) in.fail(cat("format: no argument named '", field, "'"));
    }
    out += str(v);
    i = close;
  }
  return out;
}

}  // namespace rlx::text::jinja
