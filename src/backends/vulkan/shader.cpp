#include "backends/vulkan/shader.h"

#include <cstring>
#include <limits>

#include "backends/vulkan/context.h"
#include "backends/vulkan/hlsl.h"
#include "backends/vulkan/target.h"
#include "codegen/dialect_glsl.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::backends::vulkan {

namespace {

// The stored type of a dtype in a storage buffer.
const char* stored_type(DType t) {
  switch (t) {
    case DType::f32: return "float";
    case DType::f16:
    case DType::bf16: return "uint16_t";
    case DType::i8: return "int8_t";
    case DType::u8:
    case DType::boolean: return "uint8_t";
    case DType::i16: return "int16_t";
    case DType::i32: return "int";
    case DType::i64: return "int64_t";
    default: throw Error(ErrorKind::internal, cat("vulkan: no storage for ", dtype_name(t)));
  }
}

std::pair<int64_t, int64_t> int_range(DType t) {
  switch (t) {
    case DType::i8: return {-128, 127};
    case DType::u8: return {0, 255};
    case DType::i16: return {-32768, 32767};
    case DType::i32: return {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()};
    default: return {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
  }
}

std::string i64_literal(int64_t v) {
  // GLSL has no literal for INT64_MIN: spell it as −max − 1
  if (v == std::numeric_limits<int64_t>::min()) return "(-9223372036854775807l - 1l)";
  if (v == std::numeric_limits<int32_t>::min()) return "(-2147483647l - 1l)";  // a 32-bit class's too
  return cat(v, "l");
}

// Conversions every kernel may use: float ↔ f16/bf16 words with round to nearest even, and the
// saturating float → integer of cast (NaN → 0).
const char* kConversions = R"(uint rlx_f2h(float f) {
  uint x = floatBitsToUint(f), sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) return sign | (ax > 0x7f800000u ? 0x7e00u : 0x7c00u);
  if (ax >= 0x477ff000u) return sign | 0x7c00u;
  if (ax < 0x38800000u) return sign | uint(roundEven(uintBitsToFloat(ax) * 16777216.0));
  uint r = ax - 0x38000000u;
  return sign | ((r + 0x0fffu + ((r >> 13) & 1u)) >> 13);
}
float rlx_h2f(uint h) { return unpackHalf2x16(h).x; }
uint rlx_f2bf(float f) {
  uint u = floatBitsToUint(f);
  if (isnan(f)) return (u >> 16) | 0x40u;
  return (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
}
float rlx_bf2f(uint h) { return uintBitsToFloat(h << 16); }
// 1/√x for the norms, refined by a Newton step: drivers may compute 1.0 / sqrt(x) with an
// approximate reciprocal square root (NVIDIA's does)
float rlx_rsqrt(float x) {
  float r = 1.0 / sqrt(x);
  return r * (1.5 - 0.5 * x * r * r);
}
int64_t rlx_f2i(float v, int64_t lo, int64_t hi) {
  if (isnan(v)) return 0l;
  float t = trunc(v);
  if (t <= float(lo)) return lo;
  if (t >= float(hi)) return hi;
  return int64_t(t);
}
)";

}  // namespace

bool storable(DType t, const Features& f) {
  switch (t) {
    case DType::f32:
    case DType::i32: return f.int64;
    case DType::i64: return f.int64;
    case DType::f16:
    case DType::bf16:
    case DType::i16: return f.int64 && f.storage16 && f.int16;
    case DType::i8:
    case DType::u8:
    case DType::boolean: return f.int64 && f.storage8 && f.int8;
    default: return false;
  }
}

std::string round_to(DType d, const std::string& v) {
  switch (d) {
    case DType::f16: return cat("rlx_h2f(rlx_f2h(", v, "))");
    case DType::bf16: return cat("rlx_bf2f(rlx_f2bf(", v, "))");
    case DType::boolean: return cat("((", v, ") != 0.0 ? 1.0 : 0.0)");
    default: return v;
  }
}

std::string f32_bits(float v) {
  uint32_t u;
  std::memcpy(&u, &v, 4);
  return cat("uintBitsToFloat(", u, "u)");
}

bool is_float_class(DType t) { return t == DType::f32 || t == DType::f16 || t == DType::bf16 || t == DType::f64; }

