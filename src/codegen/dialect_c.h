// C-family dialects: C99 (host-compiled code, and the base of the Cortex-M generator) and CUDA C
// (the NVRTC kernels of the cuda device). They spell the primitives alike — expf, erff, rintf
// on f32 registers, wrapping integers through unsigned long long — and differ in how helper
// functions are declared.
#pragma once
#include "codegen/printer.h"

namespace rlx::codegen {

class CDialect : public Dialect {
 public:
  CDialect(const char* name, const char* helper_qualifier) : name_(name), qualifier_(helper_qualifier) {}
  const char* name() const override { return name_; }
  std::string type(ValueClass cls) const override { return cls == ValueClass::floating ? "float" : "long long"; }
  std::string call(Fn f, ValueClass cls, const std::vector<std::string>& args) const override;
  // rlx_ipow, for integer powers.
  std::string prelude() const override;

 private:
  const char* name_;
  const char* qualifier_;
};

const Dialect& c99();     // "static inline" helpers
const Dialect& cuda_c();  // "__device__ __forceinline__" helpers

}  // namespace rlx::codegen
