// Elementwise kernels: scalar.h's definition of the op printed by the GLSL dialect into a
// one-element-per-invocation schedule (workgroups of 256).
#include "backends/vulkan/kernels.h"
#include "codegen/dialect_glsl.h"
#include "codegen/scalar.h"
#include "util/strings.h"

namespace rlx::backends::vulkan {

bool claims_elementwise(ir::Op op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out) {
  if (!codegen::is_elementwise(op) || op == ir::Op::cast || !codegen::defines(codegen::ValueClass::floating, op)) return false;
  if (out.size() != 1 || out[0].dtype != DType::f32 || !shape_is_static(out[0].shape)) return false;
  if (in.empty() || in.size() > 3) return false;
  for (const ir::Type& t : in)
    if (t.dtype != DType::f32 || t.shape != out[0].shape) return false;
  return true;
}

std::string elementwise_shader(ir::Op op) {
  const int arity = codegen::arity(op);
  std::vector<std::string> operands;
  std::string buffers, loads;
  for (int i = 0; i < arity; ++i) {
    buffers += cat("layout(std430, binding = ", i, ") readonly buffer In", i, " { float x", i, "_[]; };\n");
    loads += cat("  float x", i, " = x", i, "_[i];\n");
    operands.push_back(cat("x", i));
  }
  return cat("#version 450\n#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require\n", "layout(local_size_x = 256) in;\n", buffers,
             "layout(std430, binding = ", arity, ") writeonly buffer Out { float y[]; };\n", "layout(push_constant) uniform P { uint n; } p;\n",
             codegen::glsl().prelude(), "void main() {\n  uint i = gl_GlobalInvocationID.x;\n  if (i >= p.n) return;\n", loads,
             "  y[i] = ", codegen::print_scalar(codegen::glsl(), codegen::ValueClass::floating, op, operands), ";\n}\n");
}

}  // namespace rlx::backends::vulkan