void Shader::buffer(const std::string& name, DType t, Access a) {
  const size_t binding = offsets_.size();
  const std::string raw = name + "_", at = cat("p.o_", name, " + i");
  offsets_.push_back("o_" + name);
  // OpenGL and HLSL have no 8/16-bit storage: such tensors are packed into uint words, read by shifting
  // and written with two atomics on the element's own bits (neighbours may be written at once)
  const int bits = dtype_bits(t);
  const bool packed = (current_target().api == KernelApi::opengl || current_target().api == KernelApi::hlsl) && bits < 32;
  // i64 where the integer class is 32-bit: two words per element (low, then the high word, the
  // low word's sign — every value a kernel writes is a 32-bit class value, and the executable
  // checks the inputs and constants); a store of a result that left 32 bits raises an error
  const bool pairs = t == DType::i64 && current_target().features.int32_class;
  const std::string T = packed || pairs ? "uint" : stored_type(t);
  bindings_.push_back({raw, T, a == Access::read});
  if (pairs) {
    decls_ += cat("layout(std430, binding = ", binding, ") ", a == Access::read ? "readonly " : "", "buffer B_", name, " { uint ", raw, "[]; };\n");
    if (a != Access::write) helpers_ += cat("int64_t ", name, "_ld(uint i) { return int64_t(int(", raw, "[2u * (", at, ")])); }\n");
    if (a != Access::read)
      helpers_ += cat("void ", name, "_st(uint i, int64_t v) {\n  if (rlx_ovf) rlx_raise_overflow();\n  ", raw, "[2u * (", at, ")] = uint(v); ", raw, "[2u * (", at,
                      ") + 1u] = v < 0l ? 0xffffffffu : 0u;\n}\n");
  } else if (packed) {
    const std::string per = bits == 8 ? "4u" : "2u", mask = bits == 8 ? "0xffu" : "0xffffu";
    decls_ += cat("layout(std430, binding = ", binding, ") ", a == Access::read ? "readonly " : "", "buffer B_", name, " { uint ", raw, "[]; };\n");
    const std::string e = cat("uint e = ", at, ", s = (e % ", per, ") * ", bits, "u;");
    if (a != Access::write) helpers_ += cat("uint ", name, "_ld(uint i) { ", e, " return (", raw, "[e / ", per, "] >> s) & ", mask, "; }\n");
    if (a != Access::read)
      helpers_ += cat("void ", name, "_st(uint i, uint v) { ", e, " atomicAnd(", raw, "[e / ", per, "], ~(", mask, " << s)); atomicOr(", raw, "[e / ", per, "], (v & ",
                      mask, ") << s); }\n");
  } else {
    decls_ += cat("layout(std430, binding = ", binding, ") ", a == Access::read ? "readonly " : a == Access::write ? "writeonly " : "", "buffer B_", name, " { ", T, " ",
                  raw, "[]; };\n");
    if (a != Access::write) helpers_ += cat(T, " ", name, "_ld(uint i) { return ", raw, "[", at, "]; }\n");
    if (a != Access::read) helpers_ += cat("void ", name, "_st(uint i, ", T, " v) { ", raw, "[", at, "] = v; }\n");
  }
  // the stored bits of a packed signed value, sign-extended (by xor and subtract: Mesa 22.3
  // extends int → int64_t with zeros, see i32 below)
  auto sext = [&](const std::string& v) {
    const std::string sign = cat(int64_t{1} << (bits - 1), "l");
    return cat("((int64_t(", v, ") ^ ", sign, ") - ", sign, ")");
  };
  if (a != Access::write) {
    std::string f, i;
    const std::string ld = cat(name, "_ld(i)");
    switch (t) {
      case DType::f32: f = ld; break;
      case DType::f16: f = cat("rlx_h2f(uint(", ld, "))"); break;
      case DType::bf16: f = cat("rlx_bf2f(uint(", ld, "))"); break;
      case DType::i8:
      case DType::i16: f = packed ? cat("float(", sext(ld), ")") : cat("float(", ld, ")"); break;
      default: f = cat("float(", ld, ")");
    }
    const DType cls = current_target().features.int32_class ? DType::i32 : DType::i64;  // the integer class's range
    if (is_float_class(t)) i = cat("rlx_f2i(", name, "_f(i), ", i64_literal(int_range(cls).first), ", ", i64_literal(int_range(cls).second), ")");
    else if (t == DType::i32 && cls == DType::i32) i = cat("int64_t(", ld, ")");
    else if (t == DType::i32)  // sign-extended by hand: Mesa's lavapipe (22.3) extends int → int64_t with zeros
      i = cat("(int64_t(uint(", ld, ")) ^ 0x80000000l) - 0x80000000l");
    else if (packed && (t == DType::i8 || t == DType::i16)) i = cat("int64_t(", sext(ld), ")");
    else i = cat("int64_t(", ld, ")");
    helpers_ += cat("float ", name, "_f(uint i) { return ", f, "; }\n", "int64_t ", name, "_i(uint i) { return ", i, "; }\n");
  }
  if (a != Access::read) {
    std::string wf, wi;
    const std::string st = packed ? "uint" : stored_type(t);
    switch (t) {
      case DType::f32: wf = "v"; break;
      case DType::f16: wf = cat(st, "(rlx_f2h(v))"); break;
      case DType::bf16: wf = cat(st, "(rlx_f2bf(v))"); break;
      case DType::boolean: wf = packed ? "(v != 0.0 ? 1u : 0u)" : "uint8_t(v != 0.0 ? 1 : 0)"; break;
      default: {
        auto [lo, hi] = int_range(pairs ? DType::i32 : t);
        if (pairs) {  // beyond 32 bits is an error, not a saturated value
          wf = cat("rlx_f2i(rlx_fits32(v), ", i64_literal(lo), ", ", i64_literal(hi), ")");
          break;
        }
        wf = packed ? cat("uint(int(rlx_f2i(v, ", i64_literal(lo), ", ", i64_literal(hi), ")))") : cat(st, "(rlx_f2i(v, ", i64_literal(lo), ", ", i64_literal(hi), "))");
      }
    }
    if (is_float_class(t)) wi = "";  // through the float store
    else if (t == DType::boolean) wi = packed ? "(v != 0l ? 1u : 0u)" : "uint8_t(v != 0l ? 1 : 0)";
    else wi = packed ? "uint(v)" : cat(st, "(v)");
    helpers_ += cat("void ", name, "_wf(uint i, float v) { ", name, "_st(i, ", wf, "); }\n");
    helpers_ += wi.empty() ? cat("void ", name, "_wi(uint i, int64_t v) { ", name, "_wf(i, float(v)); }\n")
                           : cat("void ", name, "_wi(uint i, int64_t v) { ", name, "_st(i, ", wi, "); }\n");
  }
}

