// The syntax tree of a Jinja template: expressions and statements as the parser builds them
// and the interpreter walks them.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "text/jinja/value.h"

namespace rlx::text::jinja {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  enum class Kind {
    literal,    // value
    name,       // name
    list,       // items (name "tuple" for a tuple)
    dict,       // keys[i]: items[i]
    attr,       // a.name
    index,      // a[b]
    slice,      // a[items[0]:items[1]:items[2]] (null parts are absent)
    call,       // a(items…, kwargs…)
    filter,     // a | name(items…, kwargs…)
    test,       // a is [not] name(items…)
    unary,      // op a: "not", "-", "+"
    binary,     // a op b: and or + - * / // % ** ~
    compare,    // a op₁ x₁ op₂ x₂ …: kwargs hold (op, x) — == != < > <= >= in "not in", chained
    ternary,    // b if a else c (c may be null: undefined)
  };
  Kind kind;
  int line = 0;
  int depth = 1;  // of the tree under it: the interpreter recurses this deep, so it is bounded
  Value value;
  std::string name;  // name, attr, filter, test, operator
  bool negated = false;  // test: "is not"
  ExprPtr a, b, c;
  std::vector<ExprPtr> items;  // list, dict values, slice parts, call/filter/test arguments
  std::vector<ExprPtr> keys;   // dict keys
  std::vector<std::pair<std::string, ExprPtr>> kwargs;
};

struct Stmt;
using Body = std::vector<std::unique_ptr<Stmt>>;

struct Stmt {
  enum class Kind {
    text,      // text
    output,    // {{ expr }}
    if_,       // branches: (cond, body)…; else_body
    for_,      // targets in expr [if cond]: body; else_body
    set,       // target(s) [= expr] — or a block set (body)
    macro,     // name(params = defaults): body
    call_block_ignored,
    break_,
    continue_,
    block,     // a body that only groups (generation, filter-less blocks)
    filter_block,  // {% filter name %}body{% endfilter %}
  };
  Kind kind;
  int line = 0;
  std::string text;
  ExprPtr expr;   // output, for's iterable, set's value
  ExprPtr cond;   // for's filter
  std::vector<std::pair<ExprPtr, Body>> branches;
  Body body, else_body;
  std::vector<std::string> targets;  // for/set names; set "ns.attr" keeps the attr in `attr`
  std::string attr;
  std::string name;                  // macro, filter_block
  std::vector<std::pair<std::string, ExprPtr>> params;  // macro parameters with defaults (null: none)
};

struct Template {
  Body body;
};

}  // namespace rlx::text::jinja
