// The op enum and the static facts about each op, expanded from ops.def.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/op_enum.h"

namespace rlx::ir {

enum class Level : uint8_t { HIR, MIR, LIR };
const char* level_name(Level l);  // "hir", "mir", "lir"

enum class AttrType : uint8_t { Int, Float, Bool, Str, Enum, Ints, Intss, DType, Dims, Tensor };
const char* attr_type_name(AttrType t);

struct AttrSpec {
  std::string name;
  AttrType type;
  std::vector<std::string> choices;  // Enum only
  bool optional = false;             // may be absent (no default)
  bool variant = false;              // a fused variant ("+name" in ops.def)
  std::string default_text;          // empty when required or optional
};

struct OpInfo {
  const char* name;
  Level level;  // HIR or MIR: where the op is primitive
  int min_inputs, max_inputs, num_outputs;
  unsigned traits;
  std::vector<AttrSpec> attrs;
};

const OpInfo& op_info(Op op);
inline const char* op_name(Op op) { return op_info(op).name; }
// "hir.linear" / "mir.add": the keyword of the text form.
std::string op_keyword(Op op);
std::optional<Op> op_from_name(std::string_view name);  // accepts "add" and "mir.add"
inline bool has_trait(Op op, unsigned t) { return (op_info(op).traits & t) != 0; }
const AttrSpec* find_attr_spec(Op op, std::string_view attr);

}  // namespace rlx::ir