void Shader::raw_buffer(const std::string& name, const std::string& glsl_type, Access a) {
  decls_ += cat("layout(std430, binding = ", offsets_.size(), ") ", a == Access::read ? "readonly " : a == Access::write ? "writeonly " : "", "buffer B_", name, " { ", glsl_type, " ", name, "_[]; };\n");
  bindings_.push_back({name + "_", glsl_type, a == Access::read});
  offsets_.push_back("o_" + name);
}

void Shader::error_buffer() {
  error_ = true;
  words_.push_back("step");
}

void Shader::push(const std::string& name) { words_.push_back(name); }

uint32_t pushed_bytes(size_t words) { return 4 * static_cast<uint32_t>(words + (current_target().api == KernelApi::hlsl ? 4 : 0)); }

const codegen::Dialect& kernel_dialect() { return current_target().features.int32_class ? codegen::glsl_int32() : codegen::glsl(); }

uint32_t Shader::push_bytes() const { return pushed_bytes(offsets_.size() + words_.size()); }

void Shader::local_size(uint32_t x, uint32_t y, uint32_t z) { lx_ = x, ly_ = y, lz_ = z; }

void Shader::extension(const std::string& name) { extensions_.push_back(name); }

std::string Shader::source(const std::string& body) const {
  const bool gl = current_target().api == KernelApi::opengl;
  const KernelApi api = current_target().api;
  if (api == KernelApi::opencl || api == KernelApi::metal || api == KernelApi::hip || api == KernelApi::hlsl) return c_like_source(body);
  // OpenGL's barrier() orders execution only: shared memory needs memoryBarrierShared() too
  // (SPIR-V for Vulkan gives barrier() workgroup-memory semantics)
  std::string s = gl ? "#version 450\n"
                       "#extension GL_ARB_gpu_shader_int64 : require\n"
                     : "#version 450\n"
                       "#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require\n"
                       "#extension GL_EXT_shader_explicit_arithmetic_types_int16 : enable\n"
                       "#extension GL_EXT_shader_explicit_arithmetic_types_int8 : enable\n"
                       "#extension GL_EXT_shader_16bit_storage : enable\n"
                       "#extension GL_EXT_shader_8bit_storage : enable\n";
  for (const auto& e : extensions_) s += cat("#extension ", e, " : require\n");
  if (gl) s += "void rlx_barrier() { memoryBarrierShared(); barrier(); }\n#define barrier() rlx_barrier()\n";
  s += cat("layout(local_size_x = ", lx_, ", local_size_y = ", ly_, ", local_size_z = ", lz_, ") in;\n");
  s += decls_;
  if (error_) s += cat("layout(std430, binding = ", offsets_.size(), ") buffer B_error { uint e_[]; };\n");
  if (!offsets_.empty() || !words_.empty()) {
    // OpenGL has no push constants: the same words in a uniform block (std140 packs uints
    // like push constants, 4 bytes each)
    s += gl ? "layout(std140, binding = 0) uniform P {" : "layout(push_constant) uniform P {";
    for (const auto& o : offsets_) s += cat(" uint ", o, ";");
    for (const auto& w : words_) s += cat(" uint ", w, ";");
    s += " } p;\n";
  }
  return s + functions() + body;
}

