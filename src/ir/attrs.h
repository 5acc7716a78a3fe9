// Typed node attributes. Each op's attributes follow its schema in ops.def; the verifier checks
// that every attribute has the declared type, and normalize_attrs() fills in defaults.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "ir/op.h"
#include "rlx/dtype.h"
#include "rlx/shape.h"
#include "rlx/tensor.h"

namespace rlx::ir {

using Ints = std::vector<int64_t>;
using Intss = std::vector<std::vector<int64_t>>;

// Str holds both free strings and enum choices.
using AttrValue = std::variant<bool, int64_t, double, std::string, Ints, Intss, DType, Shape, Tensor>;

bool attr_equal(const AttrValue& a, const AttrValue& b);
size_t attr_hash(const AttrValue& v);
// Text form of a value of the given type ("[[2],[0]]", "f32", "[B,384]", "1e-05" …).
std::string attr_to_text(const AttrValue& v, AttrType type);
// Parses the text form; `what` names the attribute for error messages.
AttrValue attr_from_text(std::string_view text, const AttrSpec& spec, const std::string& what);
// Does the stored value match the declared type?
bool attr_has_type(const AttrValue& v, const AttrSpec& spec);

class Attrs {
 public:
  Attrs() = default;
  Attrs(std::initializer_list<std::pair<std::string, AttrValue>> items);

  bool has(std::string_view key) const { return find(key) != nullptr; }
  const AttrValue* find(std::string_view key) const;
  void set(const std::string& key, AttrValue v);
  void erase(std::string_view key);
  const std::vector<std::pair<std::string, AttrValue>>& items() const { return items_; }

  // Typed getters throw rlx::Error(invalid_graph) naming the key when absent or mistyped.
  int64_t i(std::string_view key) const;
  double f(std::string_view key) const;
  bool b(std::string_view key) const;
  const std::string& s(std::string_view key) const;
  const Ints& ints(std::string_view key) const;
  const Intss& intss(std::string_view key) const;
  DType dtype(std::string_view key) const;
  const Shape& dims(std::string_view key) const;
  const Tensor& tensor(std::string_view key) const;

  bool operator==(const Attrs& o) const;
  size_t hash() const;

 private:
  template <class T>
  const T& get(std::string_view key, const char* type) const;
  std::vector<std::pair<std::string, AttrValue>> items_;  // sorted by key
};

// Fills defaults from the schema; throws rlx::Error naming the op and attribute when a
// required attribute is missing, an unknown one is present, or a type is wrong.
void normalize_attrs(Op op, Attrs& attrs);

}  // namespace rlx::ir
