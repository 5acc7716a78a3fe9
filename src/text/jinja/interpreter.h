// Renders a parsed template: Jinja's semantics as Python's jinja2 has them in the sandbox
// Hugging Face renders chat templates in (ImmutableSandboxedEnvironment, trim_blocks,
// lstrip_blocks, loop controls, its tojson, raise_exception and strftime_now). Every failure —
// an undefined value used, a type error, raise_exception, a limit — is an rlx::Error naming the
// template's line; a hostile template is bounded (output size, loop iterations, recursion).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "text/jinja/ast.h"

namespace rlx::text::jinja {

struct Limits {
  std::optional<int64_t> now;  // strftime_now's time (seconds since the epoch, UTC); unset: the clock
  size_t max_output_bytes = 64u << 20;
  int64_t max_iterations = 10'000'000;  // loop bodies run, over the whole render
  int max_call_depth = 200;             // macro calls inside macro calls
};

class Interpreter {
 public:
  Interpreter(const Template& tpl, const Dict& context, Limits limits = {});
  // Breaks the reference cycles a template made ({% set ns.me = ns %}): a namespace holding
  // itself would otherwise outlive every render of it.
  ~Interpreter();
  Interpreter(const Interpreter&) = delete;
  Interpreter& operator=(const Interpreter&) = delete;
  std::string render();

  // For the builtins (builtins.cpp).
  Value call(const Value& fn, List args, KwArgs kwargs);
  Value get_attr(const Value& obj, const std::string& name);
  Value get_item(const Value& obj, const Value& key);
  Value apply_filter(const std::string& name, Value v, List& args, KwArgs& kwargs);
  bool apply_test(const std::string& name, const Value& v, List& args);
  [[noreturn]] void fail(const std::string& what) const;
  const Limits& limits() const { return limits_; }
  void count_iteration();

 private:
  enum class Flow { normal, break_, continue_ };
  const Template& tpl_;
  Limits limits_;
  std::vector<Dict> frames_;  // globals first, then one per for body and macro call
  std::vector<std::shared_ptr<Dict>> assigned_namespaces_;  // emptied when the interpreter goes
  std::string* out_ = nullptr;
  int line_ = 0;
  int64_t iterations_ = 0;
  int call_depth_ = 0;

  Flow exec(const Body& body);
  Flow exec(const Stmt& s);
  Value eval(const Expr& e);
  Value lookup(const std::string& name) const;
  void assign(const std::string& name, Value v);
  void emit(const std::string& s);
  Value binary(const std::string& op, const Value& a, const Value& b);
  Value slice(const Value& v, const Value& start, const Value& stop, const Value& step);
  std::string render_body(const Body& body);
};

// The globals every template sees (range, namespace, dict, raise_exception, strftime_now).
const Value* builtin_global(const std::string& name);
// A bound method of a str, dict or list (Python's), or Undefined.
Value method(Interpreter& in, const Value& self, const std::string& name);

}  // namespace rlx::text::jinja
