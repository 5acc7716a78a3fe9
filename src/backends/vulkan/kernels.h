// The vulkan device's kernels: which nodes it claims and the GLSL it prints for them (the codegen
// layer's dialect plus this device's schedules), and the executable that runs an LIR plan.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "runtime/backend.h"

namespace rlx::backends::vulkan {

// Whether the op has an elementwise kernel at all (the float class defines it; not cast).
bool has_elementwise_kernel(ir::Op op);
// Elementwise ops of the float class over f32 operands that broadcast to the result (numpy's
// rule), static shapes (other dtypes and the other op families come next).
bool claims_elementwise(ir::Op op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out);
// The compute shader of such a node: one invocation per element, `n` as a push constant, each
// operand addressed through its broadcast strides over the collapsed iteration space (baked in
// as constants: a shader per op and shapes, compiled once and cached).
std::string elementwise_shader(ir::Op op, const std::vector<std::vector<int64_t>>& in_shapes, const std::vector<int64_t>& out_shape);

std::unique_ptr<runtime::Executable> make_executable(const ir::Graph& lir);

}  // namespace rlx::backends::vulkan
