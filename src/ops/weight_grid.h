// A weight's integer grid for weight-only quantization and quantization-aware training: each
// output channel's flattened row (w[N, …] → [N, K]) cut into groups of `group` consecutive values
// (the last zero-padded), each group on a symmetric grid of `bits` — scale max|·| / (2^(bits−1) − 1)
// rounded to f16 (as ggml's blocks store it), codes round(w / scale) clamped to
// [−2^(bits−1), 2^(bits−1) − 1]. The graph form (fake_quant, for training) and the C++ form (codes
// and scales, for export) are the same f32 arithmetic, so a model trained on the grid is the model
// exported from it. With the f16 scale a grid whose groups are whole 32-value blocks (or one per
// channel) is exactly ggml's Q4_0 (4 bits) or Q8_0 (8 bits): exported that way, the weights stay
// packed in the model and run through dequant_matmul's kernels (packed_grid_blocks).
// An asymmetric grid (4 bits) spans each group's min to its max instead: scale (max − min) / 15
// and min both rounded to f16, codes round((w − min) / scale) in 0…15 — ggml's Q4_1. A partial
// last group counts its zero padding in its min and max.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ops/builder.h"
#include "rlx/tensor.h"

namespace rlx::ops {

struct WeightGrid {
  int bits = 4;
  int64_t group = 32;  // 0: one group per output channel (per-channel)
  bool asymmetric = false;  // codes 0…15 from each group's min to its max (4 bits only)
  // "int4", "int8", "int4/g64", "int8/g0", "int4/g32/asym"; throws rlx::Error naming the form
  static WeightGrid parse(const std::string& text);
  std::string str() const;
};

// w fake-quantized on the grid (straight-through/LSQ gradients through fake_quant).
ValueId fake_quant_weight(Builder& b, ValueId w, const WeightGrid& grid);

struct GridCodes {
  int64_t n = 0, k = 0, group = 0, groups = 0;
  std::vector<double> codes;   // [n, groups, group], integers of the grid
  std::vector<double> scales;  // [n, groups]
  std::vector<double> mins;    // [n, groups] for an asymmetric grid (w ≈ code·scale + min), else empty
};
GridCodes weight_grid_codes(const Tensor& w, const WeightGrid& grid);
// The weight back from its codes: dequantize_linear of constant i8 codes, reshaped to `shape`.
ValueId dequantized_weight(Builder& b, const GridCodes& c, const std::vector<int64_t>& shape);

// The codes as ggml blocks: Q4_0 (4 bits), Q4_1 (asymmetric) or Q8_0 (8 bits) rows of `padded_k` = k rounded up to
// 32 values (the padding codes 0), u8[n, row bytes]. Empty `bytes` when the grid's groups do not
// tile 32-value blocks (a group that is neither a multiple of 32 nor the whole row).
struct GridBlocks {
  std::string type;  // "q4_0", "q4_1" or "q8_0", as dequant_matmul's type attribute spells it
  int64_t padded_k = 0;
  Tensor bytes;
};
GridBlocks packed_grid_blocks(const GridCodes& c, int bits);
// x[..., k] · Wᵀ with W [n, k] as those blocks: x padded with zeros to padded_k (the padding
// codes multiply zeros), one dequant_matmul.
ValueId packed_grid_product(Builder& b, ValueId x, ValueId blocks, const GridBlocks& w, int64_t n);

}  // namespace rlx::ops
