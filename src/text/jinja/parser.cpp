#include "text/jinja/parser.h"

#include <algorithm>
#include <initializer_list>

#include "rlx/error.h"
#include "text/jinja/lexer.h"
#include "util/strings.h"

namespace rlx::text::jinja {

namespace {

// Nesting past this is refused (a hostile template must not exhaust the stack): statements and
// parenthesized expressions while parsing, and the depth of every expression tree (a chain like
// 1 + 1 + … parses in a loop but evaluates recursively).
constexpr int kMaxDepth = 200;
constexpr int kMaxExprDepth = 256;

class Parser {
 public:
  explicit Parser(std::vector<Token> toks) : t_(std::move(toks)) {}

  Template run() {
    Template tpl;
    std::string stopped;
    tpl.body = body({}, &stopped);
    return tpl;
  }

 private:
  std::vector<Token> t_;
  size_t p_ = 0;
  int depth_ = 0;

  struct Deeper {
    Parser& p;
    explicit Deeper(Parser& x) : p(x) {
      if (++p.depth_ > kMaxDepth) p.fail("nesting too deep");
    }
    ~Deeper() { --p.depth_; }
  };

  const Token& peek(size_t k = 0) const { return t_[std::min(p_ + k, t_.size() - 1)]; }
  const Token& next() { return t_[std::min(p_++, t_.size() - 1)]; }
  [[noreturn]] void fail(const std::string& what) const { throw Error(ErrorKind::parse, cat("chat template, line ", peek().line, ": ", what)); }
  bool is_op(const char* op, size_t k = 0) const { return peek(k).kind == Token::Kind::op && peek(k).s == op; }
  bool is_name(const char* n, size_t k = 0) const { return peek(k).kind == Token::Kind::name && peek(k).s == n; }
  void expect_op(const char* op) {
    if (!is_op(op)) fail(cat("expected '", op, "', found ", describe(peek())));
    ++p_;
  }
  void expect_name(const char* n) {
    if (!is_name(n)) fail(cat("expected '", n, "', found ", describe(peek())));
    ++p_;
  }
  void expect_block_end() {
    if (peek().kind != Token::Kind::block_end) fail(cat("expected '%}', found ", describe(peek())));
    ++p_;
  }
  std::string ident() {
    if (peek().kind != Token::Kind::name) fail(cat("expected a name, found ", describe(peek())));
    return next().s;
  }
  static std::string describe(const Token& t) {
    switch (t.kind) {
      case Token::Kind::text: return "text";
      case Token::Kind::var_begin: return "'{{'";
      case Token::Kind::var_end: return "'}}'";
      case Token::Kind::block_begin: return "'{%'";
      case Token::Kind::block_end: return "'%}'";
      case Token::Kind::name: return cat("'", t.s, "'");
      case Token::Kind::string: return "a string";
      case Token::Kind::integer:
      case Token::Kind::number: return "a number";
      case Token::Kind::op: return cat("'", t.s, "'");
      case Token::Kind::end: return "the end of the template";
    }
    return "?";
  }

  // Sets e's depth from its children's and refuses a tree too deep to evaluate.
  ExprPtr sealed(ExprPtr e) {
    int d = 0;
    for (const ExprPtr* c : {&e->a, &e->b, &e->c})
      if (*c) d = std::max(d, (*c)->depth);
    for (const auto& x : e->items)
      if (x) d = std::max(d, x->depth);
    for (const auto& x : e->keys)
      if (x) d = std::max(d, x->depth);
    for (const auto& kv : e->kwargs)
      if (kv.second) d = std::max(d, kv.second->depth);
    e->depth = d + 1;
    if (e->depth > kMaxExprDepth) fail(cat("expression nested too deep (more than ", kMaxExprDepth, " levels)"));
    return e;
  }

  ExprPtr make(Expr::Kind k) {
    auto e = std::make_unique<Expr>();
    e->kind = k;
    e->line = peek().line;
    return e;
  }
  std::unique_ptr<Stmt> stmt(Stmt::Kind k, int line) {
    auto s = std::make_unique<Stmt>();
    s->kind = k;
    s->line = line;
    return s;
  }

