// Jinja's filters and tests, Python's str/dict/list methods a sandboxed template may call, and
// the globals chat templates use — each as Python's jinja2 3.1 defines it.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>

#include "rlx/error.h"
#include "text/jinja/interpreter.h"
#include "text/utf8.h"

#include <utf8proc.h>
#include "util/strings.h"

namespace rlx::text::jinja {

namespace {

bool is_int(const Value& v) { return v.kind == Value::Kind::integer || v.kind == Value::Kind::boolean; }
int64_t as_int(const Value& v) { return v.kind == Value::Kind::integer ? v.i : (v.b ? 1 : 0); }

// Argument k of a call: positional, else by keyword, else the default.
Value arg(const List& args, const KwArgs& kw, size_t k, const char* name, Value def = Value::undefined()) {
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
template <class F>
std::string map_cps(const std::string& s, F f) {
  std::string out;
  for (size_t i = 0; i < s.size();) utf8_append(out, f(utf8_next(s, i)));
  return out;
}
char32_t cp_lower(char32_t c) { return static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c))); }
char32_t cp_upper(char32_t c) { return static_cast<char32_t>(utf8proc_toupper(static_cast<utf8proc_int32_t>(c))); }
char32_t cp_title(char32_t c) { return static_cast<char32_t>(utf8proc_totitle(static_cast<utf8proc_int32_t>(c))); }
utf8proc_category_t category(char32_t c) { return utf8proc_category(static_cast<utf8proc_int32_t>(c)); }
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
template <class P>
bool all_cps(const std::string& s, P p) {
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

// A sort key: case-insensitive for strings unless asked.
Value sort_key(Value v, bool case_sensitive) {
  if (!case_sensitive && v.is_string()) v.s = lower(v.s);
  return v;
}

List sorted(Interpreter& in, List items, bool reverse, bool case_sensitive, const Value& attr) {
  std::vector<std::pair<Value, Value>> keyed;
  for (auto& x : items) keyed.emplace_back(sort_key(attr.is_string() ? attribute(in, x, attr.s) : x, case_sensitive), x);
  try {
    std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& a, const auto& b) { return reverse ? less(b.first, a.first) : less(a.first, b.first); });
  } catch (const Error& e) {
    in.fail(e.what());
  }
  List out;
  for (auto& kv : keyed) out.push_back(std::move(kv.second));
  return out;
}

Value to_int(Interpreter& in, const Value& v, const Value& def) {
  if (is_int(v)) return Value::integer(as_int(v));
  if (v.kind == Value::Kind::number) {
    if (!std::isfinite(v.d)) return def;
    return Value::integer(static_cast<int64_t>(v.d));
  }
  if (v.is_string()) {
    std::string t = strip(v.s, Value::undefined(), true, true);
    try {
      size_t used = 0;
      int64_t x = std::stoll(t, &used, 10);
      if (used == t.size()) return Value::integer(x);
      double d = std::stod(t, &used);
      if (used == t.size() && std::isfinite(d)) return Value::integer(static_cast<int64_t>(d));
    } catch (const std::exception&) {
    }
  }
  (void)in;
  return def;
}

Value to_float(const Value& v, const Value& def) {
  if (v.is_numeric()) return Value::number(v.as_double());
  if (v.is_string()) {
    std::string t = strip(v.s, Value::undefined(), true, true);
    try {
      size_t used = 0;
      double d = std::stod(t, &used);
      if (used == t.size()) return Value::number(d);
    } catch (const std::exception&) {
    }
  }
  return def;
}

// Python's round(x, n): to the nearest, ties to even, on the decimal value.
// glibc's printf rounds the exact binary value to n decimals, ties to even — Python's
// algorithm (2.675 is 2.67499999… and rounds to 2.67).
double py_round(double x, int64_t n) {
  if (!std::isfinite(x)) return x;
  if (n < 0) {
    double p = std::pow(10.0, static_cast<double>(-n));
    return std::nearbyint(x / p) * p;
  }
  char buf[512];
  std::snprintf(buf, sizeof buf, "%.*f", static_cast<int>(std::min<int64_t>(n, 300)), x);
  return std::strtod(buf, nullptr);
}

