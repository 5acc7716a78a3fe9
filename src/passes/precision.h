// Precision policies: which ops compute in reduced precision.
//   f32   everything as written
//   bf16  matmuls (dot_general, attention's two products) take bf16 operands and accumulate
//         in f32; norms, softmax and elementwise math stay f32
//   f16   as bf16 with IEEE half operands (GPUs; on the CPU the matmuls rewrite to f32 math on
//         the rounded operands, which is exact but gains no speed)
//   amp   the same as bf16 for matmuls (master weights and reductions stay f32)
//   amp-f16  the same as f16 for matmuls; training with it scales the loss dynamically
//         (train::LossScaleConfig: f16 gradients below 6e-5 would otherwise flush to zero)
//   int8  dynamic int8 inference: products with constant f32 weights (linears) take int8
//         weights (per output channel, symmetric) and int8 activations (each row by its own
//         max|x|, quantized as it is read), summed in i32 (AVX512-VNNI through oneDNN), scaled
//         back to f32; everything else stays f32
//   int4  weight-only int4: those products keep their weights as ggml Q4_0 blocks (groups of
//         32, f16 scales; ops/weight_grid.h) in memory and multiply them with f32 activations
//         (dequant_matmul); everything else stays f32
#pragma once
#include <string>

#include "ir/graph.h"

namespace rlx::passes {

enum class Precision { f32, bf16, f16, amp, amp_f16, int8, int4 };
// Throws rlx::Error naming the choices.
Precision precision_from_name(const std::string& name);
const char* precision_name(Precision p);

// Returns the graph with the policy applied (casts inserted; their constant operands fold).
ir::Graph apply_precision(const ir::Graph& g, Precision p);

}  // namespace rlx::passes
