#include "backends/vulkan/hlsl.h"

#include <climits>
#include <cstdlib>
#include <map>
#include <set>

#include "backends/vulkan/glsl_tokens.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::backends::vulkan {

namespace {

// GLSL's type names in HLSL; the 64-bit integers are the 32-bit class's int and uint (the
// unsigned one holds the signed one's bits, as in rlx_ipow), the narrow integers (stored packed
// in uint words) compute as int and uint
const std::map<std::string, std::string>& hlsl_types() {
  static const std::map<std::string, std::string> m = {
      {"float", "float"},   {"int", "int"},        {"uint", "uint"},     {"bool", "bool"},     {"int64_t", "int"},   {"uint64_t", "uint"},
      {"int8_t", "int"},    {"uint8_t", "uint"},   {"int16_t", "int"},   {"uint16_t", "uint"}, {"vec2", "float2"},   {"vec3", "float3"},
      {"vec4", "float4"},   {"uvec2", "uint2"},    {"uvec3", "uint3"},   {"uvec4", "uint4"},   {"ivec2", "int2"},    {"ivec3", "int3"},
      {"ivec4", "int4"},
  };
  return m;
}

const std::map<std::string, std::string>& hlsl_builtins() {
  static const std::map<std::string, std::string> m = {
      {"floatBitsToUint", "asuint"}, {"uintBitsToFloat", "asfloat"}, {"intBitsToFloat", "asfloat"}, {"floatBitsToInt", "asint"},
      {"roundEven", "rlx_round_even"}, {"inversesqrt", "rsqrt"},     {"mod", "rlx_mod"},           {"mix", "lerp"},
      {"fract", "frac"},             {"unpackHalf2x16", "rlx_unpack_half2"}, {"main", "rlx_main"},
  };
  return m;
}

const std::map<std::string, std::string>& hlsl_atomics() {
  static const std::map<std::string, std::string> m = {
      {"atomicAdd", "InterlockedAdd"}, {"atomicMax", "InterlockedMax"}, {"atomicMin", "InterlockedMin"}, {"atomicAnd", "InterlockedAnd"},
      {"atomicOr", "InterlockedOr"},   {"atomicXor", "InterlockedXor"}, {"atomicExchange", "InterlockedExchange"},
  };
  return m;
}

// GLSL's invocation built-ins: static globals the entry point sets (HLSL passes them to main only)
const std::vector<std::pair<std::string, std::string>>& hlsl_ids() {
  static const std::vector<std::pair<std::string, std::string>> v = {
      {"gl_LocalInvocationID", "uint3 SV_GroupThreadID"}, {"gl_WorkGroupID", "uint3 SV_GroupID"},
      {"gl_GlobalInvocationID", "uint3 SV_DispatchThreadID"}, {"gl_LocalInvocationIndex", "uint SV_GroupIndex"},
  };
  return v;
}

const char* kPrologue = R"(// GLSL's mod (x − y·floor(x/y)), roundEven and unpackHalf2x16, which HLSL spells otherwise or not at all
float rlx_mod(float x, float y) { return x - y * floor(x / y); }
float rlx_round_even(float x) {
  float r = trunc(x), d = x - r;  // exact
  if (abs(d) > 0.5 || (abs(d) == 0.5 && fmod(r, 2.0) != 0.0)) r += float(sign(x));
  return r;
}
float2 rlx_unpack_half2(uint u) { return float2(f16tof32(u & 0xffffu), f16tof32(u >> 16)); }
)";

// The 32-bit integer class's overflow: codegen's glsl_int32 and rlx_fits32 (a float converted to
// i64) set rlx_ovf, stores of i64 check it and raise it — error word 0 becomes 2, word 1 the step
const char* kFits32 = R"(float rlx_fits32(float v) {
  if (!isnan(v) && !(v >= -2147483648.0 && v < 2147483648.0)) rlx_ovf = true;
  return v;
}
)";

bool is_type(const Tok& t) { return t.kind == Tok::ident && hlsl_types().count(t.text); }

class Rewriter {
 public:
  explicit Rewriter(std::vector<Tok> toks) : t_(std::move(toks)) {}

