// jinja2's tests, Python's str/dict/list methods a sandboxed template may call, and the globals
// chat templates use — each as Python's jinja2 3.1 defines it (the filters: filters.cpp).
#include <algorithm>
#include <ctime>
#include <functional>
#include <map>

#include "rlx/error.h"
#include "text/jinja/interpreter.h"
#include "text/jinja/pystr.h"
#include "util/strings.h"

namespace rlx::text::jinja {

namespace {

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