  // Statements up to a {% NAME %} with NAME in `ends` (left at NAME) or the template's end.
  Body body(std::initializer_list<const char*> ends, std::string* stopped) {
    Deeper guard(*this);
    Body out;
    while (true) {
      const Token& tok = peek();
      if (tok.kind == Token::Kind::end) {
        if (ends.size()) fail(cat("missing {% ", *(ends.end() - 1), " %} (the template ended first)"));
        return out;
      }
      if (tok.kind == Token::Kind::text) {
        auto s = stmt(Stmt::Kind::text, tok.line);
        s->text = next().s;
        out.push_back(std::move(s));
        continue;
      }
      if (tok.kind == Token::Kind::var_begin) {
        int line = next().line;
        auto s = stmt(Stmt::Kind::output, line);
        s->expr = expr();
        if (peek().kind != Token::Kind::var_end) fail(cat("expected '}}', found ", describe(peek())));
        ++p_;
        out.push_back(std::move(s));
        continue;
      }
      if (tok.kind != Token::Kind::block_begin) fail(cat("unexpected ", describe(tok)));
      ++p_;
      std::string kw = ident();
      if (std::find_if(ends.begin(), ends.end(), [&](const char* e) { return kw == e; }) != ends.end()) {
        *stopped = kw;
        return out;
      }
      out.push_back(statement(kw, tok.line));
    }
  }

  std::unique_ptr<Stmt> statement(const std::string& kw, int line) {
    std::string stopped;
    if (kw == "if") {
      auto s = stmt(Stmt::Kind::if_, line);
      ExprPtr cond = expr();
      expect_block_end();
      while (true) {
        Body b = body({"elif", "else", "endif"}, &stopped);
        s->branches.emplace_back(std::move(cond), std::move(b));
        if (stopped == "elif") {
          cond = expr();
          expect_block_end();
          continue;
        }
        expect_block_end();
        if (stopped == "else") {
          s->else_body = body({"endif"}, &stopped);
          expect_block_end();
        }
        return s;
      }
    }
    if (kw == "for") {
      auto s = stmt(Stmt::Kind::for_, line);
      s->targets.push_back(ident());
      while (is_op(",")) {
        ++p_;
        s->targets.push_back(ident());
      }
      expect_name("in");
      s->expr = or_expr();
      if (is_name("if")) {
        ++p_;
        s->cond = expr();
      }
      if (is_name("recursive")) fail("recursive for loops are not supported");
      expect_block_end();
      s->body = body({"else", "endfor"}, &stopped);
      expect_block_end();
      if (stopped == "else") {
        s->else_body = body({"endfor"}, &stopped);
        expect_block_end();
      }
      return s;
    }
    if (kw == "set") {
      auto s = stmt(Stmt::Kind::set, line);
      s->targets.push_back(ident());
      if (is_op(".")) {
        ++p_;
        s->attr = ident();
      }
      while (is_op(",")) {
        ++p_;
        s->targets.push_back(ident());
      }
      if (is_op("=")) {
        ++p_;
        s->expr = tuple_or_expr();
        expect_block_end();
        return s;
      }
      if (s->targets.size() != 1) fail("a block set takes one name");
      expect_block_end();
      s->body = body({"endset"}, &stopped);
      expect_block_end();
      return s;
    }
    if (kw == "macro") {
      auto s = stmt(Stmt::Kind::macro, line);
      s->name = ident();
      expect_op("(");
      while (!is_op(")")) {
        std::string pname = ident();
        ExprPtr def;
        if (is_op("=")) {
          ++p_;
          def = expr();
        }
        s->params.emplace_back(pname, std::move(def));
        if (!is_op(",")) break;
        ++p_;
      }
      expect_op(")");
      expect_block_end();
      s->body = body({"endmacro"}, &stopped);
      if (peek().kind == Token::Kind::name) ++p_;  // {% endmacro name %}
      expect_block_end();
      return s;
    }
    if (kw == "break" || kw == "continue") {
      expect_block_end();
      return stmt(kw == "break" ? Stmt::Kind::break_ : Stmt::Kind::continue_, line);
    }
    if (kw == "generation") {  // transformers' assistant-mask marker: renders its body
      expect_block_end();
      auto s = stmt(Stmt::Kind::block, line);
      s->body = body({"endgeneration"}, &stopped);
      expect_block_end();
      return s;
    }
    if (kw == "filter") {
      auto s = stmt(Stmt::Kind::filter_block, line);
      auto f = make(Expr::Kind::filter);
      f->name = ident();
      if (is_op("(")) args(*f);
      s->expr = std::move(f);
      expect_block_end();
      s->body = body({"endfilter"}, &stopped);
      expect_block_end();
      return s;
    }
    fail(cat("unknown or unsupported tag '{% ", kw, " %}'"));
  }

  // `a, b` on the right of a set makes a list (Python's tuple).
  ExprPtr tuple_or_expr() {
    ExprPtr first = expr();
    if (!is_op(",")) return first;
    auto l = make(Expr::Kind::list);
    l->name = "tuple";
    l->items.push_back(std::move(first));
    while (is_op(",")) {
      ++p_;
      l->items.push_back(expr());
    }
    return sealed(std::move(l));
  }

