// Shapes whose dims are integers or polynomials over named symbols: 384, S, S+1, 2*S, B*S.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace rlx {

// Symbol values for specialising a symbolic shape: {"B": 8, "S": 128}.
using Bindings = std::map<std::string, int64_t>;

class Dim {
 public:
  Dim() = default;
  Dim(int64_t v) : c_(v) {}  // NOLINT: a plain integer is a static dim
  static Dim symbol(std::string name);
  // Parses "S", "2*S+1", "B*S", "(S+1)*2"; throws rlx::Error(parse) naming the text.
  static Dim parse(std::string_view text);

  bool is_static() const { return terms_.empty(); }
  // The value of a static dim; throws rlx::Error when symbolic.
  int64_t value() const;
  std::optional<int64_t> try_value() const;
  // A single symbol with coefficient 1 and no constant ("S").
  bool is_symbol() const;
  const std::string& symbol_name() const;

  Dim operator+(const Dim& o) const;
  Dim operator-(const Dim& o) const;
  Dim operator*(const Dim& o) const;
  // Exact division by a constant or a monomial; nullopt when not exact.
  std::optional<Dim> exact_div(const Dim& o) const;
  bool operator==(const Dim& o) const;
  bool operator!=(const Dim& o) const { return !(*this == o); }

  Dim substitute(const Bindings& b) const;
  void collect_symbols(std::set<std::string>& out) const;
  std::string str() const;

 private:
  struct Term {
    std::vector<std::string> syms;  // sorted, repeated for powers
    int64_t coef;
    bool operator==(const Term& o) const { return coef == o.coef && syms == o.syms; }
  };
  void add_term(Term t);
  int64_t c_ = 0;
  std::vector<Term> terms_;  // sorted by (degree desc, syms), no zero coefficients
};

using Shape = std::vector<Dim>;

std::string shape_str(const Shape& s);  // "[B,S,384]"
Dim shape_numel(const Shape& s);
bool shape_is_static(const Shape& s);
// Concrete dims of a static shape; throws rlx::Error naming the first symbolic dim.
std::vector<int64_t> shape_values(const Shape& s);
Shape shape_of(const std::vector<int64_t>& dims);
Shape shape_substitute(const Shape& s, const Bindings& b);

}  // namespace rlx