std::string indent(const std::string& s, const std::string& pad, bool first, bool blank) {
  List lines = splitlines(s + "\n");
  std::string out;
  for (size_t k = 0; k < lines.size(); ++k) {
    const std::string& l = lines[k].s;
    if (k == 0) out += (first ? pad : "") + l;
    else out += "\n" + ((blank || !l.empty()) ? pad : "") + l;
  }
  return out;
}

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
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

using Method = std::function<Value(Interpreter&, const Value& self, List&, KwArgs&)>;

const std::map<std::string, Method>& string_methods() {
  static const std::map<std::string, Method> m = {
      {"startswith", [](Interpreter& in, const Value& s, List& a, KwArgs& kw) {
         Value p = arg(a, kw, 0, "prefix");
         if (p.is_list()) {
           for (const Value& x : *p.list)
             if (x.is_string() && s.s.rfind(x.s, 0) == 0) return Value::boolean(true);
           return Value::boolean(false);
         }
         if (!p.is_string()) in.fail("startswith takes a string");
         return Value::boolean(s.s.rfind(p.s, 0) == 0);
       }},
      {"endswith", [](Interpreter& in, const Value& s, List& a, KwArgs& kw) {
         Value p = arg(a, kw, 0, "suffix");
         auto ends = [&](const std::string& x) { return s.s.size() >= x.size() && s.s.compare(s.s.size() - x.size(), x.size(), x) == 0; };
         if (p.is_list()) {
           for (const Value& x : *p.list)
             if (x.is_string() && ends(x.s)) return Value::boolean(true);
           return Value::boolean(false);
         }
         if (!p.is_string()) in.fail("endswith takes a string");
         return Value::boolean(ends(p.s));
       }},
      {"split", [](Interpreter& in, const Value& s, List& a, KwArgs& kw) {
         Value ms = arg(a, kw, 1, "maxsplit", Value::integer(-1));
         try {
           return Value::make_list(split(s.s, arg(a, kw, 0, "sep"), as_int(ms)));
         } catch (const Error& e) {
           in.fail(e.what());
         }
       }},
      {"rsplit", [](Interpreter& in, const Value& s, List& a, KwArgs& kw) {
         Value sep = arg(a, kw, 0, "sep");
         int64_t ms = as_int(arg(a, kw, 1, "maxsplit", Value::integer(-1)));
         if (ms < 0 || sep.is_undefined() || sep.is_none()) {
           if (ms >= 0) in.fail("rsplit with maxsplit needs a separator here");
           return Value::make_list(split(s.s, sep, -1));
         }
         List out;
         std::string rest = s.s;
         while (static_cast<int64_t>(out.size()) < ms) {
           size_t hit = rest.rfind(sep.s);
           if (hit == std::string::npos || sep.s.empty()) break;
           out.insert(out.begin(), Value::string(rest.substr(hit + sep.s.size())));
           rest.erase(hit);
         }
         out.insert(out.begin(), Value::string(rest));
         return Value::make_list(std::move(out));
       }},
      {"strip", [](Interpreter&, const Value& s, List& a, KwArgs& kw) { return Value::string(strip(s.s, arg(a, kw, 0, "chars"), true, true)); }},
      {"lstrip", [](Interpreter&, const Value& s, List& a, KwArgs& kw) { return Value::string(strip(s.s, arg(a, kw, 0, "chars"), true, false)); }},
      {"rstrip", [](Interpreter&, const Value& s, List& a, KwArgs& kw) { return Value::string(strip(s.s, arg(a, kw, 0, "chars"), false, true)); }},
      {"upper", [](Interpreter&, const Value& s, List&, KwArgs&) { return Value::string(upper(s.s)); }},
      {"lower", [](Interpreter&, const Value& s, List&, KwArgs&) { return Value::string(lower(s.s)); }},
      {"title", [](Interpreter&, const Value& s, List&, KwArgs&) { return Value::string(title(s.s)); }},
      {"capitalize", [](Interpreter&, const Value& s, List&, KwArgs&) { return Value::string(capitalize(s.s)); }},
      {"replace", [](Interpreter& in, const Value& s, List& a, KwArgs& kw) {
         Value from = arg(a, kw, 0, "old"), to = arg(a, kw, 1, "new");
         if (!from.is_string() || !to.is_string()) in.fail("replace takes two strings");
         return Value::string(replace(s.s, from.s, to.s, as_int(arg(a, kw, 2, "count", Value::integer(-1)))));
       }},
      {"find", [](Interpreter& in, const Value& s, List& a, KwArgs& kw) {
         Value sub = arg(a, kw, 0, "sub");
         if (!sub.is_string()) in.fail("find takes a string");
         size_t hit = s.s.find(sub.s);
         return Value::integer(hit == std::string::npos ? -1 : cp_index(s.s, hit));
       }},
      {"rfind", [](Interpreter& in, const Value& s, List& a, KwArgs& kw) {
         Value sub = arg(a, kw, 0, "sub");
         if (!sub.is_string()) in.fail("rfind takes a string");
         size_t hit = s.s.rfind(sub.s);
         return Value::integer(hit == std::string::npos ? -1 : cp_index(s.s, hit));
       }},
      {"count", [](Interpreter& in, const Value& s, List& a, KwArgs& kw) {
         Value sub = arg(a, kw, 0, "sub");
         if (!sub.is_string()) in.fail("count takes a string");
         if (sub.s.empty()) return Value::integer(length(s) + 1);
         int64_t n = 0;
         for (size_t p = s.s.find(sub.s); p != std::string::npos; p = s.s.find(sub.s, p + sub.s.size())) ++n;
         return Value::integer(n);
       }},
      {"join", [](Interpreter& in, const Value& s, List& a, KwArgs& kw) {
         std::string out;
         List items = iterate(in, arg(a, kw, 0, "iterable"));
         for (size_t k = 0; k < items.size(); ++k) {
           if (!items[k].is_string()) in.fail(cat("sequence item ", k, ": expected str instance, ", kind_name(items[k].kind), " found"));
           out += (k ? s.s : "") + items[k].s;
         }
         return Value::string(std::move(out));
       }},
      {"splitlines", [](Interpreter&, const Value& s, List&, KwArgs&) { return Value::make_list(splitlines(s.s)); }},
      {"format", [](Interpreter& in, const Value& s, List& a, KwArgs& kw) { return Value::string(py_format(in, s.s, a, kw)); }},
      {"isdigit", [](Interpreter&, const Value& s, List&, KwArgs&) { return Value::boolean(all_cps(s.s, cp_digit)); }},
      {"isalpha", [](Interpreter&, const Value& s, List&, KwArgs&) { return Value::boolean(all_cps(s.s, cp_alpha)); }},
      {"isalnum", [](Interpreter&, const Value& s, List&, KwArgs&) { return Value::boolean(all_cps(s.s, cp_alnum)); }},
      {"isspace", [](Interpreter&, const Value& s, List&, KwArgs&) {
         return Value::boolean(!s.s.empty() && std::all_of(code_points(s.s).begin(), code_points(s.s).end(), py_space_cp));
       }},
      {"islower", [](Interpreter&, const Value& s, List&, KwArgs&) { return Value::boolean(lower(s.s) == s.s && upper(s.s) != s.s); }},
      {"isupper", [](Interpreter&, const Value& s, List&, KwArgs&) { return Value::boolean(upper(s.s) == s.s && lower(s.s) != s.s); }},
      {"istitle", [](Interpreter&, const Value& s, List&, KwArgs&) { return Value::boolean(istitle(s.s)); }},
      {"index", [](Interpreter& in, const Value& s, List& a, KwArgs& kw) {
         Value sub = arg(a, kw, 0, "sub");
         if (!sub.is_string()) in.fail("index takes a string");
         size_t hit = s.s.find(sub.s);
         if (hit == std::string::npos) in.fail("substring not found");
         return Value::integer(cp_index(s.s, hit));
       }},
      {"rindex", [](Interpreter& in, const Value& s, List& a, KwArgs& kw) {
         Value sub = arg(a, kw, 0, "sub");
         if (!sub.is_string()) in.fail("rindex takes a string");
         size_t hit = s.s.rfind(sub.s);
         if (hit == std::string::npos) in.fail("substring not found");
         return Value::integer(cp_index(s.s, hit));
       }},
  };
  return m;
}

