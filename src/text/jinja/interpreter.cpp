#include "text/jinja/interpreter.h"

#include <algorithm>

#include <cmath>

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::text::jinja {

namespace {

// Python's floor division and modulo.
int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t py_mod(int64_t a, int64_t b) {
  int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

bool is_int(const Value& v) { return v.kind == Value::Kind::integer || v.kind == Value::Kind::boolean; }
int64_t as_int(const Value& v) { return v.kind == Value::Kind::integer ? v.i : (v.b ? 1 : 0); }

}  // namespace

Interpreter::Interpreter(const Template& tpl, const Dict& context, Limits limits) : tpl_(tpl), limits_(limits) { frames_.push_back(context); }

Interpreter::~Interpreter() {
  for (auto& ns : assigned_namespaces_) ns->items.clear();
}

void Interpreter::fail(const std::string& what) const { throw Error(ErrorKind::invalid_argument, cat("chat template, line ", line_, ": ", what)); }

void Interpreter::count_iteration() {
  if (++iterations_ > limits_.max_iterations) fail(cat("more than ", limits_.max_iterations, " loop iterations"));
}

std::string Interpreter::render() {
  std::string out;
  out_ = &out;
  exec(tpl_.body);
  return out;
}

void Interpreter::emit(const std::string& s) {
  if (out_->size() + s.size() > limits_.max_output_bytes) fail(cat("the output passes ", limits_.max_output_bytes, " bytes"));
  *out_ += s;
}

std::string Interpreter::render_body(const Body& body) {
  std::string buf;
  std::string* saved = out_;
  out_ = &buf;
  try {
    exec(body);
  } catch (...) {
    out_ = saved;
    throw;
  }
  out_ = saved;
  return buf;
}

Value Interpreter::lookup(const std::string& name) const {
  for (auto f = frames_.rbegin(); f != frames_.rend(); ++f)
    if (const Value* v = f->find(name)) return *v;
  if (const Value* g = builtin_global(name)) return *g;
  return Value::undefined(name);
}

void Interpreter::assign(const std::string& name, Value v) { frames_.back().set(name, std::move(v)); }

Interpreter::Flow Interpreter::exec(const Body& body) {
  for (const auto& s : body) {
    Flow f = exec(*s);
    if (f != Flow::normal) return f;
  }
  return Flow::normal;
}

Interpreter::Flow Interpreter::exec(const Stmt& s) {
  line_ = s.line;
  switch (s.kind) {
    case Stmt::Kind::text: emit(s.text); return Flow::normal;
    case Stmt::Kind::output: {
      Value v = eval(*s.expr);
      emit(str(v));
      return Flow::normal;
    }
    case Stmt::Kind::if_:
      for (const auto& [cond, body] : s.branches)
        if (truthy(eval(*cond))) return exec(body);
      return exec(s.else_body);
    case Stmt::Kind::for_: {
      Value seq = eval(*s.expr);
      List items;
      switch (seq.kind) {
        case Value::Kind::list: items = *seq.list; break;
        case Value::Kind::dict:
          for (const auto& kv : seq.dict->items) items.push_back(Value::string(kv.first));
          break;
        case Value::Kind::string:
          for (auto& c : code_points(seq.s)) items.push_back(Value::string(c));
          break;
        case Value::Kind::undefined: break;
        default: fail(cat("'", kind_name(seq.kind), "' object is not iterable"));
      }
      auto bind = [&](Dict& frame, const Value& item) {
        if (s.targets.size() == 1) {
          frame.set(s.targets[0], item);
          return;
        }
        if (!item.is_list() || item.list->size() != s.targets.size())
          fail(cat("cannot unpack ", repr(item), " into ", s.targets.size(), " names"));
        for (size_t k = 0; k < s.targets.size(); ++k) frame.set(s.targets[k], (*item.list)[k]);
      };
      if (s.cond) {  // {% for x in xs if cond %}: the loop sees only the items that pass
        List kept;
        for (const Value& item : items) {
          count_iteration();
          frames_.emplace_back();
          bind(frames_.back(), item);
          bool keep = truthy(eval(*s.cond));
          frames_.pop_back();
          if (keep) kept.push_back(item);
        }
        items = std::move(kept);
      }
      if (items.empty()) return exec(s.else_body);
      auto n = static_cast<int64_t>(items.size());
      for (int64_t k = 0; k < n; ++k) {
        count_iteration();
        Dict loop;
        loop.set("index", Value::integer(k + 1));
        loop.set("index0", Value::integer(k));
        loop.set("revindex", Value::integer(n - k));
        loop.set("revindex0", Value::integer(n - k - 1));
        loop.set("first", Value::boolean(k == 0));
        loop.set("last", Value::boolean(k == n - 1));
        loop.set("length", Value::integer(n));
        loop.set("depth", Value::integer(1));
        loop.set("depth0", Value::integer(0));
        loop.set("previtem", k > 0 ? items[static_cast<size_t>(k - 1)] : Value::undefined("loop.previtem"));
        loop.set("nextitem", k + 1 < n ? items[static_cast<size_t>(k + 1)] : Value::undefined("loop.nextitem"));
        loop.set("cycle", Value::callable("loop.cycle", [k](Interpreter& in, List& args, KwArgs&) {
                   if (args.empty()) in.fail("loop.cycle needs at least one value");
                   return args[static_cast<size_t>(k) % args.size()];
                 }));
        frames_.emplace_back();
        frames_.back().set("loop", Value::make_dict(std::move(loop)));
        bind(frames_.back(), items[static_cast<size_t>(k)]);
        Flow f;
        try {
          f = exec(s.body);
        } catch (...) {
          frames_.pop_back();
          throw;
        }
        frames_.pop_back();
        if (f == Flow::break_) break;
      }
      return Flow::normal;
    }
    case Stmt::Kind::set: {
      Value v = s.expr ? eval(*s.expr) : Value::string(render_body(s.body));
      if (!s.attr.empty()) {
        Value ns = lookup(s.targets[0]);
        if (!ns.is_dict() || !ns.dict->is_namespace) fail(cat("cannot assign attribute on non-namespace object ('", s.targets[0], ".", s.attr, "')"));
        if (std::find(assigned_namespaces_.begin(), assigned_namespaces_.end(), ns.dict) == assigned_namespaces_.end()) assigned_namespaces_.push_back(ns.dict);
        ns.dict->set(s.attr, std::move(v));
        return Flow::normal;
      }
      if (s.targets.size() == 1) {
        assign(s.targets[0], std::move(v));
        return Flow::normal;
      }
      if (!v.is_list() || v.list->size() != s.targets.size()) fail(cat("cannot unpack into ", s.targets.size(), " names"));
      for (size_t k = 0; k < s.targets.size(); ++k) assign(s.targets[k], (*v.list)[k]);
      return Flow::normal;
    }
    case Stmt::Kind::macro: {
      const Stmt* def = &s;
      assign(s.name, Value::callable(s.name, [def](Interpreter& in, List& args, KwArgs& kwargs) {
               if (args.size() > def->params.size()) in.fail(cat("macro '", def->name, "' takes ", def->params.size(), " arguments, got ", args.size()));
               if (++in.call_depth_ > in.limits_.max_call_depth) in.fail("macro calls nested too deep");
               Dict frame;
               for (size_t k = 0; k < def->params.size(); ++k) {
                 const auto& [pname, pdef] = def->params[k];
                 Value v = Value::undefined(pname);
                 if (k < args.size()) v = args[k];
                 else if (pdef) v = in.eval(*pdef);
                 for (auto& [kn, kv] : kwargs)
                   if (kn == pname) v = kv;
                 frame.set(pname, v);
               }
               in.frames_.push_back(std::move(frame));
               std::string out;
               try {
                 out = in.render_body(def->body);
               } catch (...) {
                 in.frames_.pop_back();
                 --in.call_depth_;
                 throw;
               }
               in.frames_.pop_back();
               --in.call_depth_;
               return Value::string(std::move(out));
             }));
      return Flow::normal;
    }
    case Stmt::Kind::break_: return Flow::break_;
    case Stmt::Kind::continue_: return Flow::continue_;
    case Stmt::Kind::block: return exec(s.body);
    case Stmt::Kind::filter_block: {
      Value text = Value::string(render_body(s.body));
      List args;
      for (const auto& a : s.expr->items) args.push_back(eval(*a));
      KwArgs kw;
      for (const auto& [k, a] : s.expr->kwargs) kw.emplace_back(k, eval(*a));
      emit(str(apply_filter(s.expr->name, text, args, kw)));
      return Flow::normal;
    }
    case Stmt::Kind::call_block_ignored: return Flow::normal;
  }
  return Flow::normal;
}

Value Interpreter::get_attr(const Value& obj, const std::string& name) {
  switch (obj.kind) {
    case Value::Kind::undefined: fail(obj.undefined_name.empty() ? cat("undefined value has no attribute '", name, "'") : cat("'", obj.undefined_name, "' is undefined"));
    case Value::Kind::dict: {
      // Python attributes first (dict methods), then items — jinja2's getattr.
      if (!obj.dict->is_namespace) {
        Value m = method(*this, obj, name);
        if (!m.is_undefined()) return m;
      }
      if (const Value* v = obj.dict->find(name)) return *v;
      return Value::undefined(name);
    }
    default: return method(*this, obj, name);
  }
}

Value Interpreter::get_item(const Value& obj, const Value& key) {
  switch (obj.kind) {
    case Value::Kind::undefined: fail(obj.undefined_name.empty() ? "undefined value is not subscriptable" : cat("'", obj.undefined_name, "' is undefined"));
    case Value::Kind::dict: {
      if (key.is_string())
        if (const Value* v = obj.dict->find(key.s)) return *v;
      if (key.is_string()) {  // jinja2's getitem falls back to attributes
        Value m = method(*this, obj, key.s);
        if (!m.is_undefined()) return m;
      }
      return Value::undefined(key.is_string() ? key.s : str(key));
    }
    case Value::Kind::list:
    case Value::Kind::string: {
      if (!is_int(key)) {
        if (key.is_string()) return method(*this, obj, key.s);
        fail(cat(kind_name(obj.kind), " indices must be integers, not ", kind_name(key.kind)));
      }
      int64_t i = as_int(key);
      if (obj.is_list()) {
        auto n = static_cast<int64_t>(obj.list->size());
        if (i < 0) i += n;
        return i >= 0 && i < n ? (*obj.list)[static_cast<size_t>(i)] : Value::undefined();
      }
      std::vector<std::string> cps = code_points(obj.s);
      auto n = static_cast<int64_t>(cps.size());
      if (i < 0) i += n;
      return i >= 0 && i < n ? Value::string(cps[static_cast<size_t>(i)]) : Value::undefined();
    }
    default: fail(cat("'", kind_name(obj.kind), "' object is not subscriptable"));
  }
}

Value Interpreter::slice(const Value& v, const Value& start, const Value& stop, const Value& step_v) {
  auto opt = [&](const Value& x, const char* what) -> std::optional<int64_t> {
    if (x.is_undefined() || x.is_none()) return std::nullopt;
    if (!is_int(x)) fail(cat("slice ", what, " must be an integer"));
    return as_int(x);
  };
  int64_t step = opt(step_v, "step").value_or(1);
  if (step == 0) fail("slice step cannot be zero");
  List src;
  std::vector<std::string> cps;
  int64_t n;
  if (v.is_list()) n = static_cast<int64_t>(v.list->size());
  else if (v.is_string()) {
    cps = code_points(v.s);
    n = static_cast<int64_t>(cps.size());
  } else {
    fail(cat("'", kind_name(v.kind), "' object is not subscriptable"));
  }
  // Python's slice.indices
  auto clamp = [&](std::optional<int64_t> x, int64_t def) {
    if (!x) return def;
    int64_t i = *x;
    if (i < 0) i += n;
    if (step > 0) return std::clamp<int64_t>(i, 0, n);
    return std::clamp<int64_t>(i, -1, n - 1);
  };
  int64_t a = clamp(opt(start, "start"), step > 0 ? 0 : n - 1);
  int64_t b = clamp(opt(stop, "stop"), step > 0 ? n : -1);
  List out;
  std::string sout;
  for (int64_t i = a; step > 0 ? i < b : i > b; i += step) {
    if (v.is_list()) out.push_back((*v.list)[static_cast<size_t>(i)]);
    else sout += cps[static_cast<size_t>(i)];
  }
  return v.is_list() ? Value::make_list(std::move(out)) : Value::string(std::move(sout));
}

Value Interpreter::call(const Value& fn, List args, KwArgs kwargs) {
  if (fn.kind != Value::Kind::callable) {
    if (fn.is_undefined()) fail(fn.undefined_name.empty() ? "calling an undefined value" : cat("'", fn.undefined_name, "' is undefined"));
    fail(cat("'", kind_name(fn.kind), "' object is not callable"));
  }
  return fn.fn->fn(*this, args, kwargs);
}

Value Interpreter::binary(const std::string& op, const Value& a, const Value& b) {
  if (op == "~") return Value::string(str(a) + str(b));
  if (op == "==") return Value::boolean(equal(a, b));
  if (op == "!=") return Value::boolean(!equal(a, b));
  if (op == "<" || op == ">" || op == "<=" || op == ">=") {
    try {
      if (op == "<") return Value::boolean(less(a, b));
      if (op == ">") return Value::boolean(less(b, a));
      if (op == "<=") return Value::boolean(!less(b, a));
      return Value::boolean(!less(a, b));
    } catch (const Error& e) {
      fail(e.what());
    }
  }
  if (op == "in" || op == "not in") {
    bool found = false;
    if (b.is_string()) {
      if (!a.is_string()) fail(cat("'in <string>' requires string as left operand, not ", kind_name(a.kind)));
      found = b.s.find(a.s) != std::string::npos;
    } else if (b.is_list()) {
      for (const Value& x : *b.list) found = found || equal(a, x);
    } else if (b.is_dict()) {
      found = a.is_string() && b.dict->find(a.s) != nullptr;
    } else if (b.is_undefined()) {
      found = false;  // jinja2's Undefined iterates as empty
    } else {
      fail(cat("argument of type '", kind_name(b.kind), "' is not iterable"));
    }
    return Value::boolean(op == "in" ? found : !found);
  }
  auto type_error = [&]() { fail(cat("unsupported operand type(s) for ", op, ": '", kind_name(a.kind), "' and '", kind_name(b.kind), "'")); };
  if (op == "+") {
    if (a.is_string() && b.is_string()) return Value::string(a.s + b.s);
    if (a.is_list() && b.is_list()) {
      List l = *a.list;
      l.insert(l.end(), b.list->begin(), b.list->end());
      return Value::make_list(std::move(l));
    }
  }
  if (op == "*") {
    const Value* seq = a.is_string() || a.is_list() ? &a : b.is_string() || b.is_list() ? &b : nullptr;
    const Value* cnt = seq == &a ? &b : &a;
    if (seq && is_int(*cnt)) {
      int64_t n = std::max<int64_t>(0, as_int(*cnt));
      size_t unit = seq->is_string() ? seq->s.size() : seq->list->size();
      if (unit && static_cast<size_t>(n) > limits_.max_output_bytes / unit) fail("a repetition too large");
      if (seq->is_string()) {
        std::string s;
        for (int64_t k = 0; k < n; ++k) s += seq->s;
        return Value::string(std::move(s));
      }
      List l;
      for (int64_t k = 0; k < n; ++k) l.insert(l.end(), seq->list->begin(), seq->list->end());
      return Value::make_list(std::move(l));
    }
  }
  if (!a.is_numeric() || !b.is_numeric()) type_error();
  if (is_int(a) && is_int(b) && op != "/") {
    int64_t x = as_int(a), y = as_int(b), r = 0;
    bool overflow = false;
    if (op == "+") overflow = __builtin_add_overflow(x, y, &r);
    if (op == "-") overflow = __builtin_sub_overflow(x, y, &r);
    if (op == "*") overflow = __builtin_mul_overflow(x, y, &r);
    if (overflow) fail("integer overflow");
    if (op == "+" || op == "-" || op == "*") return Value::integer(r);
    if (op == "//" || op == "%") {
      if (y == 0) fail("integer division or modulo by zero");
      return Value::integer(op == "//" ? floor_div(x, y) : py_mod(x, y));
    }
    if (op == "**") {
      if (y < 0) return Value::number(std::pow(static_cast<double>(x), static_cast<double>(y)));
      int64_t p = 1;
      for (int64_t k = 0; k < y; ++k)
        if (__builtin_mul_overflow(p, x, &p)) fail("integer overflow");
      return Value::integer(p);
    }
  }
  double x = a.as_double(), y = b.as_double();
  if (op == "+") return Value::number(x + y);
  if (op == "-") return Value::number(x - y);
  if (op == "*") return Value::number(x * y);
  if (op == "/") {
    if (y == 0) fail("division by zero");
    return Value::number(x / y);
  }
  if (op == "//") {
    if (y == 0) fail("float floor division by zero");
    return Value::number(std::floor(x / y));
  }
  if (op == "%") {
    if (y == 0) fail("float modulo");
    double r = std::fmod(x, y);
    return Value::number(r != 0 && ((r < 0) != (y < 0)) ? r + y : r);
  }
  if (op == "**") return Value::number(std::pow(x, y));
  type_error();
}

Value Interpreter::eval(const Expr& e) {
  line_ = e.line ? e.line : line_;
  switch (e.kind) {
    case Expr::Kind::literal: return e.value;
    case Expr::Kind::name: return lookup(e.name);
    case Expr::Kind::list: {
      List l;
      for (const auto& x : e.items) l.push_back(eval(*x));
      Value v = Value::make_list(std::move(l));
      v.tuple = e.name == "tuple";
      return v;
    }
    case Expr::Kind::compare: {
      Value left = eval(*e.a);
      for (const auto& [op, x] : e.kwargs) {
        Value right = eval(*x);
        line_ = e.line;
        Value r = binary(op, left, right);
        if (!truthy(r) || &op == &e.kwargs.back().first) return r;
        left = std::move(right);
      }
      return Value::boolean(true);
    }
    case Expr::Kind::dict: {
      Dict d;
      for (size_t k = 0; k < e.keys.size(); ++k) {
        Value key = eval(*e.keys[k]);
        if (!key.is_string()) fail("dict keys must be strings in chat templates");
        d.set(key.s, eval(*e.items[k]));
      }
      return Value::make_dict(std::move(d));
    }
    case Expr::Kind::attr: return get_attr(eval(*e.a), e.name);
    case Expr::Kind::index: {
      Value obj = eval(*e.a);
      return get_item(obj, eval(*e.b));
    }
    case Expr::Kind::slice: {
      Value obj = eval(*e.a);
      Value parts[3];
      for (size_t k = 0; k < 3 && k < e.items.size(); ++k)
        if (e.items[k]) parts[k] = eval(*e.items[k]);
      return slice(obj, parts[0], parts[1], parts[2]);
    }
    case Expr::Kind::call: {
      Value fn = eval(*e.a);
      List args;
      for (const auto& x : e.items) args.push_back(eval(*x));
      KwArgs kw;
      for (const auto& [k, x] : e.kwargs) kw.emplace_back(k, eval(*x));
      return call(fn, std::move(args), std::move(kw));
    }
    case Expr::Kind::filter: {
      Value v = eval(*e.a);
      List args;
      for (const auto& x : e.items) args.push_back(eval(*x));
      KwArgs kw;
      for (const auto& [k, x] : e.kwargs) kw.emplace_back(k, eval(*x));
      return apply_filter(e.name, std::move(v), args, kw);
    }
    case Expr::Kind::test: {
      Value v = eval(*e.a);  // `x.y is defined`: false when y is missing, an error when x is
      List args;
      for (const auto& x : e.items) args.push_back(eval(*x));
      bool r = apply_test(e.name, v, args);
      return Value::boolean(e.negated ? !r : r);
    }
    case Expr::Kind::unary: {
      Value v = eval(*e.a);
      if (e.name == "not") return Value::boolean(!truthy(v));
      if (v.kind == Value::Kind::number) return Value::number(e.name == "-" ? -v.d : v.d);
      if (is_int(v)) {
        if (e.name == "+") return Value::integer(as_int(v));
        if (as_int(v) == INT64_MIN) fail("integer overflow");
        return Value::integer(-as_int(v));
      }
      fail(cat("bad operand type for unary ", e.name, ": '", kind_name(v.kind), "'"));
    }
    case Expr::Kind::binary: {
      if (e.name == "and") {
        Value a = eval(*e.a);
        return truthy(a) ? eval(*e.b) : a;
      }
      if (e.name == "or") {
        Value a = eval(*e.a);
        return truthy(a) ? a : eval(*e.b);
      }
      Value a = eval(*e.a);
      Value b = eval(*e.b);
      line_ = e.line;
      return binary(e.name, a, b);
    }
    case Expr::Kind::ternary:
      if (truthy(eval(*e.a))) return eval(*e.b);
      return e.c ? eval(*e.c) : Value::undefined();
  }
  fail("unknown expression");
}

}  // namespace rlx::text::jinja
