#include "formats/weight_type.h"

#include <array>

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::formats {

namespace {

struct Info {
  WeightType type;
  const char* name;
  int64_t block_elems, block_bytes;
  int ggml_id;  // -1: not a ggml type
  bool in_safetensors;
};

// Block sizes follow ggml-common.h (QK4_0 = 32, QK_K = 256); safetensors sub-byte floats pack
// whole bytes (F4: 2 values a byte, F6: 4 values in 3 bytes).
constexpr std::array<Info, 34> kInfos = {{
    {WeightType::f64, "F64", 1, 8, 28, true},
    {WeightType::f32, "F32", 1, 4, 0, true},
    {WeightType::f16, "F16", 1, 2, 1, true},
    {WeightType::bf16, "BF16", 1, 2, 30, true},
    {WeightType::c64, "C64", 1, 8, -1, true},
    {WeightType::f8_e4m3, "F8_E4M3", 1, 1, -1, true},
    {WeightType::f8_e5m2, "F8_E5M2", 1, 1, -1, true},
    {WeightType::f8_e8m0, "F8_E8M0", 1, 1, -1, true},
    {WeightType::f6_e2m3, "F6_E2M3", 4, 3, -1, true},
    {WeightType::f6_e3m2, "F6_E3M2", 4, 3, -1, true},
    {WeightType::f4, "F4", 2, 1, -1, true},
    {WeightType::i64, "I64", 1, 8, 27, true},
    {WeightType::i32, "I32", 1, 4, 26, true},
    {WeightType::i16, "I16", 1, 2, 25, true},
    {WeightType::i8, "I8", 1, 1, 24, true},
    {WeightType::u64, "U64", 1, 8, -1, true},
    {WeightType::u32, "U32", 1, 4, -1, true},
    {WeightType::u16, "U16", 1, 2, -1, true},
    {WeightType::u8, "U8", 1, 1, -1, true},
    {WeightType::boolean, "BOOL", 1, 1, -1, true},
    {WeightType::q4_0, "Q4_0", 32, 18, 2, false},
    {WeightType::q4_1, "Q4_1", 32, 20, 3, false},
    {WeightType::q5_0, "Q5_0", 32, 22, 6, false},
    {WeightType::q5_1, "Q5_1", 32, 24, 7, false},
    {WeightType::q8_0, "Q8_0", 32, 34, 8, false},
    {WeightType::q2_k, "Q2_K", 256, 84, 10, false},
    {WeightType::q3_k, "Q3_K", 256, 110, 11, false},
    {WeightType::q4_k, "Q4_K", 256, 144, 12, false},
    {WeightType::q5_k, "Q5_K", 256, 176, 13, false},
    {WeightType::q6_k, "Q6_K", 256, 210, 14, false},
    {WeightType::q8_k, "Q8_K", 256, 292, 15, false},
    {WeightType::iq4_nl, "IQ4_NL", 32, 18, 20, false},
    {WeightType::iq4_xs, "IQ4_XS", 256, 136, 23, false},
    {WeightType::unsupported, "unsupported", 1, 0, -1, false},
}};

constexpr bool table_in_enum_order() {
  for (size_t i = 0; i < kInfos.size(); ++i)
    if (static_cast<size_t>(kInfos[i].type) != i) return false;
  return kInfos.back().type == WeightType::unsupported;
}
static_assert(table_in_enum_order(), "kInfos must list WeightType values in declaration order");

const Info& info(WeightType t) { return kInfos[static_cast<size_t>(t)]; }

// Every id ggml has assigned (gguf.md / ggml.h), including retired and repacked ones, so that a
// file using one gets a message naming it rather than "unknown type".
constexpr std::array<const char*, 40> kGgmlNames = {
    "F32",     "F16",     "Q4_0",   "Q4_1",     "Q4_2",     "Q4_3",       "Q5_0",       "Q5_1",
    "Q8_0",    "Q8_1",    "Q2_K",   "Q3_K",     "Q4_K",     "Q5_K",       "Q6_K",       "Q8_K",
    "IQ2_XXS", "IQ2_XS",  "IQ3_XXS", "IQ1_S",   "IQ4_NL",   "IQ3_S",      "IQ2_S",      "IQ4_XS",
    "I8",      "I16",     "I32",    "I64",      "F64",      "IQ1_M",      "BF16",       "Q4_0_4_4",
    "Q4_0_4_8", "Q4_0_8_8", "TQ1_0", "TQ2_0",   "IQ4_NL_4_4", "IQ4_NL_4_8", "IQ4_NL_8_8", "MXFP4",
};

}  // namespace

const char* weight_type_name(WeightType t) { return info(t).name; }
int64_t weight_type_block_elems(WeightType t) { return info(t).block_elems; }
int64_t weight_type_block_bytes(WeightType t) { return info(t).block_bytes; }

std::optional<uint64_t> weight_type_bytes(WeightType t, uint64_t numel) {
  const Info& i = info(t);
  if (i.block_bytes == 0) return std::nullopt;
  uint64_t be = static_cast<uint64_t>(i.block_elems), bb = static_cast<uint64_t>(i.block_bytes);
  if (numel % be != 0) return std::nullopt;
  uint64_t blocks = numel / be;
  if (blocks > UINT64_MAX / bb) return std::nullopt;
  return blocks * bb;
}

std::optional<DType> weight_type_dtype(WeightType t) {
  switch (t) {
    case WeightType::f64: return DType::f64;
    case WeightType::f32: return DType::f32;
    case WeightType::f16: return DType::f16;
    case WeightType::bf16: return DType::bf16;
    case WeightType::c64: return DType::c64;
    case WeightType::i64: return DType::i64;
    case WeightType::i32: return DType::i32;
    case WeightType::i16: return DType::i16;
    case WeightType::i8: return DType::i8;
    case WeightType::u8: return DType::u8;
    case WeightType::boolean: return DType::boolean;
    default: return std::nullopt;
  }
}

WeightType weight_type_of(DType t) {
  for (const Info& i : kInfos) {
    auto d = weight_type_dtype(i.type);
    if (d && *d == t) return i.type;
  }
  throw Error(ErrorKind::invalid_argument,
              cat("dtype ", dtype_name(t), " has no weight-file spelling; unpack it to i8 first"));
}

bool weight_type_is_quantized(WeightType t) {
  return t >= WeightType::q4_0 && t <= WeightType::iq4_xs;
}

std::optional<WeightType> weight_type_from_safetensors(std::string_view name) {
  for (const Info& i : kInfos)
    if (i.in_safetensors && name == i.name) return i.type;
  return std::nullopt;
}

bool weight_type_in_safetensors(WeightType t) { return info(t).in_safetensors; }

std::optional<WeightType> weight_type_from_ggml(uint32_t id) {
  for (const Info& i : kInfos)
    if (i.ggml_id >= 0 && static_cast<uint32_t>(i.ggml_id) == id) return i.type;
  if (id < kGgmlNames.size()) return WeightType::unsupported;
  return std::nullopt;
}

std::optional<uint32_t> weight_type_ggml_id(WeightType t) {
  int id = info(t).ggml_id;
  if (id < 0) return std::nullopt;
  return static_cast<uint32_t>(id);
}

const char* ggml_type_name(uint32_t id) { return id < kGgmlNames.size() ? kGgmlNames[id] : nullptr; }

}  // namespace rlx::formats