const std::map<std::string, Method>& dict_methods() {
  static const std::map<std::string, Method> m = {
      {"items", [](Interpreter&, const Value& d, List&, KwArgs&) {
         List l;
         for (const auto& [k, v] : d.dict->items) l.push_back(Value::make_list({Value::string(k), v}));
         return Value::make_list(std::move(l));
       }},
      {"keys", [](Interpreter&, const Value& d, List&, KwArgs&) {
         List l;
         for (const auto& kv : d.dict->items) l.push_back(Value::string(kv.first));
         return Value::make_list(std::move(l));
       }},
      {"values", [](Interpreter&, const Value& d, List&, KwArgs&) {
         List l;
         for (const auto& kv : d.dict->items) l.push_back(kv.second);
         return Value::make_list(std::move(l));
       }},
      {"get", [](Interpreter&, const Value& d, List& a, KwArgs& kw) {
         Value key = arg(a, kw, 0, "key");
         if (key.is_string())
           if (const Value* v = d.dict->find(key.s)) return *v;
         return arg(a, kw, 1, "default", Value::none());
       }},
  };
  return m;
}

const std::map<std::string, Method>& list_methods() {
  static const std::map<std::string, Method> m = {
      {"index", [](Interpreter& in, const Value& l, List& a, KwArgs& kw) {
         Value x = arg(a, kw, 0, "value");
         for (size_t k = 0; k < l.list->size(); ++k)
           if (equal((*l.list)[k], x)) return Value::integer(static_cast<int64_t>(k));
         in.fail(cat(repr(x), " is not in list"));
       }},
      {"count", [](Interpreter&, const Value& l, List& a, KwArgs& kw) {
         Value x = arg(a, kw, 0, "value");
         int64_t n = 0;
         for (const Value& y : *l.list) n += equal(x, y);
         return Value::integer(n);
       }},
  };
  return m;
}

