// Weight-only quantization: a float inference graph whose weights (every bound tensor of rank
// ≥ 2: linear and conv weights) are stored on an integer grid (ops/weight_grid.h: int4 or int8
// codes with a scale per group); biases stay f32. Activations stay float — the model shrinks,
// its arithmetic does not change type. A linear's weight on a grid of whole 32-value blocks stays
// packed as ggml Q4_0/Q8_0 blocks — in the graph, in memory and in the products (dequant_matmul,
// the kernels GGUF models run on); other weights (convolutions, odd group sizes) are i8 codes
// dequantized in the graph.
#pragma once
#include <map>

#include "ir/graph.h"
#include "ops/weight_grid.h"
#include "rlx/tensor.h"

namespace rlx::quant {

struct WeightOnlyResult {
  ir::Graph graph;            // inputs: [input]; outputs: [output]
  int64_t weights = 0;        // how many weight tensors went on the grid
  int64_t packed_weights = 0; // of those, how many stay ggml blocks multiplied by dequant_matmul
  int64_t packed_bytes = 0;   // their stored bytes (blocks, or codes at `bits` per value plus f32 scales)
  int64_t float_bytes = 0;    // the same weights in f32
};

// Copies what `output` needs of `g`, `weights` binding some of its inputs; throws rlx::Error if
// the output needs an unbound input other than `input`.
WeightOnlyResult quantize_weights(const ir::Graph& g, const std::map<ir::ValueId, Tensor>& weights, ir::ValueId input, ir::ValueId output,
                                  const ops::WeightGrid& grid);

}  // namespace rlx::quant
