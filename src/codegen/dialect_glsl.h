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

// GLSL for a language without signed 64-bit integers (HLSL through glslang, which spells the
// 64-bit class's int64_t as int): the integer class is 32-bit two's complement, and its
// wrapping add, subtract, multiply and power also set the invocation's `rlx_ovf` when a result
// leaves 32 bits — stores of i64 tensors check it, so an i64 value the class cannot hold is an
// error, never a silently wrapped number (stores of i32 and narrower wrap, as everywhere).
class GlslInt32Dialect : public GlslDialect {
 public:
  const char* name() const override { return "glsl-int32"; }
  std::string call(Fn f, ValueClass cls, const std::vector<std::string>& args) const override;
  // GlslDialect's helpers and the checked ones (rlx_cadd, rlx_csub, rlx_cmul, rlx_cipow); the
  // program declares `bool rlx_ovf` before them.
  std::string prelude() const override;
};

const Dialect& glsl_int32();

}  // namespace rlx::codegen