Value do_test(Interpreter& in, const std::string& name, const Value& v, List& a) {
  auto b = [](bool x) { return Value::boolean(x); };
  auto need = [&](size_t n) {
    if (a.size() < n) in.fail(cat("test '", name, "' takes ", n, " argument(s)"));
  };
  if (name == "defined") return b(!v.is_undefined());
  if (name == "undefined") return b(v.is_undefined());
  if (name == "none") return b(v.is_none());
  if (name == "string") return b(v.is_string());
  if (name == "number") return b(v.is_numeric());
  if (name == "integer") return b(v.kind == Value::Kind::integer);
  if (name == "float") return b(v.kind == Value::Kind::number);
  if (name == "boolean") return b(v.kind == Value::Kind::boolean);
  if (name == "true") return b(v.kind == Value::Kind::boolean && v.b);
  if (name == "false") return b(v.kind == Value::Kind::boolean && !v.b);
  if (name == "mapping") return b(v.is_dict());
  if (name == "iterable") return b(v.is_list() || v.is_dict() || v.is_string());
  if (name == "sequence") return b(v.is_list() || v.is_dict() || v.is_string());
  if (name == "callable") return b(v.kind == Value::Kind::callable);
  if (name == "lower") return b(v.is_string() && lower(v.s) == v.s);
  if (name == "upper") return b(v.is_string() && upper(v.s) == v.s);
  if (name == "even" || name == "odd") {
    // value % 2 == 0 (or 1), as Python computes it for ints and floats alike
    if (!v.is_numeric()) in.fail(cat("test '", name, "' needs a number, got ", kind_name(v.kind)));
    double r = is_int(v) ? static_cast<double>(((as_int(v) % 2) + 2) % 2) : std::fmod(std::fmod(v.d, 2.0) + 2.0, 2.0);
    return b(name == "even" ? r == 0 : r == 1);
  }
  if (name == "divisibleby") {
    need(1);
    if (!is_int(v) || !is_int(a[0]) || as_int(a[0]) == 0) in.fail("divisibleby needs integers (and not zero)");
    return b(as_int(v) % as_int(a[0]) == 0);
  }
  if (name == "equalto" || name == "eq" || name == "==") return need(1), b(equal(v, a[0]));
  if (name == "ne" || name == "!=") return need(1), b(!equal(v, a[0]));
  if (name == "sameas") return need(1), b(equal(v, a[0]) && v.kind == a[0].kind);
  try {
    if (name == "lt" || name == "lessthan" || name == "<") return need(1), b(less(v, a[0]));
    if (name == "gt" || name == "greaterthan" || name == ">") return need(1), b(less(a[0], v));
    if (name == "le" || name == "<=") return need(1), b(!less(a[0], v));
    if (name == "ge" || name == ">=") return need(1), b(!less(v, a[0]));
  } catch (const Error& e) {
    in.fail(e.what());
  }
  if (name == "in") {
    need(1);
    const Value& c = a[0];
    if (c.is_string()) return b(v.is_string() && c.s.find(v.s) != std::string::npos);
    if (c.is_list()) {
      for (const Value& x : *c.list)
        if (equal(v, x)) return b(true);
      return b(false);
    }
    if (c.is_dict()) return b(v.is_string() && c.dict->find(v.s));
    in.fail(cat("argument of type '", kind_name(c.kind), "' is not iterable"));
  }
  in.fail(cat("no test named '", name, "'"));
}

}  // namespace

