#include "ir/op.h"

#include <array>

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::ir {

const char* level_name(Level l) {
  switch (l) {
    case Level::HIR: return "hir";
    case Level::MIR: return "mir";
    case Level::LIR: return "lir";
  }
  return "?";
}

const char* attr_type_name(AttrType t) {
  switch (t) {
    case AttrType::Int: return "int";
    case AttrType::Float: return "float";
    case AttrType::Bool: return "bool";
    case AttrType::Str: return "str";
    case AttrType::Enum: return "enum";
    case AttrType::Ints: return "ints";
    case AttrType::Intss: return "intss";
    case AttrType::DType: return "dtype";
    case AttrType::Dims: return "dims";
    case AttrType::Tensor: return "tensor";
  }
  return "?";
}

namespace {

std::vector<AttrSpec> parse_schema(const char* op, std::string_view schema) {
  std::vector<AttrSpec> out;
  for (auto item : split(schema, ' ')) {
    if (item.empty()) continue;
    AttrSpec spec;
    if (item[0] == '+') {
      spec.variant = true;
      item.erase(0, 1);
    }
    size_t colon = item.find(':');
    if (colon == std::string::npos) throw Error(ErrorKind::internal, cat("ops.def: ", op, ": attribute '", item, "' has no type"));
    spec.name = item.substr(0, colon);
    std::string type = item.substr(colon + 1);
    size_t eq = type.find('=');
    if (eq != std::string::npos) {
      spec.default_text = type.substr(eq + 1);
      type = type.substr(0, eq);
    }
    if (!type.empty() && type.back() == '?') {
      spec.optional = true;
      type.pop_back();
    }
    if (starts_with(type, "enum(")) {
      spec.type = AttrType::Enum;
      spec.choices = split(type.substr(5, type.size() - 6), ',');
    } else if (type == "int") spec.type = AttrType::Int;
    else if (type == "float") spec.type = AttrType::Float;
    else if (type == "bool") spec.type = AttrType::Bool;
    else if (type == "str") spec.type = AttrType::Str;
    else if (type == "ints") spec.type = AttrType::Ints;
    else if (type == "intss") spec.type = AttrType::Intss;
    else if (type == "dtype") spec.type = AttrType::DType;
    else if (type == "dims") spec.type = AttrType::Dims;
    else if (type == "tensor") spec.type = AttrType::Tensor;
    else throw Error(ErrorKind::internal, cat("ops.def: ", op, ": unknown attribute type '", type, "'"));
    out.push_back(std::move(spec));
  }
  return out;
}

const std::array<OpInfo, kNumOps>& table() {
  static const std::array<OpInfo, kNumOps> t = [] {
    std::array<OpInfo, kNumOps> a{};
    int i = 0;
#define RLX_OP(name, level, min_in, max_in, outs, attrs, traits) \
  a[i++] = OpInfo{#name, Level::level, min_in, max_in, outs, traits, parse_schema(#name, attrs)};
#include "ir/ops.def"
#undef RLX_OP
    return a;
  }();
  return t;
}

}  // namespace

const OpInfo& op_info(Op op) { return table()[static_cast<size_t>(op)]; }

std::string op_keyword(Op op) {
  const OpInfo& info = op_info(op);
  return std::string(level_name(info.level)) + "." + info.name;
}

std::optional<Op> op_from_name(std::string_view name) {
  std::string_view bare = name;
  if (starts_with(name, "hir.") || starts_with(name, "mir.")) bare = name.substr(4);
  for (int i = 0; i < kNumOps; ++i) {
    const OpInfo& info = table()[i];
    if (bare == info.name) {
      if (bare.size() != name.size() && name.substr(0, 3) != level_name(info.level)) return std::nullopt;
      return static_cast<Op>(i);
    }
  }
  return std::nullopt;
}

const AttrSpec* find_attr_spec(Op op, std::string_view attr) {
  for (const auto& s : op_info(op).attrs)
    if (s.name == attr) return &s;
  return nullptr;
}

}  // namespace rlx::ir
