// Sample nodes for every op of the op table: several dtypes, odd shapes, broadcasting, and
// inputs valid for the op (indices in range, positive values for log …). Shared by the IR
// round-trip test, the decomposition checks and test_backend_ops.
#pragma once
#include <random>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "rlx/tensor.h"

namespace rlx::testing {

struct OpCase {
  std::string name;  // "add f32[3,5]+f32[5]"
  ir::Op op;
  DType dtype;                 // the case's main dtype
  DType tolerance_dtype;       // whose tolerance judges the outputs (narrower when compute=bf16)
  ir::Graph graph;             // inputs → one node → outputs
  std::vector<Tensor> inputs;  // random inputs (some non-contiguous views)
};

// Every case of one op; ops whose semantics depend on the device (none today) are excluded.
std::vector<OpCase> op_cases(ir::Op op, uint32_t seed);

// Elementwise comparison with per-dtype tolerances. Returns "" when equal enough, else a
// description of the worst element.
std::string compare_tensors(const Tensor& expected, const Tensor& got, DType compute_dtype);

}  // namespace rlx::testing