std::string Shader::functions() const {
  std::string s = kConversions;
  // the flat invocation index over a grid folded into x and y (x is limited to 65535 groups)
  s += "uint rlx_flat() { return (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x; }\n";
  s += kernel_dialect().prelude();
  s += helpers_;
  if (error_ && current_target().api == KernelApi::hlsl)  // Interlocked* return through an argument; the class is 32-bit
    s += "void rlx_index_error(int v, int n) {\n"
         "  uint before;\n  InterlockedCompareExchange(e_[0], 0u, 1u, before);\n"
         "  if (before == 0u) {\n"
         "    e_[1] = p.step; e_[2] = uint(v); e_[3] = v < 0 ? 0xffffffffu : 0u; e_[4] = uint(n); e_[5] = n < 0 ? 0xffffffffu : 0u;\n"
         "  }\n}\n";
  else if (error_)
    s += "void rlx_index_error(int64_t v, int64_t n) {\n"
         "  if (atomicCompSwap(e_[0], 0u, 1u) == 0u) {\n"
         "    e_[1] = p.step; e_[2] = uint(v); e_[3] = uint(v >> 32); e_[4] = uint(n); e_[5] = uint(n >> 32);\n"
         "  }\n}\n";
  return s;
}

std::string Shader::c_like_source(const std::string& body) const {
  const KernelApi api = current_target().api;
  const char* device = api == KernelApi::metal ? "metal" : api == KernelApi::hip ? "rocm" : api == KernelApi::hlsl ? "directx" : "opencl";
  const char* language = api == KernelApi::metal ? "MSL" : api == KernelApi::hip ? "HIP" : api == KernelApi::hlsl ? "HLSL" : "OpenCL C";
  if (!extensions_.empty()) throw Error(ErrorKind::unsupported, cat(device, ": the kernel needs ", extensions_.front(), ", which ", language, " has no spelling for here"));
  ClKernel k;
  k.bindings = bindings_;
  if (error_) k.bindings.push_back({"e_", "uint", false});
  k.error_words = error_;
  k.words = offsets_;
  k.words.insert(k.words.end(), words_.begin(), words_.end());
  k.local = {lx_, ly_, lz_};
  if (api == KernelApi::metal) return metal_source(k, functions() + body);
  if (api == KernelApi::hlsl) return hlsl_source(k, functions() + body);
  return api == KernelApi::hip ? hip_source(k, functions() + body) : opencl_c(k, functions() + body);
}

}  // namespace rlx::backends::vulkan