  std::string run() {
    int braces = 0, parens = 0;
    bool directive = false;
    std::string out;
    for (size_t i = 0; i < t_.size(); ++i) {
      const Tok& tk = t_[i];
      if (tk.kind == Tok::space) {
        if (tk.text.find('\n') != std::string::npos) directive = false;
        out += tk.text;
        continue;
      }
      if (tk.text == "#") directive = true;
      if (tk.kind == Tok::punct) {
        braces += tk.text == "{" ? 1 : tk.text == "}" ? -1 : 0;
        parens += tk.text == "(" ? 1 : tk.text == ")" ? -1 : 0;
        out += tk.text;
        continue;
      }
      if (tk.kind == Tok::number) {
        out += number(tk.text);
        continue;
      }
      const std::string& w = tk.text;
      const size_t nx = next(i), pv = prev(i);
      if (pv < t_.size() && is(pv, ".")) {  // a member (.x, .o_w) keeps its name
        out += w;
        continue;
      }
      if (w.rfind("subgroup", 0) == 0 || w.rfind("coopMat", 0) == 0 || w == "fcoopmatNV")
        throw Error(ErrorKind::unsupported, cat("directx: the kernel uses GLSL's ", w, ", which its HLSL flavour has no spelling for"));
      const bool statement_start = pv == t_.size() || is(pv, ";") || is(pv, "}") || is(pv, "{");
      if (braces == 0 && parens == 0 && statement_start && !directive) {
        if (w == "shared") {
          out += "groupshared";
          continue;
        }
        if (w == "const") {
          out += "static const";
          continue;
        }
        // a private global (T name = init; or T name;): static, or HLSL makes it a uniform
        if (is_type(tk) && nx < t_.size() && t_[nx].kind == Tok::ident && (is(next(nx), "=") || is(next(nx), ";"))) out += "static ";
      }
      // T[](a, b) and T[2](a, b) → {a, b}
      if (is_type(tk) && is(nx, "[")) {
        const size_t close = matching(nx);
        if (is(next(close), "(")) {
          const size_t open = next(close), end = matching(open);
          t_[end].text = "}";
          out += "{";
          ++braces;  // the "}" that closes it counts down
          i = open;
          continue;
        }
      }
      if (auto it = hlsl_types().find(w); it != hlsl_types().end()) {
        out += it->second;
        continue;
      }
      if (auto it = hlsl_atomics().find(w); it != hlsl_atomics().end() && is(nx, "(")) {
        // only as a statement: HLSL's Interlocked* return the old value through an out argument
        const bool statement = statement_start || is(pv, ")") || is(pv, "else");
        if (!statement || !is(next(matching(nx)), ";"))
          throw Error(ErrorKind::unsupported, cat("directx: ", w, " whose value is used (HLSL's Interlocked", w.substr(6), " returns it through an argument)"));
        out += it->second;
        continue;
      }
      if (w == "atomicCompSwap") throw Error(ErrorKind::unsupported, "directx: atomicCompSwap in a kernel body (the skeleton spells the one it needs)");
      if (w == "barrier" && is(nx, "(") && is(next(nx), ")")) {
        out += "AllMemoryBarrierWithGroupSync()";
        i = next(nx);
        continue;
      }
      if ((w == "memoryBarrierShared" || w == "memoryBarrierBuffer" || w == "memoryBarrier" || w == "groupMemoryBarrier") && is(nx, "(") && is(next(nx), ")")) {
        out += w == "memoryBarrierShared" ? "GroupMemoryBarrier()" : "AllMemoryBarrier()";
        i = next(nx);
        continue;
      }
      if (w == "gl_NumWorkGroups") {
        out += "uint3(p.rlx_ng_x, p.rlx_ng_y, p.rlx_ng_z)";
        continue;
      }
      if (w.rfind("gl_", 0) == 0) {  // the invocation ids: static globals the entry point sets
        out += "rlx_" + w;
        continue;
      }
      if (auto it = hlsl_builtins().find(w); it != hlsl_builtins().end()) {
        out += it->second;
        continue;
      }
      out += w;
    }
    return out;
  }

