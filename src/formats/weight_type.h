// Element and block types as weight files name them: safetensors dtypes (F8_E4M3, U32 …) and
// ggml types (Q4_K …). Kept apart from rlx::DType because many are storage-only or
// block-quantized; weight_type_dtype() says when a file type is also an rlx dtype.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "rlx/dtype.h"

namespace rlx::formats {

enum class WeightType : uint8_t {
  f64, f32, f16, bf16, c64,
  f8_e4m3, f8_e5m2, f8_e8m0, f6_e2m3, f6_e3m2, f4,  // safetensors storage-only floats
  i64, i32, i16, i8, u64, u32, u16, u8, boolean,
  q4_0, q4_1, q5_0, q5_1, q8_0, q2_k, q3_k, q4_k, q5_k, q6_k, q8_k, iq4_nl, iq4_xs,  // ggml blocks
  unsupported,  // a ggml type RLX knows by name only (IQ*, TQ*, MXFP4 …)
};

// Canonical upper-case name as files spell it: "F32", "BF16", "F8_E4M3", "Q4_K", "BOOL".
const char* weight_type_name(WeightType t);
// Elements per block and bytes per block: 1 and the element size for plain types,
// e.g. 32 and 18 for Q4_0, 2 and 1 for F4 (two values a byte).
int64_t weight_type_block_elems(WeightType t);
int64_t weight_type_block_bytes(WeightType t);
// Bytes of `numel` elements; nullopt when numel is not a whole number of blocks or overflows.
std::optional<uint64_t> weight_type_bytes(WeightType t, uint64_t numel);
// The rlx dtype with the same bytes, when one exists (F32 → f32, U32 → none, Q4_K → none).
std::optional<DType> weight_type_dtype(WeightType t);
WeightType weight_type_of(DType t);  // throws for i4 (no file spelling)
bool weight_type_is_quantized(WeightType t);  // a ggml block type (Q4_0 … Q8_K, IQ4_NL, IQ4_XS)

// safetensors spelling ("F32", "F8_E4M3", "BOOL"); quantized types have none.
std::optional<WeightType> weight_type_from_safetensors(std::string_view name);
bool weight_type_in_safetensors(WeightType t);

// ggml type ids as GGUF stores them. from_ggml gives `unsupported` for a known id RLX cannot
// decode and nullopt for an id no ggml version ever defined.
std::optional<WeightType> weight_type_from_ggml(uint32_t id);
std::optional<uint32_t> weight_type_ggml_id(WeightType t);
const char* ggml_type_name(uint32_t id);  // "IQ2_XXS", "Q4_K"; nullptr when unknown

}  // namespace rlx::formats
