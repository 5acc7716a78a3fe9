// ggml's block formats: sizes and decoders, bit for bit as ggml-common.h / ggml-quants.c define
// them. One definition shared by the weight-file readers (src/formats) and the kernels
// (src/backends), so a GGUF tensor decodes the same wherever it is read.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

namespace rlx::quant {

// The packed weight types kernels consume: ggml's block types plus f16/bf16 (blocks of one
// element), in the order of the IR's `type` enum (dequantize, dequant_matmul).
enum class BlockType : uint8_t { q4_0, q4_1, q5_0, q5_1, q8_0, q2_k, q3_k, q4_k, q5_k, q6_k, q8_k, f16, bf16, iq4_nl, iq4_xs };
constexpr int kNumBlockTypes = 15;

const char* block_type_name(BlockType t);  // "q4_k", as the IR spells it
std::optional<BlockType> block_type_from_name(std::string_view name);
int64_t block_elems(BlockType t);  // 32 for q4_0 … q8_0, 256 for the K types, 1 for f16/bf16
int64_t block_bytes(BlockType t);  // e.g. 18 for q4_0, 144 for q4_k
// Bytes of one row of `k` elements; nullopt when k is not a whole number of blocks.
std::optional<int64_t> row_bytes(BlockType t, int64_t k);

// Decodes `nblocks` consecutive blocks at `src` into nblocks × block_elems(t) floats.
void decode_blocks(BlockType t, const uint8_t* src, int64_t nblocks, float* dst);

}  // namespace rlx::quant
