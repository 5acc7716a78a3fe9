// Values of the Jinja interpreter (chat templates): Python's objects as a template sees them —
// None, bool, int, float, str, list, dict (insertion-ordered), callables — plus Jinja's
// Undefined. Printing, truthiness, equality and ordering follow Python, because Hugging Face
// renders chat templates with Python's jinja2 and RLX must produce the same prompt bytes.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace rlx::text::jinja {

struct Value;
using List = std::vector<Value>;
using KwArgs = std::vector<std::pair<std::string, Value>>;

struct Dict {
  std::vector<std::pair<std::string, Value>> items;
  bool is_namespace = false;  // namespace(): the one object a template may assign attributes of
  const Value* find(const std::string& key) const;
  void set(const std::string& key, Value v);
};

class Interpreter;
struct Callable {
  std::string name;
  std::function<Value(Interpreter&, List& args, KwArgs& kwargs)> fn;
};

struct Value {
  enum class Kind { undefined, none, boolean, integer, number, string, list, dict, callable };
  Kind kind = Kind::undefined;
  bool b = false;
  int64_t i = 0;
  double d = 0;
  std::string s;
  std::shared_ptr<List> list;
  std::shared_ptr<Dict> dict;
  std::shared_ptr<Callable> fn;
  std::string undefined_name;  // what an Undefined stands for, for error messages
  bool tuple = false;          // a list that came from a tuple: printed (a, b)
  // Lists and dicts inside this one (0 for a scalar). Printing, comparing and freeing recurse
  // this deep, so building a value past kMaxNesting throws rlx::Error instead.
  int nesting = 0;
  static constexpr int kMaxNesting = 512;

  static Value undefined(std::string name = {});
  static Value none();
  static Value boolean(bool v);
  static Value integer(int64_t v);
  static Value number(double v);
  static Value string(std::string v);
  static Value make_list(List v = {});
  static Value make_dict(Dict v = {});
  static Value callable(std::string name, std::function<Value(Interpreter&, List&, KwArgs&)> fn);
  // Throws rlx::Error(invalid_argument) past kMaxJsonDepth levels (a request's JSON reaches here).
  static Value from_json(const nlohmann::ordered_json& j, int depth = 0);
  static constexpr int kMaxJsonDepth = 128;

  bool is_undefined() const { return kind == Kind::undefined; }
  bool is_none() const { return kind == Kind::none; }
  bool is_string() const { return kind == Kind::string; }
  bool is_list() const { return kind == Kind::list; }
  bool is_dict() const { return kind == Kind::dict; }
  bool is_numeric() const { return kind == Kind::integer || kind == Kind::number || kind == Kind::boolean; }
  double as_double() const;
};

const char* kind_name(Value::Kind k);  // Python's type names: "str", "int", "dict", …
bool truthy(const Value& v);
std::string str(const Value& v);   // Python's str()
std::string repr(const Value& v);  // Python's repr()
std::string python_float(double d);  // repr(float): shortest round trip, "2.0", "1e+16"
bool equal(const Value& a, const Value& b);
// a < b as Python orders them; throws rlx::Error for types Python cannot order.
bool less(const Value& a, const Value& b);
// json.dumps(v, ensure_ascii, indent, separators, sort_keys) as Python writes it.
struct JsonStyle {
  bool ensure_ascii = false;
  int indent = -1;  // < 0: one line
  std::string item_sep, key_sep;  // empty: Python's defaults for the indent
  bool sort_keys = false;
};
std::string to_json(const Value& v, const JsonStyle& style);

// Strings as Python sees them: sequences of code points.
std::vector<std::string> code_points(const std::string& s);
int64_t length(const Value& v);  // len(); throws for values without one

}  // namespace rlx::text::jinja
