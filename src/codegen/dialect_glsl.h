// GLSL 4.50 for Vulkan compute (glslc/shaderc to SPIR-V), and the base of the OpenGL device's
// shaders: f32 registers with GLSL's built-ins where they mean what scalar.h asks (roundEven
// for rint, isnan), helpers where they do not (GLSL has no erf, expm1 or log1p; its pow is
// undefined for negative bases and its % for negative operands), 64-bit wrapping integers
// through GL_EXT_shader_explicit_arithmetic_types_int64.
#pragma once
#include "codegen/printer.h"

namespace rlx::codegen {

class GlslDialect : public Dialect {
 public:
  const char* name() const override { return "glsl"; }
  std::string type(ValueClass cls) const override { return cls == ValueClass::floating ? "float" : "int64_t"; }
  std::string call(Fn f, ValueClass cls, const std::vector<std::string>& args) const override;
  std::string literal(double v, ValueClass cls) const override;
  std::string is_nan(const std::string& a) const override;
  // The helpers (rlx_erf, rlx_expm1, rlx_log1p, rlx_pow, rlx_fmod, rlx_rem, rlx_ipow); a shader
  // declares `#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require` before them.
  std::string prelude() const override;
};

const Dialect& glsl();

}  // namespace rlx::codegen
