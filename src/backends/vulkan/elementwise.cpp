// Elementwise kernels: scalar.h's definition of the op printed by the GLSL dialect into a
// one-element-per-invocation schedule (workgroups of 256).
#include "backends/vulkan/kernels.h"
#include "codegen/dialect_glsl.h"
#include "codegen/index_map.h"
#include "codegen/scalar.h"
#include "util/strings.h"

namespace rlx::backends::vulkan {

bool has_elementwise_kernel(ir::Op op) {
  return codegen::is_elementwise(op) && op != ir::Op::cast && codegen::defines(codegen::ValueClass::floating, op);
}

bool claims_elementwise(ir::Op op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out) {
  if (!has_elementwise_kernel(op)) return false;
  if (out.size() != 1 || out[0].dtype != DType::f32 || !shape_is_static(out[0].shape)) return false;
  if (in.empty() || in.size() > 3) return false;
  const Shape& o = out[0].shape;
  for (const ir::Type& t : in) {
    if (t.dtype != DType::f32 || !shape_is_static(t.shape) || t.shape.size() > o.size()) return false;
    for (size_t d = 0; d < t.shape.size(); ++d) {  // aligned at the right: equal or 1
      const Dim& a = t.shape[t.shape.size() - 1 - d];
      if (a != Dim(1) && a != o[o.size() - 1 - d]) return false;
    }
  }
  return shape_numel(o).value() < (int64_t{1} << 31);
}

std::string elementwise_shader(ir::Op op, const std::vector<std::vector<int64_t>>& in_shapes, const std::vector<int64_t>& out_shape) {
  const int arity = codegen::arity(op);
  // each operand's strides over the output's dims, then the dims merged where all allow
  std::vector<int64_t> shape = out_shape;
  std::vector<std::vector<int64_t>> strides;
  for (const auto& s : in_shapes) strides.push_back(codegen::broadcast_strides(out_shape, s));
  std::vector<std::vector<int64_t>*> ptrs;
  for (auto& st : strides) ptrs.push_back(&st);
  codegen::collapse_dims(shape, ptrs);
  std::vector<std::string> operands;
  std::string buffers, loads, index;
  const bool contiguous_all = [&] {
    std::vector<int64_t> c = contiguous_strides(shape);
    for (const auto& st : strides)
      if (st != c) return false;
    return true;
  }();
  if (!contiguous_all) {  // the coordinate of each collapsed dim, last fastest
    index += "  uint r = i;\n";
    for (size_t d = shape.size(); d-- > 0;) {
      index += cat("  uint c", d, " = r % ", shape[d], "u; r /= ", shape[d], "u;\n");
    }
  }
  for (int i = 0; i < arity; ++i) {
    buffers += cat("layout(std430, binding = ", i, ") readonly buffer In", i, " { float x", i, "_[]; };\n");
    std::string at = "i";
    if (!contiguous_all) {
      at = "0u";
      for (size_t d = 0; d < shape.size(); ++d)
        if (strides[static_cast<size_t>(i)][d]) at += cat(" + c", d, " * ", strides[static_cast<size_t>(i)][d], "u");
    }
    loads += cat("  float x", i, " = x", i, "_[", at, "];\n");
    operands.push_back(cat("x", i));
  }
  return cat("#version 450\n#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require\n", "layout(local_size_x = 256) in;\n", buffers,
             "layout(std430, binding = ", arity, ") writeonly buffer Out { float y[]; };\n", "layout(push_constant) uniform P { uint n; } p;\n",
             codegen::glsl().prelude(), "void main() {\n  uint i = gl_GlobalInvocationID.x;\n  if (i >= p.n) return;\n", index, loads,
             "  y[i] = ", codegen::print_scalar(codegen::glsl(), codegen::ValueClass::floating, op, operands), ";\n}\n");
}

}  // namespace rlx::backends::vulkan