bool Interpreter::apply_test(const std::string& name, const Value& v, List& args) { return truthy(do_test(*this, name, v, args)); }

Value method(Interpreter& in, const Value& self, const std::string& name) {
  const std::map<std::string, Method>* table = self.is_string() ? &string_methods() : self.is_dict() ? &dict_methods() : self.is_list() ? &list_methods() : nullptr;
  if (!table) return Value::undefined(name);
  auto it = table->find(name);
  if (it == table->end()) {
    static const char* unsafe[] = {"append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault", "popitem", "sort", "reverse"};
    for (const char* u : unsafe)
      if (name == u && !self.is_string())
        return Value::callable(name, [name, self](Interpreter& i, List&, KwArgs&) -> Value {
          i.fail(cat("access to attribute '", name, "' of '", kind_name(self.kind), "' object is unsafe (templates cannot change their inputs)"));
        });
    return Value::undefined(name);
  }
  Method fn = it->second;
  (void)in;
  return Value::callable(name, [fn, self](Interpreter& i, List& a, KwArgs& kw) { return fn(i, self, a, kw); });
}

Value Interpreter::apply_filter(const std::string& name, Value v, List& a, KwArgs& kw) {
  Interpreter& in = *this;
  auto s = [&](const Value& x) { return x.is_string() ? x.s : str(x); };
  if (name == "length" || name == "count") {
    try {
      return Value::integer(length(v));
    } catch (const Error& e) {
      fail(e.what());
    }
  }
  if (name == "safe" || name == "string") return Value::string(s(v));
  if (name == "trim") return Value::string(strip(s(v), arg(a, kw, 0, "chars"), true, true));
  if (name == "upper") return Value::string(upper(s(v)));
  if (name == "lower") return Value::string(lower(s(v)));
  if (name == "capitalize") return Value::string(capitalize(s(v)));
  if (name == "title") return Value::string(title(s(v)));
  if (name == "e" || name == "escape") return Value::string(html_escape(s(v)));
  if (name == "replace") {
    Value from = arg(a, kw, 0, "old"), to = arg(a, kw, 1, "new");
    Value count = arg(a, kw, 2, "count", Value::none());
    return Value::string(replace(s(v), s(from), s(to), count.is_none() ? -1 : as_int(count)));
  }
  if (name == "default" || name == "d") {
    Value def = arg(a, kw, 0, "default_value", Value::string(""));
    bool boolean = truthy(arg(a, kw, 1, "boolean", Value::boolean(false)));
    return v.is_undefined() || (boolean && !truthy(v)) ? def : v;
  }
  if (name == "tojson") {  // transformers' tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False)
    JsonStyle st;
    st.ensure_ascii = truthy(arg(a, kw, 0, "ensure_ascii", Value::boolean(false)));
    Value ind = arg(a, kw, 1, "indent", Value::none());
    if (is_int(ind)) st.indent = static_cast<int>(std::clamp<int64_t>(as_int(ind), 0, 64));
    Value seps = arg(a, kw, 2, "separators", Value::none());
    if (seps.is_list() && seps.list->size() == 2) st.item_sep = s((*seps.list)[0]), st.key_sep = s((*seps.list)[1]);
    st.sort_keys = truthy(arg(a, kw, 3, "sort_keys", Value::boolean(false)));
    try {
      return Value::string(to_json(v, st));
    } catch (const Error& e) {
      fail(e.what());
    }
  }
  if (name == "join") {
    Value sep = arg(a, kw, 0, "d", Value::string(""));
    Value attr = arg(a, kw, 1, "attribute", Value::none());
    std::string out;
    List items = iterate(in, v);
    for (size_t k = 0; k < items.size(); ++k) out += (k ? s(sep) : "") + s(attr.is_string() ? attribute(in, items[k], attr.s) : items[k]);
    return Value::string(std::move(out));
  }
  if (name == "first" || name == "last") {
    List items = iterate(in, v);
    if (items.empty()) return Value::undefined(name);
    return name == "first" ? items.front() : items.back();
  }
  if (name == "list") return Value::make_list(iterate(in, v));
  if (name == "reverse") {
    if (v.is_string()) {
      std::vector<std::string> cps = code_points(v.s);
      std::string out;
      for (auto it = cps.rbegin(); it != cps.rend(); ++it) out += *it;
      return Value::string(std::move(out));
    }
    List items = iterate(in, v);
    std::reverse(items.begin(), items.end());
    return Value::make_list(std::move(items));
  }
  if (name == "items") {
    if (v.is_undefined()) return Value::make_list();
    if (!v.is_dict()) fail(cat("can only get item pairs from a mapping, not ", kind_name(v.kind)));
    List l;
    for (const auto& [k, x] : v.dict->items) l.push_back(Value::make_list({Value::string(k), x}));
    return Value::make_list(std::move(l));
  }
  if (name == "int") return to_int(in, v, arg(a, kw, 0, "default", Value::integer(0)));
  if (name == "float") return to_float(v, arg(a, kw, 0, "default", Value::number(0.0)));
  if (name == "abs") {
    if (v.kind == Value::Kind::number) return Value::number(std::fabs(v.d));
    if (is_int(v)) return Value::integer(std::llabs(as_int(v)));
    fail(cat("bad operand type for abs(): '", kind_name(v.kind), "'"));
  }
  if (name == "round") {
    int64_t prec = as_int(arg(a, kw, 0, "precision", Value::integer(0)));
    std::string method = s(arg(a, kw, 1, "method", Value::string("common")));
    if (!v.is_numeric()) fail("round needs a number");
    double x = v.as_double(), p = std::pow(10.0, static_cast<double>(prec));
    if (method == "common") return Value::number(py_round(x, prec));
    if (method == "floor") return Value::number(std::floor(x * p) / p);
    if (method == "ceil") return Value::number(std::ceil(x * p) / p);
    fail("method must be common, floor or ceil");
  }
  if (name == "indent") {
    Value width = arg(a, kw, 0, "width", Value::integer(4));
    std::string pad = width.is_string() ? width.s : std::string(static_cast<size_t>(std::clamp<int64_t>(as_int(width), 0, 1024)), ' ');
    return Value::string(indent(s(v), pad, truthy(arg(a, kw, 1, "first", Value::boolean(false))), truthy(arg(a, kw, 2, "blank", Value::boolean(false)))));
  }
  if (name == "wordcount") {  // len(re.findall(r"\w+", s)): runs of letters, digits and _
    int64_t n = 0;
    bool in_word = false;
    std::string t = s(v);
    for (size_t i = 0; i < t.size();) {
      char32_t c = utf8_next(t, i);
      bool w = c == '_' || cp_alnum(c);
      if (w && !in_word) ++n;
      in_word = w;
    }
    return Value::integer(n);
  }
  if (name == "map") {
    List items = iterate(in, v), out;
    Value attr = arg({}, kw, 0, "attribute");
    if (attr.is_string()) {
      Value def = arg({}, kw, 0, "default");
      for (auto& x : items) {
        Value y = attribute(in, x, attr.s);
        out.push_back(y.is_undefined() && !def.is_undefined() ? def : y);
      }
      return Value::make_list(std::move(out));
    }
    if (a.empty() || !a[0].is_string()) fail("map needs a filter name or attribute=");
    List rest(a.begin() + 1, a.end());
    KwArgs none;
    for (auto& x : items) {
      List r = rest;
      out.push_back(apply_filter(a[0].s, x, r, none));
    }
    return Value::make_list(std::move(out));
  }
  if (name == "select" || name == "reject" || name == "selectattr" || name == "rejectattr") {
    bool by_attr = name == "selectattr" || name == "rejectattr";
    bool keep_if = name == "select" || name == "selectattr";
    size_t k0 = 0;
    std::string attr;
    if (by_attr) {
      if (a.empty() || !a[0].is_string()) fail(cat(name, " needs an attribute name"));
      attr = a[0].s;
      k0 = 1;
    }
    List out;
    for (auto& x : iterate(in, v)) {
      Value subject = by_attr ? attribute(in, x, attr) : x;
      bool pass;
      if (a.size() <= k0) pass = truthy(subject);
      else {
        List targs(a.begin() + static_cast<std::ptrdiff_t>(k0) + 1, a.end());
        pass = apply_test(s(a[k0]), subject, targs);
      }
      if (pass == keep_if) out.push_back(x);
    }
    return Value::make_list(std::move(out));
  }
  if (name == "unique") {
    bool cs = truthy(arg(a, kw, 0, "case_sensitive", Value::boolean(false)));
    Value attr = arg(a, kw, 1, "attribute", Value::none());
    List out, seen;
    for (auto& x : iterate(in, v)) {
      Value key = sort_key(attr.is_string() ? attribute(in, x, attr.s) : x, cs);
      if (std::none_of(seen.begin(), seen.end(), [&](const Value& y) { return equal(y, key); })) seen.push_back(key), out.push_back(x);
    }
    return Value::make_list(std::move(out));
  }
  if (name == "sort") {
    return Value::make_list(sorted(in, iterate(in, v), truthy(arg(a, kw, 0, "reverse", Value::boolean(false))),
                                   truthy(arg(a, kw, 1, "case_sensitive", Value::boolean(false))), arg(a, kw, 2, "attribute", Value::none())));
  }
  if (name == "dictsort") {
    if (!v.is_dict()) fail("dictsort needs a mapping");
    bool cs = truthy(arg(a, kw, 0, "case_sensitive", Value::boolean(false)));
    bool by_value = s(arg(a, kw, 1, "by", Value::string("key"))) == "value";
    bool rev = truthy(arg(a, kw, 2, "reverse", Value::boolean(false)));
    List pairs;
    for (const auto& [k, x] : v.dict->items) pairs.push_back(Value::make_list({Value::string(k), x}));
    return Value::make_list(sorted(in, pairs, rev, cs, Value::string(by_value ? "1" : "0")));
  }
  if (name == "sum") {
    Value attr = arg(a, kw, 0, "attribute", Value::none());
    Value total = arg(a, kw, 1, "start", Value::integer(0));
    for (auto& x : iterate(in, v)) total = binary("+", total, attr.is_string() ? attribute(in, x, attr.s) : x);
    return total;
  }
  if (name == "min" || name == "max") {
    List items = sorted(in, iterate(in, v), false, truthy(arg(a, kw, 0, "case_sensitive", Value::boolean(false))), arg(a, kw, 1, "attribute", Value::none()));
    if (items.empty()) return Value::undefined(name);
    return name == "min" ? items.front() : items.back();
  }
  if (name == "attr") return get_attr(v, s(arg(a, kw, 0, "name")));
  if (name == "format") return Value::string(py_format(in, s(v), a, kw));
  if (name == "center") {
    int64_t width = as_int(arg(a, kw, 0, "width", Value::integer(80)));
    std::string t = s(v);
    int64_t n = length(Value::string(t));
    if (width <= n) return Value::string(t);
    int64_t left = (width - n) / 2 + ((width - n) % 2 && width % 2 ? 1 : 0);
    return Value::string(std::string(static_cast<size_t>(left), ' ') + t + std::string(static_cast<size_t>(width - n - left), ' '));
  }
  fail(cat("no filter named '", name, "'"));
}