  ExprPtr expr() {
    Deeper guard(*this);
    ExprPtr e = or_expr();
    while (is_name("if")) {
      ++p_;
      auto t = make(Expr::Kind::ternary);
      t->a = or_expr();
      t->b = std::move(e);
      if (is_name("else")) {
        ++p_;
        t->c = expr();
      }
      e = sealed(std::move(t));
    }
    return e;
  }

  ExprPtr binary(std::string op, ExprPtr a, ExprPtr b) {
    auto e = make(Expr::Kind::binary);
    e->name = std::move(op);
    e->a = std::move(a);
    e->b = std::move(b);
    return sealed(std::move(e));
  }

  ExprPtr or_expr() {
    ExprPtr e = and_expr();
    while (is_name("or")) {
      ++p_;
      e = binary("or", std::move(e), and_expr());
    }
    return e;
  }
  ExprPtr and_expr() {
    ExprPtr e = not_expr();
    while (is_name("and")) {
      ++p_;
      e = binary("and", std::move(e), not_expr());
    }
    return e;
  }
  ExprPtr not_expr() {
    if (is_name("not")) {
      Deeper guard(*this);
      ++p_;
      auto u = make(Expr::Kind::unary);
      u->name = "not";
      u->a = not_expr();
      return sealed(std::move(u));
    }
    return compare();
  }
  // a < b < c is Python's chain: a < b and b < c, b evaluated once.
  ExprPtr compare() {
    ExprPtr first = math1();
    auto chain = make(Expr::Kind::compare);
    while (true) {
      const Token& t = peek();
      std::string op;
      if (t.kind == Token::Kind::op && (t.s == "==" || t.s == "!=" || t.s == "<" || t.s == ">" || t.s == "<=" || t.s == ">=")) {
        op = next().s;
      } else if (is_name("in")) {
        ++p_;
        op = "in";
      } else if (is_name("not") && is_name("in", 1)) {
        p_ += 2;
        op = "not in";
      } else {
        break;
      }
      chain->kwargs.emplace_back(op, math1());
    }
    if (chain->kwargs.empty()) return first;
    chain->a = std::move(first);
    return sealed(std::move(chain));
  }
  ExprPtr math1() {
    ExprPtr e = concat();
    while (is_op("+") || is_op("-")) {
      std::string op = next().s;
      e = binary(op, std::move(e), concat());
    }
    return e;
  }
  ExprPtr concat() {
    ExprPtr e = math2();
    while (is_op("~")) {
      ++p_;
      e = binary("~", std::move(e), math2());
    }
    return e;
  }
  ExprPtr math2() {
    ExprPtr e = power();
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
      std::string op = next().s;
      e = binary(op, std::move(e), power());
    }
    return e;
  }
  ExprPtr power() {
    ExprPtr e = unary(true);
    while (is_op("**")) {
      ++p_;
      e = binary("**", std::move(e), unary(true));
    }
    return e;
  }
  ExprPtr unary(bool with_filter) {
    Deeper guard(*this);
    ExprPtr e;
    if (is_op("-") || is_op("+")) {
      auto u = make(Expr::Kind::unary);
      u->name = next().s;
      u->a = unary(false);
      e = sealed(std::move(u));
    } else {
      e = postfix(primary());
    }
    return with_filter ? filters(std::move(e)) : std::move(e);
  }

  ExprPtr primary() {
    const Token& t = peek();
    auto lit = [&](Value v) {
      auto e = make(Expr::Kind::literal);
      e->value = std::move(v);
      return e;
    };
    switch (t.kind) {
      case Token::Kind::name: {
        std::string n = next().s;
        if (n == "true" || n == "True") return lit(Value::boolean(true));
        if (n == "false" || n == "False") return lit(Value::boolean(false));
        if (n == "none" || n == "None") return lit(Value::none());
        auto e = make(Expr::Kind::name);
        e->name = n;
        return e;
      }
      case Token::Kind::string: {
        std::string s = next().s;
        while (peek().kind == Token::Kind::string) s += next().s;  // "a" "b" is "ab"
        return lit(Value::string(std::move(s)));
      }
      case Token::Kind::integer: return lit(Value::integer(next().i));
      case Token::Kind::number: return lit(Value::number(next().d));
      case Token::Kind::op:
        if (t.s == "(") {
          ++p_;
          if (is_op(")")) {
            ++p_;
            Value empty = Value::make_list();
            empty.tuple = true;
            return lit(std::move(empty));
          }
          ExprPtr e = expr();
          if (is_op(",")) {  // a tuple
            auto l = make(Expr::Kind::list);
            l->name = "tuple";
            l->items.push_back(std::move(e));
            while (is_op(",")) {
              ++p_;
              if (is_op(")")) break;
              l->items.push_back(expr());
            }
            e = sealed(std::move(l));
          }
          expect_op(")");
          return e;
        }
        if (t.s == "[") {
          ++p_;
          auto l = make(Expr::Kind::list);
          while (!is_op("]")) {
            l->items.push_back(expr());
            if (!is_op(",")) break;
            ++p_;
          }
          expect_op("]");
          return sealed(std::move(l));
        }
        if (t.s == "{") {
          ++p_;
          auto d = make(Expr::Kind::dict);
          while (!is_op("}")) {
            d->keys.push_back(expr());
            expect_op(":");
            d->items.push_back(expr());
            if (!is_op(",")) break;
            ++p_;
          }
          expect_op("}");
          return sealed(std::move(d));
        }
        break;
      default: break;
    }
    fail(cat("expected an expression, found ", describe(t)));
  }

