// Precision policies: which ops compute in reduced precision.
//   f32   everything as written
//   bf16  matmuls (dot_general, attention's two products) take bf16 operands and accumulate
//         in f32; norms, softmax and elementwise math stay f32
//   amp   the same as bf16 for matmuls (master weights and reductions stay f32)
#pragma once
#include <string>

#include "ir/graph.h"

namespace rlx::passes {

enum class Precision { f32, bf16, amp };
// Throws rlx::Error naming the choices.
Precision precision_from_name(const std::string& name);
const char* precision_name(Precision p);

// Returns the graph with the policy applied (casts inserted; their constant operands fold).
ir::Graph apply_precision(const ir::Graph& g, Precision p);

}  // namespace rlx::passes
