// jinja2's filters (the ones chat templates use), each as jinja2 3.1 defines it.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "rlx/error.h"
#include "text/jinja/interpreter.h"
#include "text/jinja/pystr.h"
#include "text/utf8.h"
#include "util/strings.h"

namespace rlx::text::jinja {

namespace {

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

}  // namespace

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

}  // namespace rlx::text::jinja
