// The skeleton every vulkan kernel is printed into: its storage buffers (one per operand, any
// stored dtype), the push constants (each operand's element offset, then the kernel's own words)
// and typed access helpers, so a kernel body reads and writes values in the two compute classes
// of scalar.h without knowing how each dtype is stored:
//   float  x_f(uint i)   int64_t x_i(uint i)            (an operand declared readable)
//   void   x_wf(uint i, float v)   void x_wi(uint i, int64_t v)   (declared writable)
// Stored as: f32 float, f16/bf16 16-bit words converted by hand (round to nearest even, as the
// reference does — GLSL leaves the rounding of its conversions to the driver), i8/u8/bool/i16/
// i32/i64 as themselves. Writing a float into an integer saturates (cast's rule), an integer into
// a narrower integer wraps, anything into a bool stores v ≠ 0.
#pragma once
#include "codegen/printer.h"
#include <cstdint>
#include <string>
#include <vector>

#include "backends/vulkan/c_like.h"
#include "rlx/dtype.h"

namespace rlx::backends::vulkan {

struct Features;

// Whether tensors of `t` can be kernel operands on a device with `f`.
bool storable(DType t, const Features& f);

// The push-constant bytes of a kernel of `words` words for the current target (HLSL's kernels
// take the dispatch's three group counts and its step too).
uint32_t pushed_bytes(size_t words);

// The dialect integer-class arithmetic is printed in for the current target: GLSL's 64-bit
// wrapping class, or the checked 32-bit one (codegen/dialect_glsl.h).
const codegen::Dialect& kernel_dialect();

enum class Access : uint8_t { read, write, read_write };

class Shader {
 public:
  // Declares the next binding.
  void buffer(const std::string& name, DType t, Access a);
  // A binding read as raw `glsl_type` elements (uvec4 for 16-byte loads of packed weights):
  // name_[] only, its offset pushed in units of `elem_bytes` (Operand::elem_bytes).
  void raw_buffer(const std::string& name, const std::string& glsl_type, Access a = Access::read);
  // The index-error word (binding after the operands): kernels that read indices report the
  // first out-of-range one through rlx_index_error(value, bound).
  void error_buffer();
  // A uint push constant after the offsets, read as p.<name>.
  void push(const std::string& name);
  void local_size(uint32_t x, uint32_t y = 1, uint32_t z = 1);
  // Extensions the body needs beyond the skeleton's ("GL_KHR_shader_subgroup_arithmetic").
  void extension(const std::string& name);
  // The whole GLSL source around `body` (functions, shared arrays and main).
  std::string source(const std::string& body) const;
  // HLSL's kernels also take the dispatch's group counts and step (four words the executable appends)
  uint32_t push_bytes() const;
  size_t buffers() const { return offsets_.size() + (error_ ? 1 : 0); }

 private:
  std::string functions() const;  // the conversions, dialect helpers and accessors, as GLSL
  std::string c_like_source(const std::string& body) const;  // OpenCL C or MSL (c_like.h)
  std::string decls_, helpers_;
  std::vector<std::string> offsets_, words_, extensions_;
  std::vector<ClBinding> bindings_;  // what the C-like flavours take as arguments
  uint32_t lx_ = 256, ly_ = 1, lz_ = 1;
  bool error_ = false;
};

// Whether a dtype computes in the float class (f32/f16/bf16/f64), else the integer class.
bool is_float_class(DType t);

// A float expression as a value of `d` holds it: rounded to nearest even for f16/bf16, 0/1 for
// bool, unchanged otherwise (the rounding an unfused node's store applies).
std::string round_to(DType d, const std::string& v);
// An f32 constant spelled by its bits (exact for every value, NaN and ±inf included).
std::string f32_bits(float v);

}  // namespace rlx::backends::vulkan