const Value* builtin_global(const std::string& name) {
  static const std::map<std::string, Value> globals = [] {
    std::map<std::string, Value> g;
    g["range"] = Value::callable("range", [](Interpreter& in, List& a, KwArgs&) {
      if (a.empty() || a.size() > 3) in.fail("range takes 1 to 3 integers");
      for (const Value& x : a)
        if (!is_int(x)) in.fail("range takes integers");
      int64_t start = a.size() > 1 ? as_int(a[0]) : 0, stop = a.size() > 1 ? as_int(a[1]) : as_int(a[0]), step = a.size() > 2 ? as_int(a[2]) : 1;
      if (step == 0) in.fail("range() arg 3 must not be zero");
      // Refused before it is built: a range longer than the loop budget could never be walked.
      double n = std::ceil((static_cast<double>(stop) - static_cast<double>(start)) / static_cast<double>(step));
      if (n > 10'000'000) in.fail(cat("range of ", n, " items: more than 10000000 loop iterations"));
      List out;
      for (int64_t k = start; step > 0 ? k < stop : k > stop; k += step) {
        in.count_iteration();
        out.push_back(Value::integer(k));
      }
      return Value::make_list(std::move(out));
    });
    g["namespace"] = Value::callable("namespace", [](Interpreter& in, List& a, KwArgs& kw) {
      Dict d;
      d.is_namespace = true;
      for (const Value& x : a) {
        if (!x.is_dict()) in.fail("namespace() takes a mapping or keyword arguments");
        for (const auto& [k, v] : x.dict->items) d.set(k, v);
      }
      for (auto& [k, v] : kw) d.set(k, v);
      return Value::make_dict(std::move(d));
    });
    g["dict"] = Value::callable("dict", [](Interpreter&, List& a, KwArgs& kw) {
      Dict d;
      for (const Value& x : a)
        if (x.is_dict())
          for (const auto& [k, v] : x.dict->items) d.set(k, v);
      for (auto& [k, v] : kw) d.set(k, v);
      return Value::make_dict(std::move(d));
    });
    g["raise_exception"] = Value::callable("raise_exception", [](Interpreter&, List& a, KwArgs& kw) -> Value {
      // The template's own message, as transformers raises it (TemplateError).
      throw Error(ErrorKind::invalid_argument, str(arg(a, kw, 0, "message", Value::string("raise_exception() called"))));
    });
    g["strftime_now"] = Value::callable("strftime_now", [](Interpreter& in, List& a, KwArgs& kw) {
      Value fmt = arg(a, kw, 0, "format");
      if (!fmt.is_string()) in.fail("strftime_now takes a format string");
      std::tm tm{};
      if (in.limits().now) {
        auto fixed = static_cast<std::time_t>(*in.limits().now);
        gmtime_r(&fixed, &tm);
      } else {
        std::time_t now = std::time(nullptr);
        localtime_r(&now, &tm);
      }
      char buf[256];
      size_t n = std::strftime(buf, sizeof buf, fmt.s.c_str(), &tm);
      return Value::string(std::string(buf, n));
    });
    return g;
  }();
  auto it = globals.find(name);
  return it == globals.end() ? nullptr : &it->second;
}

}  // namespace rlx::text::jinja