  ExprPtr postfix(ExprPtr e) {
    while (true) {
      if (is_op(".")) {
        ++p_;
        if (peek().kind == Token::Kind::integer) {  // a.0 is a[0]
          auto ix = make(Expr::Kind::index);
          auto k = make(Expr::Kind::literal);
          k->value = Value::integer(next().i);
          ix->a = std::move(e);
          ix->b = std::move(k);
          e = sealed(std::move(ix));
          continue;
        }
        auto a = make(Expr::Kind::attr);
        a->name = ident();
        a->a = std::move(e);
        e = sealed(std::move(a));
      } else if (is_op("[")) {
        ++p_;
        e = sealed(subscript(std::move(e)));
      } else if (is_op("(")) {
        auto c = make(Expr::Kind::call);
        c->a = std::move(e);
        args(*c);
        e = sealed(std::move(c));
      } else {
        return e;
      }
    }
  }

  ExprPtr subscript(ExprPtr target) {
    ExprPtr parts[3];
    int n = 0;
    bool is_slice = false;
    while (true) {
      if (!is_op(":") && !is_op("]")) parts[n] = expr();
      if (is_op(":")) {
        is_slice = true;
        ++p_;
        if (++n > 2) fail("a slice takes at most start:stop:step");
        continue;
      }
      break;
    }
    expect_op("]");
    if (!is_slice) {
      if (!parts[0]) fail("an empty subscript");
      auto ix = make(Expr::Kind::index);
      ix->a = std::move(target);
      ix->b = std::move(parts[0]);
      return ix;
    }
    auto s = make(Expr::Kind::slice);
    s->a = std::move(target);
    for (auto& p : parts) s->items.push_back(std::move(p));
    return s;
  }

  // (positional…, name=value…)
  void args(Expr& e) {
    expect_op("(");
    while (!is_op(")")) {
      if (peek().kind == Token::Kind::name && is_op("=", 1)) {
        std::string k = next().s;
        ++p_;
        e.kwargs.emplace_back(k, expr());
      } else {
        if (!e.kwargs.empty()) fail("a positional argument after a keyword argument");
        e.items.push_back(expr());
      }
      if (!is_op(",")) break;
      ++p_;
    }
    expect_op(")");
  }

  ExprPtr filters(ExprPtr e) {
    while (true) {
      if (is_op("|")) {
        ++p_;
        auto f = make(Expr::Kind::filter);
        f->name = ident();
        f->a = std::move(e);
        if (is_op("(")) args(*f);
        e = sealed(std::move(f));
      } else if (is_name("is")) {
        ++p_;
        auto t = make(Expr::Kind::test);
        if (is_name("not")) {
          ++p_;
          t->negated = true;
        }
        t->name = ident();
        t->a = std::move(e);
        if (is_op("(")) {
          args(*t);
        } else {
          const Token& k = peek();
          bool starts = k.kind == Token::Kind::string || k.kind == Token::Kind::integer || k.kind == Token::Kind::number ||
                        (k.kind == Token::Kind::name && k.s != "else" && k.s != "or" && k.s != "and" && k.s != "if" && k.s != "in" && k.s != "not" && k.s != "is") ||
                        (k.kind == Token::Kind::op && (k.s == "[" || k.s == "{"));
          if (starts) t->items.push_back(postfix(primary()));
        }
        e = sealed(std::move(t));
      } else {
        return e;
      }
    }
  }
};

}  // namespace

Template parse(const std::string& source) { return Parser(tokenize(source)).run(); }

}  // namespace rlx::text::jinja
