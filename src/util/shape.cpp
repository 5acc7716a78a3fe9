#include "rlx/shape.h"

#include <algorithm>
#include <cctype>
#include <climits>

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx {

namespace {
// Shape arithmetic on sizes a file or an IR text wrote: a result past int64 is bad input, named
// as such, never signed overflow.
int64_t checked_add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) throw Error(ErrorKind::invalid_argument, cat("a dimension overflows int64 (", a, " + ", b, ")"));
  return r;
}
int64_t checked_mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) throw Error(ErrorKind::invalid_argument, cat("a dimension overflows int64 (", a, " × ", b, ")"));
  return r;
}
int64_t checked_neg(int64_t a) {
  if (a == INT64_MIN) throw Error(ErrorKind::invalid_argument, "a dimension overflows int64 (−(−2^63))");
  return -a;
}

bool term_less(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  if (a.size() != b.size()) return a.size() > b.size();
  return a < b;
}
}  // namespace

Dim Dim::symbol(std::string name) {
  Dim d;
  d.terms_.push_back({{std::move(name)}, 1});
  return d;
}

void Dim::add_term(Term t) {
  if (t.coef == 0) return;
  if (t.syms.empty()) {
    c_ = checked_add(c_, t.coef);
    return;
  }
  auto it = std::lower_bound(terms_.begin(), terms_.end(), t,
                             [](const Term& a, const Term& b) { return term_less(a.syms, b.syms); });
  if (it != terms_.end() && it->syms == t.syms) {
    it->coef = checked_add(it->coef, t.coef);
    if (it->coef == 0) terms_.erase(it);
  } else {
    terms_.insert(it, std::move(t));
  }
}

int64_t Dim::value() const {
  if (!is_static()) throw Error(ErrorKind::invalid_argument, cat("dim ", str(), " is symbolic; a concrete value is needed here"));
  return c_;
}

std::optional<int64_t> Dim::try_value() const {
  if (!is_static()) return std::nullopt;
  return c_;
}

bool Dim::is_symbol() const { return c_ == 0 && terms_.size() == 1 && terms_[0].coef == 1 && terms_[0].syms.size() == 1; }

const std::string& Dim::symbol_name() const {
  if (!is_symbol()) throw Error(ErrorKind::internal, cat("dim ", str(), " is not a single symbol"));
  return terms_[0].syms[0];
}

Dim Dim::operator+(const Dim& o) const {
  Dim r = *this;
  r.c_ = checked_add(r.c_, o.c_);
  for (const auto& t : o.terms_) r.add_term(t);
  return r;
}

Dim Dim::operator-(const Dim& o) const {
  Dim r = *this;
  r.c_ = checked_add(r.c_, checked_neg(o.c_));
  for (auto t : o.terms_) {
    t.coef = checked_neg(t.coef);
    r.add_term(std::move(t));
  }
  return r;
}

Dim Dim::operator*(const Dim& o) const {
  Dim r;
  std::vector<Term> a = terms_, b = o.terms_;
  a.push_back({{}, c_});
  b.push_back({{}, o.c_});
  for (const auto& x : a)
    for (const auto& y : b) {
      Term t{x.syms, checked_mul(x.coef, y.coef)};
      t.syms.insert(t.syms.end(), y.syms.begin(), y.syms.end());
      std::sort(t.syms.begin(), t.syms.end());
      r.add_term(std::move(t));
    }
  return r;
}

std::optional<Dim> Dim::exact_div(const Dim& o) const {
  if (o.is_static()) {
    int64_t d = o.c_;
    if (d == 0) return std::nullopt;
    if (c_ % d) return std::nullopt;
    Dim r(c_ / d);
    for (const auto& t : terms_) {
      if (t.coef % d) return std::nullopt;
      r.add_term({t.syms, t.coef / d});
    }
    return r;
  }
  if (o.c_ != 0 || o.terms_.size() != 1) {
    if (*this == o) return Dim(1);
    return std::nullopt;
  }
  const Term& m = o.terms_[0];
  if (c_ != 0) return std::nullopt;
  Dim r;
  for (const auto& t : terms_) {
    if (t.coef % m.coef) return std::nullopt;
    std::vector<std::string> rest;
    // multiset difference t.syms - m.syms (both sorted)
    size_t j = 0;
    for (const auto& s : t.syms) {
      if (j < m.syms.size() && s == m.syms[j]) ++j;
      else rest.push_back(s);
    }
    if (j != m.syms.size()) return std::nullopt;
    r.add_term({rest, t.coef / m.coef});
  }
  return r;
}