 private:
  // Integer literals of the 64-bit class become the 32-bit class's: 5l → 5, 1ul → 1u; a
  // constant the 32-bit class cannot hold is refused (it would change the kernel's meaning).
  static std::string number(const std::string& n) {
    if (is_float_literal(n)) return n;
    std::string digits = n;
    while (!digits.empty() && (digits.back() == 'l' || digits.back() == 'L' || digits.back() == 'u' || digits.back() == 'U')) digits.pop_back();
    const std::string suffix = n.substr(digits.size());
    const bool is_unsigned = suffix.find_first_of("uU") != std::string::npos, is_long = suffix.find_first_of("lL") != std::string::npos;
    if (!is_long) return n;
    const unsigned long long v = std::strtoull(digits.c_str(), nullptr, 0);
    if (is_unsigned && v > 0xffffffffull) throw Error(ErrorKind::unsupported, cat("directx: the 64-bit constant ", n, " in a kernel of the 32-bit integer class"));
    if (is_unsigned) return digits + "u";
    if (v > 0x7fffffffull) throw Error(ErrorKind::unsupported, cat("directx: the 64-bit constant ", n, " in a kernel of the 32-bit integer class"));
    return digits;
  }

  size_t next(size_t i) const { return walk_.next(i); }
  size_t prev(size_t i) const { return walk_.prev(i); }
  bool is(size_t i, const char* s) const { return walk_.is(i, s); }
  size_t matching(size_t open) const { return walk_.matching(open); }

  std::vector<Tok> t_;
  TokenWalk walk_{t_, "directx"};
};

std::string element_type(const std::string& glsl_type) {
  auto it = hlsl_types().find(glsl_type);
  return it == hlsl_types().end() ? glsl_type : it->second;
}

}  // namespace

void check_fits_int32_class(const Tensor& x, const char* device, const std::string& what) {
  if (x.dtype() != DType::i64) return;
  const Tensor c = x.contiguous();
  const auto* v = static_cast<const int64_t*>(c.data());
  for (size_t k = 0; k < static_cast<size_t>(c.numel()); ++k)
    if (v[k] < INT32_MIN || v[k] > INT32_MAX)
      throw Error(ErrorKind::invalid_argument, cat(device, ": ", what, " holds ", v[k], " at element ", k,
                                                   ", outside the 32-bit integers this device's kernels compute with (no 64-bit int in its shading language)"));
}

std::string hlsl_source(const ClKernel& k, const std::string& glsl) {
  const std::string body = Rewriter(tokenize(glsl)).run();
  std::string s = kPrologue;
  // every kernel can raise an error: its error words are the last binding when its family did
  // not ask for them (the executable binds them the same way)
  std::vector<ClBinding> bindings = k.bindings;
  if (!k.error_words) bindings.push_back({"rlx_errors", "uint", false});
  const std::string errors = bindings.back().name;
  for (size_t i = 0; i < bindings.size(); ++i) {
    const ClBinding& b = bindings[i];
    s += cat("[[vk::binding(", i, ", 0)]] ", b.readonly ? "" : "RW", "StructuredBuffer<", element_type(b.type), "> ", b.name, ";\n");
  }
  s += "struct rlx_words {";
  for (const auto& w : k.words) s += cat(" uint ", w, ";");
  s += " uint rlx_ng_x; uint rlx_ng_y; uint rlx_ng_z; uint rlx_step; };\n[[vk::push_constant]] ConstantBuffer<rlx_words> p;\n";
  for (const auto& [id, sem] : hlsl_ids()) s += cat("static ", sem.substr(0, sem.find(' ')), " rlx_", id, ";\n");
  s += cat("static const uint3 rlx_gl_WorkGroupSize = uint3(", k.local[0], "u, ", k.local[1], "u, ", k.local[2], "u);\n");
  s += cat("static bool rlx_ovf = false;\nvoid rlx_raise_overflow() {\n  uint before;\n  InterlockedCompareExchange(", errors, "[0], 0u, 2u, before);\n  if (before == 0u) ",
           errors, "[1] = p.rlx_step;\n}\n", kFits32);
  s += body;
  s += cat("\n[numthreads(", k.local[0], ", ", k.local[1], ", ", k.local[2], ")]\nvoid main(");
  std::vector<std::string> params, sets;
  for (const auto& [id, sem] : hlsl_ids()) {
    const std::string type = sem.substr(0, sem.find(' ')), semantic = sem.substr(sem.find(' ') + 1);
    params.push_back(cat(type, " ", id.substr(3), "_ : ", semantic));
    sets.push_back(cat("  rlx_", id, " = ", id.substr(3), "_;\n"));
  }
  s += join(params, ", ") + ") {\n";
  for (const auto& x : sets) s += x;
  return s + "  rlx_main();\n}\n";
}

}  // namespace rlx::backends::vulkan
