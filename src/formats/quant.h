// Unpacking and packing of weight types. Dequantization follows the ggml block layouts
// (ggml-common.h / ggml-quants.c) bit for bit; quantization is RLX's own (round-to-nearest
// with a least-squares refit), so its bytes differ from llama.cpp's but decode the same way.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "formats/tensor_view.h"
#include "rlx/tensor.h"
#include "util/quant_blocks.h"

namespace rlx::formats {

// The packed type kernels consume for a file type (ggml blocks, F16, BF16); nullopt otherwise.
std::optional<quant::BlockType> block_type_of(WeightType type);

// Whether dequantize_row() can decode `type` (every float, integer and listed ggml type;
// not C64, the sub-byte F4/F6 storage types, or `unsupported`).
bool can_dequantize(WeightType type);
// Decodes `n` elements (a whole number of blocks) of `type` at `src` into `dst`.
void dequantize_row(WeightType type, const uint8_t* src, int64_t n, float* dst);
// f32 tensor with the view's shape. Throws "tensor T uses quant type X, which RLX does not
// support yet" for types it cannot decode.
Tensor dequantize(const TensorView& view);

// Types quantize() can produce: F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K.
bool can_quantize(WeightType type);
// Packs `n` f32 values (a whole number of blocks of `type`) into `type`'s bytes.
std::vector<uint8_t> quantize(WeightType type, const float* src, int64_t n);
// The same with each column's importance (`row` values, repeated for each row of `row` values:
// the mean square of the activation that multiplies it, an importance matrix's row): the
// fitted scales minimize the importance-weighted squared error. F32/F16/BF16/Q8_0 ignore it.
std::vector<uint8_t> quantize(WeightType type, const float* src, int64_t n, const float* importance, int64_t row);

// Single-value decoders of the 8-bit float storage types (OCP FP8 E4M3FN / E5M2, MX E8M0).
float f8_e4m3_to_f32(uint8_t v);
float f8_e5m2_to_f32(uint8_t v);
float f8_e8m0_to_f32(uint8_t v);

}  // namespace rlx::formats