bool Dim::operator==(const Dim& o) const { return c_ == o.c_ && terms_ == o.terms_; }

Dim Dim::substitute(const Bindings& b) const {
  Dim r(c_);
  for (const auto& t : terms_) {
    Term nt{{}, t.coef};
    for (const auto& s : t.syms) {
      auto it = b.find(s);
      if (it != b.end()) nt.coef *= it->second;
      else nt.syms.push_back(s);
    }
    r.add_term(std::move(nt));
  }
  return r;
}

void Dim::collect_symbols(std::set<std::string>& out) const {
  for (const auto& t : terms_) out.insert(t.syms.begin(), t.syms.end());
}

std::string Dim::str() const {
  if (terms_.empty()) return std::to_string(c_);
  std::string out;
  auto emit = [&](int64_t coef, const std::vector<std::string>& syms) {
    bool first = out.empty();
    int64_t mag = coef < 0 ? -coef : coef;
    if (coef < 0) out += first ? "-" : "-";
    else if (!first) out += "+";
    bool need_star = false;
    if (mag != 1 || syms.empty()) {
      out += std::to_string(mag);
      need_star = true;
    }
    for (const auto& s : syms) {
      if (need_star) out += "*";
      out += s;
      need_star = true;
    }
  };
  for (const auto& t : terms_) emit(t.coef, t.syms);
  if (c_ != 0) emit(c_, {});
  return out;
}

// ---- parsing: expr := term (('+'|'-') term)* ; term := factor ('*' factor)* ;
//      factor := INT | IDENT | '(' expr ')' | '-' factor
namespace {
struct DimParser {
  std::string_view s;
  size_t i = 0;
  void skip() {
    while (i < s.size() && s[i] == ' ') ++i;
  }
  [[noreturn]] void fail(const std::string& what) {
    throw Error(ErrorKind::parse, cat("bad dim expression '", s, "' at column ", i + 1, ": ", what));
  }
  Dim expr() {
    Dim d = term();
    for (;;) {
      skip();
      if (i < s.size() && s[i] == '+') {
        ++i;
        d = d + term();
      } else if (i < s.size() && s[i] == '-') {
        ++i;
        d = d - term();
      } else {
        return d;
      }
    }
  }
  Dim term() {
    Dim d = factor();
    for (;;) {
      skip();
      if (i < s.size() && s[i] == '*') {
        ++i;
        d = d * factor();
      } else {
        return d;
      }
    }
  }
  Dim factor() {
    skip();
    if (i >= s.size()) fail("expected a number, a symbol or '('");
    char c = s[i];
    if (c == '(') {
      ++i;
      Dim d = expr();
      skip();
      if (i >= s.size() || s[i] != ')') fail("expected ')'");
      ++i;
      return d;
    }
    if (c == '-') {
      ++i;
      return Dim(0) - factor();
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      int64_t v = 0;
      while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
        if (v > (INT64_MAX - 9) / 10) fail("number too large");
        v = v * 10 + (s[i++] - '0');
      }
      return Dim(v);
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t b = i;
      while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_')) ++i;
      return Dim::symbol(std::string(s.substr(b, i - b)));
    }
    fail(cat("unexpected character '", c, "'"));
  }
};
}  // namespace

Dim Dim::parse(std::string_view text) {
  DimParser p{text};
  Dim d = p.expr();
  p.skip();
  if (p.i != text.size()) p.fail("unexpected trailing text");
  return d;
}

std::string shape_str(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ",";
    out += s[i].str();
  }
  return out + "]";
}

Dim shape_numel(const Shape& s) {
  Dim n(1);
  for (const auto& d : s) n = n * d;
  return n;
}

bool shape_is_static(const Shape& s) {
  for (const auto& d : s)
    if (!d.is_static()) return false;
  return true;
}

std::vector<int64_t> shape_values(const Shape& s) {
  std::vector<int64_t> out;
  out.reserve(s.size());
  for (const auto& d : s) {
    if (!d.is_static())
      throw Error(ErrorKind::invalid_argument, cat("shape ", shape_str(s), " has symbolic dim ", d.str(), "; bind it to a value first"));
    out.push_back(d.value());
  }
  return out;
}

Shape shape_of(const std::vector<int64_t>& dims) { return Shape(dims.begin(), dims.end()); }

Shape shape_substitute(const Shape& s, const Bindings& b) {
  Shape out;
  out.reserve(s.size());
  for (const auto& d : s) out.push_back(d.substitute(b));
  return out;
}

}  // namespace rlx
