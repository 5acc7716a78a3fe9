#include "backends/vulkan/c_like.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "backends/vulkan/glsl_tokens.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::backends::vulkan {

namespace {

// GLSL's vector and scalar type names in OpenCL C (the stdint names are typedefs of the prologue)
const std::map<std::string, std::string>& type_names() {
  static const std::map<std::string, std::string> m = {
      {"float", "float"}, {"int", "int"},       {"uint", "uint"},         {"bool", "bool"},         {"int64_t", "int64_t"},
      {"uint64_t", "uint64_t"}, {"int8_t", "int8_t"}, {"uint8_t", "uint8_t"}, {"int16_t", "int16_t"}, {"uint16_t", "uint16_t"},
      {"vec2", "float2"}, {"vec3", "float3"},   {"vec4", "float4"},       {"uvec2", "uint2"},       {"uvec3", "uint3"},
      {"uvec4", "uint4"}, {"ivec2", "int2"},    {"ivec3", "int3"},        {"ivec4", "int4"},
  };
  return m;
}

// Built-ins spelled differently (GLSL's abs is applied to floats only: the integer class prints
// its own |x|, scalar.h)
const std::map<std::string, std::string>& metal_builtin_names() {
  static const std::map<std::string, std::string> m = {
      {"floatBitsToUint", "as_type<uint>"}, {"uintBitsToFloat", "as_type<float>"}, {"intBitsToFloat", "as_type<float>"}, {"floatBitsToInt", "as_type<int>"},
      {"roundEven", "rint"},                {"abs", "fabs"},                       {"mod", "rlx_mod"},                    {"inversesqrt", "rsqrt"},
      {"main", "rlx_main"},
  };
  return m;
}
const std::map<std::string, std::string>& builtin_names() {
  static const std::map<std::string, std::string> m = {
      {"floatBitsToUint", "as_uint"}, {"uintBitsToFloat", "as_float"}, {"intBitsToFloat", "as_float"}, {"floatBitsToInt", "as_int"},
      {"roundEven", "rint"},          {"abs", "fabs"},                 {"mod", "rlx_mod"},             {"inversesqrt", "rsqrt"},
      {"main", "rlx_main"},
  };
  return m;
}

const std::map<std::string, std::string>& hip_builtin_names() {
  static const std::map<std::string, std::string> m = {
      {"floatBitsToUint", "__float_as_uint"}, {"uintBitsToFloat", "__uint_as_float"}, {"intBitsToFloat", "__int_as_float"}, {"floatBitsToInt", "__float_as_int"},
      {"roundEven", "rintf"},                 {"abs", "fabsf"},                       {"mod", "rlx_mod"},                     {"inversesqrt", "rsqrtf"},
      {"main", "rlx_main"},
  };
  return m;
}

// GLSL's atomics take the lvalue; OpenCL's and HIP's a pointer to it
const std::map<std::string, std::string>& atomic_names() {
  static const std::map<std::string, std::string> m = {
      {"atomicAdd", "atomic_add"}, {"atomicMax", "atomic_max"}, {"atomicMin", "atomic_min"},          {"atomicAnd", "atomic_and"},
      {"atomicOr", "atomic_or"},   {"atomicXor", "atomic_xor"}, {"atomicExchange", "atomic_xchg"}, {"atomicCompSwap", "atomic_cmpxchg"},
  };
  return m;
}

const std::map<std::string, std::string>& hip_atomic_names() {
  static const std::map<std::string, std::string> m = {
      {"atomicAdd", "atomicAdd"}, {"atomicMax", "atomicMax"}, {"atomicMin", "atomicMin"},         {"atomicAnd", "atomicAnd"},
      {"atomicOr", "atomicOr"},   {"atomicXor", "atomicXor"}, {"atomicExchange", "atomicExch"}, {"atomicCompSwap", "atomicCAS"},
  };
  return m;
}

// Metal's atomics: explicit memory order, on atomic_uint (every atomic of the kernels is on uint)
const std::map<std::string, std::string>& metal_atomic_names() {
  static const std::map<std::string, std::string> m = {
      {"atomicAdd", "atomic_fetch_add_explicit"}, {"atomicMax", "atomic_fetch_max_explicit"}, {"atomicMin", "atomic_fetch_min_explicit"},
      {"atomicAnd", "atomic_fetch_and_explicit"}, {"atomicOr", "atomic_fetch_or_explicit"},   {"atomicXor", "atomic_fetch_xor_explicit"},
      {"atomicExchange", "atomic_exchange_explicit"}, {"atomicCompSwap", "rlx_cas"},
  };
  return m;
}

// GLSL's invocation built-ins: members of the bindings struct on Metal, set from the entry
// point's attributes
const std::vector<std::pair<std::string, std::string>>& metal_ids() {
  static const std::vector<std::pair<std::string, std::string>> v = {
      {"gl_LocalInvocationID", "uint3 [[thread_position_in_threadgroup]]"}, {"gl_WorkGroupID", "uint3 [[threadgroup_position_in_grid]]"},
      {"gl_NumWorkGroups", "uint3 [[threadgroups_per_grid]]"},            {"gl_WorkGroupSize", "uint3 [[threads_per_threadgroup]]"},
      {"gl_GlobalInvocationID", "uint3 [[thread_position_in_grid]]"},     {"gl_LocalInvocationIndex", "uint [[thread_index_in_threadgroup]]"},
  };
  return v;
}

const char* kMetalPrologue = R"(#include <metal_stdlib>
using namespace metal;
typedef long int64_t;
typedef ulong uint64_t;
typedef char int8_t;
typedef uchar uint8_t;
typedef short int16_t;
typedef ushort uint16_t;
float rlx_mod(float x, float y) { return x - y * floor(x / y); }
float2 unpackHalf2x16(uint u) { return float2(as_type<half2>(u)); }
// GLSL's atomicCompSwap: the value before, whether or not it was swapped
uint rlx_cas(device atomic_uint* a, uint compare, uint value) {
  uint expected = compare;
  while (!atomic_compare_exchange_weak_explicit(a, &expected, value, memory_order_relaxed, memory_order_relaxed))
    if (expected != compare) break;
  return expected;
}
)";

const char* kPrologue = R"(typedef long int64_t;
typedef ulong uint64_t;
typedef char int8_t;
typedef uchar uint8_t;
typedef short int16_t;
typedef ushort uint16_t;
#define gl_LocalInvocationID ((uint3)((uint)get_local_id(0), (uint)get_local_id(1), (uint)get_local_id(2)))
#define gl_WorkGroupID ((uint3)((uint)get_group_id(0), (uint)get_group_id(1), (uint)get_group_id(2)))
#define gl_NumWorkGroups ((uint3)((uint)get_num_groups(0), (uint)get_num_groups(1), (uint)get_num_groups(2)))
#define gl_WorkGroupSize ((uint3)((uint)get_local_size(0), (uint)get_local_size(1), (uint)get_local_size(2)))
#define gl_GlobalInvocationID ((uint3)((uint)get_global_id(0), (uint)get_global_id(1), (uint)get_global_id(2)))
#define gl_LocalInvocationIndex ((uint)(get_local_id(2) * get_local_size(1) * get_local_size(0) + get_local_id(1) * get_local_size(0) + get_local_id(0)))
static float rlx_mod(float x, float y) { return x - y * floor(x / y); }
// an f16 word's value, exactly (no half type without cl_khr_fp16)
static float rlx_half_value(uint h) {
  uint s = (h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0u) return as_float(s | as_uint((float)m * 5.9604644775390625e-8f));
  if (e == 31u) return as_float(s | 0x7f800000u | (m << 13));
  return as_float(s | ((e + 112u) << 23) | (m << 13));
}
static float2 unpackHalf2x16(uint u) { return (float2)(rlx_half_value(u & 0xffffu), rlx_half_value(u >> 16)); }
)";

const char* kHipPrologue = R"(#include <hip/hip_runtime.h>
#include <stdint.h>
typedef unsigned int uint;
#define gl_LocalInvocationID make_uint3(threadIdx.x, threadIdx.y, threadIdx.z)
#define gl_WorkGroupID make_uint3(blockIdx.x, blockIdx.y, blockIdx.z)
// the groups from the dispatch packet: HIP's gridDim rounds up, which ROCm 5.2's LLVM fails to
// select code for in some kernels (an i1 multiply); a launch's grid is whole groups anyway
#define gl_NumWorkGroups make_uint3(__builtin_amdgcn_grid_size_x() / __builtin_amdgcn_workgroup_size_x(), \
                                    __builtin_amdgcn_grid_size_y() / __builtin_amdgcn_workgroup_size_y(), \
                                    __builtin_amdgcn_grid_size_z() / __builtin_amdgcn_workgroup_size_z())
#define gl_WorkGroupSize make_uint3(blockDim.x, blockDim.y, blockDim.z)
#define gl_GlobalInvocationID make_uint3(blockIdx.x * blockDim.x + threadIdx.x, blockIdx.y * blockDim.y + threadIdx.y, blockIdx.z * blockDim.z + threadIdx.z)
#define gl_LocalInvocationIndex ((threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x)
static __device__ float rlx_mod(float x, float y) { return x - y * floorf(x / y); }
// GLSL's uvec4 as the kernels use it (16-byte loads of packed weights, lanes indexed): HIP's uint4
// has no operator[]
struct __attribute__((aligned(16))) rlx_uint4 {
  uint x, y, z, w;
  rlx_uint4() = default;
  __device__ explicit rlx_uint4(uint s) : x(s), y(s), z(s), w(s) {}
  __device__ rlx_uint4(uint a, uint b, uint c, uint d) : x(a), y(b), z(c), w(d) {}
  __device__ uint& operator[](uint i) { return i == 0u ? x : i == 1u ? y : i == 2u ? z : w; }
  __device__ uint operator[](uint i) const { return i == 0u ? x : i == 1u ? y : i == 2u ? z : w; }
};
// GLSL's clamp: HIP has min and max only
static __device__ int clamp(int x, int lo, int hi) { return min(max(x, lo), hi); }
static __device__ uint clamp(uint x, uint lo, uint hi) { return min(max(x, lo), hi); }
static __device__ float clamp(float x, float lo, float hi) { return fminf(fmaxf(x, lo), hi); }
// an f16 word's value, exactly
static __device__ float rlx_half_value(uint h) {
  uint s = (h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0u) return __uint_as_float(s | __float_as_uint((float)m * 5.9604644775390625e-8f));
  if (e == 31u) return __uint_as_float(s | 0x7f800000u | (m << 13));
  return __uint_as_float(s | ((e + 112u) << 23) | (m << 13));
}
static __device__ float2 unpackHalf2x16(uint u) { return make_float2(rlx_half_value(u & 0xffffu), rlx_half_value(u >> 16)); }
)";

// A GLSL type's name in the language (OpenCL C's and MSL's are the same)
std::string lang_type(CLanguage lang, const std::string& glsl_type) {
  if (lang == CLanguage::hip && glsl_type == "uvec4") return "rlx_uint4";
  auto it = type_names().find(glsl_type);
  return it == type_names().end() ? glsl_type : it->second;
}

struct Shared {
  std::string type, dims;  // dims: "[256]" or "[64][65]", empty for a scalar
};

struct Private {
  std::string type, init;  // init: its initializer as OpenCL C, empty for none
};

class Rewriter {
 public:
  Rewriter(CLanguage lang, const ClKernel& k, std::vector<Tok> toks)
      : metal_(lang == CLanguage::metal), hip_(lang == CLanguage::hip), lang_(metal_ ? "metal" : hip_ ? "rocm" : "opencl"), t_(std::move(toks)) {
    for (const auto& b : k.bindings) buffers_.insert(b.name);
    if (metal_)
      for (const auto& [id, attr] : metal_ids()) buffers_.insert(id);  // reached the same way
  }

  std::string run() {
    structure();
    return respell();
  }
  const std::vector<std::pair<std::string, Shared>>& shared() const { return shared_; }
  const std::vector<std::pair<std::string, Private>>& privates() const { return privates_; }

 private:
  size_t next(size_t i) const { return walk_.next(i); }
  size_t prev(size_t i) const { return walk_.prev(i); }
  bool is(size_t i, const char* s) const { return walk_.is(i, s); }
  size_t matching(size_t open) const { return walk_.matching(open); }
  void erase(size_t from, size_t to) {  // tokens [from, to] become nothing
    for (size_t i = from; i <= to && i < t_.size(); ++i) t_[i] = {Tok::space, ""};
  }

  // Top-level declarations: shared arrays leave for the bindings' struct, constants go to the
  // constant space, and every function definition gets the struct as its first parameter.
  void structure() {
    int braces = 0, parens = 0;
    bool directive = false;
    for (size_t i = 0; i < t_.size(); ++i) {
      const Tok& tk = t_[i];
      if (tk.kind == Tok::space) {
        if (tk.text.find('\n') != std::string::npos) directive = false;
        continue;
      }
      if (tk.text == "#") directive = true;
      if (tk.kind == Tok::punct) {
        braces += tk.text == "{" ? 1 : tk.text == "}" ? -1 : 0;
        parens += tk.text == "(" ? 1 : tk.text == ")" ? -1 : 0;
        continue;
      }
      if (tk.kind != Tok::ident || directive) continue;
      if (tk.text == "inout" || tk.text == "out" || tk.text.rfind("subgroup", 0) == 0 || tk.text.rfind("coopMat", 0) == 0 || tk.text == "fcoopmatNV")
        throw Error(ErrorKind::unsupported, cat(lang_, ": the kernel uses GLSL's ", tk.text, ", which its ", metal_ ? "Metal" : hip_ ? "HIP" : "OpenCL C", " flavour has no spelling for"));
      if (tk.text == "precise") {
        erase(i, i);
        continue;
      }
      if (braces != 0 || parens != 0) continue;
      if (tk.text == "shared") {
        // shared T name[dims], name[dims];
        const size_t ty = next(i);
        size_t j = ty;
        do {
          const size_t nm = next(j);
          j = next(nm);
          std::string dims;
          while (is(j, "[")) {
            const size_t close = matching(j);
            for (size_t q = j; q <= close; ++q) dims += t_[q].text;
            j = next(close);
          }
          if (t_[nm].kind != Tok::ident || !(is(j, ";") || is(j, ","))) throw Error(ErrorKind::internal, cat(lang_, ": a shared declaration it cannot read"));
          shared_.push_back({t_[nm].text, {t_[ty].text, dims}});
        } while (is(j, ","));
        erase(i, j);
        i = j;
        continue;
      }
      if (type_names().count(tk.text)) {
        // a private global (T name = init;): a member of the bindings, set by the entry point
        const size_t pv = prev(i), nm = next(i), eq = next(nm);
        if ((pv == t_.size() || is(pv, ";") || is(pv, "}")) && nm < t_.size() && t_[nm].kind == Tok::ident && (is(eq, "=") || is(eq, ";"))) {
          size_t j = eq;
          std::string init;
          if (is(eq, "="))
            for (j = next(eq); j < t_.size() && !is(j, ";"); ++j) init += t_[j].kind == Tok::number && is_float_literal(t_[j].text) ? t_[j].text + "f" : t_[j].text;
          privates_.push_back({t_[nm].text, {tk.text, init}});
          erase(i, j);
          i = j;
          continue;
        }
      }
      if (tk.text == "const") {
        const size_t pv = prev(i);
        if (pv == t_.size() || is(pv, ";") || is(pv, "}")) t_[i].text = metal_ ? "constant" : hip_ ? "__constant__ const" : "__constant";
        continue;
      }
      const size_t nx = next(i), pv = prev(i);
      if (is(nx, "(") && pv < t_.size() && t_[pv].kind == Tok::ident && t_[pv].text != "return") {
        if (!functions_.insert(tk.text).second)
          throw Error(ErrorKind::internal, cat(lang_, ": the kernel defines ", tk.text, " twice (GLSL overloads functions; the bindings parameter makes every function one more)"));
        definitions_.insert(nx);
        if (!metal_) statics_.insert(pv);
      }
    }
  }

  bool type_ahead(size_t i) const { return i < t_.size() && t_[i].kind == Tok::ident && type_names().count(t_[i].text); }

  std::string respell() {
    std::string out;
    for (size_t i = 0; i < t_.size(); ++i) {
      const Tok& tk = t_[i];
      if (tk.kind == Tok::number) {
        out += tk.text;
        if (is_float_literal(tk.text) && tk.text.back() != 'f' && tk.text.back() != 'F') out += 'f';
        continue;
      }
      if (tk.kind != Tok::ident) {
        out += tk.text;
        if (tk.text == "(" && definitions_.count(i)) out += cat(param(), is(next(i), ")") ? "" : ", ");
        continue;
      }
      const std::string& w = tk.text;
      if (statics_.count(i)) out += hip_ ? "static __device__ " : "static ";
      const size_t nx = next(i), pv = prev(i);
      const bool member = pv < t_.size() && is(pv, ".");
      if (member) {
        out += w;
        continue;
      }
      // T[](a, b) and T[2](a, b) → {a, b}
      if (type_ahead(i) && is(nx, "[")) {
        const size_t close = matching(nx);
        if (is(next(close), "(")) {
          const size_t open = next(close), end = matching(open);
          t_[end].text = "}";
          out += "{";
          i = open;
          continue;
        }
      }
      if (type_ahead(i) && is(nx, "(") && !metal_ && !hip_) {  // Metal and HIP are C++: T(x) casts as it is
        out += cat("(", type_names().at(w), ")");
        continue;
      }
      if (type_names().count(w)) {
        out += lang_type(hip_ ? CLanguage::hip : CLanguage::opencl, w);
        continue;
      }
      if (functions_.count(w) && is(nx, "(") && !definitions_.count(nx)) {
        out += builtins().count(w) ? builtins().at(w) : w;
        out += is(next(nx), ")") ? "(rlx_kb" : "(rlx_kb, ";
        i = nx;
        continue;
      }
      if (metal_ && metal_atomic_names().count(w) && is(nx, "(")) {
        // atomicAdd(x, v) → atomic_fetch_add_explicit((device atomic_uint*)&x, v, memory_order_relaxed)
        if (w != "atomicCompSwap") t_[matching(nx)].text = ", memory_order_relaxed)";
        out += metal_atomic_names().at(w) + "((device atomic_uint*)&";
        i = nx;
        continue;
      }
      if (!metal_ && atomic_names().count(w) && is(nx, "(")) {
        out += (hip_ ? hip_atomic_names() : atomic_names()).at(w) + "(&";
        i = nx;
        continue;
      }
      if (w == "barrier" && is(nx, "(") && is(next(nx), ")")) {
        out += metal_ ? "threadgroup_barrier(mem_flags::mem_threadgroup | mem_flags::mem_device)" : hip_ ? "__syncthreads()" : "barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)";
        i = next(nx);
        continue;
      }
      if ((w == "memoryBarrierShared" || w == "memoryBarrierBuffer" || w == "memoryBarrier" || w == "groupMemoryBarrier") && is(nx, "(") && is(next(nx), ")")) {
        if (metal_) out += w == "memoryBarrierShared" ? "threadgroup_barrier(mem_flags::mem_threadgroup)" : "threadgroup_barrier(mem_flags::mem_threadgroup | mem_flags::mem_device)";
        else if (hip_) out += w == "memoryBarrierShared" ? "__threadfence_block()" : "__threadfence()";
        else out += w == "memoryBarrierShared" ? "mem_fence(CLK_LOCAL_MEM_FENCE)" : "mem_fence(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)";
        i = next(nx);
        continue;
      }
      if (buffers_.count(w)) {
        out += "rlx_kb->" + w;
        continue;
      }
      if (auto it = std::find_if(shared_.begin(), shared_.end(), [&](const auto& s) { return s.first == w; }); it != shared_.end()) {
        out += it->second.dims.empty() ? cat("(*rlx_kb->", w, ")") : "rlx_kb->" + w;
        continue;
      }
      if (std::find_if(privates_.begin(), privates_.end(), [&](const auto& v) { return v.first == w; }) != privates_.end()) {
        out += "rlx_kb->" + w;
        continue;
      }
      if (w == "p" && is(nx, ".")) {
        out += "rlx_kb->p";
        continue;
      }
      if (auto it = builtins().find(w); it != builtins().end()) {
        out += it->second;
        continue;
      }
      out += w;
    }
    return out;
  }

  std::string param() const { return metal_ ? "thread rlx_bindings* rlx_kb" : hip_ ? "rlx_bindings* rlx_kb" : "struct rlx_bindings* rlx_kb"; }
  const std::map<std::string, std::string>& builtins() const { return metal_ ? metal_builtin_names() : hip_ ? hip_builtin_names() : builtin_names(); }

  bool metal_, hip_;
  std::string lang_;
  std::vector<Tok> t_;
  TokenWalk walk_{t_, lang_.c_str()};
  std::set<std::string> buffers_, functions_;
  std::set<size_t> definitions_;  // the "(" of each function definition's parameters
  // each definition's return type: functions are static, so those a kernel never calls are
  // dropped by the front end instead of compiled (PoCL's build time is most of a cold run's)
  std::set<size_t> statics_;
  std::vector<std::pair<std::string, Shared>> shared_;
  std::vector<std::pair<std::string, Private>> privates_;
};


// "[64][65]" → the pointer declarator "(*name)[65]"; "[256]" → "*name"
std::string local_pointer(const std::string& name, const std::string& dims) {
  const size_t inner = dims.find(']');
  if (inner == std::string::npos) return "*" + name;
  const std::string rest = dims.substr(inner + 1);
  return rest.empty() ? "*" + name : cat("(*", name, ")", rest);
}

}  // namespace

namespace {

// One kernel's program in either language: the prologue, the words and bindings structs, the
// respelled body, and the entry point that fills the bindings and calls rlx_main.
std::string c_like_program(CLanguage lang, const ClKernel& k, const std::string& glsl) {
  const bool metal = lang == CLanguage::metal, hip = lang == CLanguage::hip;
  auto cl_type = [&](const std::string& t) { return lang_type(lang, t); };
  Rewriter r(lang, k, tokenize(glsl));
  const std::string body = r.run();
  // a binding as a pointer, a shared array's address space (HIP's pointers are generic: only
  // the array's declaration says __shared__), a struct named in a declaration
  auto pointer = [&](const ClBinding& b, const std::string& name) {
    if (metal) return cat(b.readonly ? "const " : "", "device ", cl_type(b.type), "* ", name);
    if (hip) return cat(b.readonly ? "const " : "", cl_type(b.type), "* ", name);
    return cat("__global ", b.readonly ? "const " : "", cl_type(b.type), "* ", name);
  };
  const std::string local = metal ? "threadgroup " : hip ? "__shared__ " : "__local ", member_space = hip ? "" : local, tag = metal || hip ? "" : "struct ";
  std::string s = metal ? kMetalPrologue : hip ? kHipPrologue : kPrologue;
  s += "struct rlx_words {";
  for (const auto& w : k.words) s += cat(" uint ", w, ";");
  if (k.words.empty()) s += " uint unused;";
  s += " };\nstruct rlx_bindings {\n";
  for (const auto& b : k.bindings) s += cat("  ", pointer(b, b.name), ";\n");
  for (const auto& [name, sh] : r.shared()) s += cat("  ", member_space, cl_type(sh.type), " ", local_pointer(name, sh.dims), ";\n");
  for (const auto& [name, v] : r.privates()) s += cat("  ", cl_type(v.type), " ", name, ";\n");
  if (metal)
    for (const auto& [id, attr] : metal_ids()) s += cat("  ", attr.substr(0, attr.find(' ')), " ", id, ";\n");
  s += cat("  ", tag, "rlx_words p;\n};\n", body);
  const uint32_t threads = k.local[0] * k.local[1] * k.local[2];
  if (metal)  // the host dispatches threadgroups of k.local threads (Metal has no required-size attribute)
    s += cat("\n// threads per threadgroup: ", k.local[0], " x ", k.local[1], " x ", k.local[2], "\nkernel void rlx_kernel(");
  else if (hip)  // the host launches blocks of k.local threads; the bound lets the compiler use registers for no more
    s += cat("\n// threads per block: ", k.local[0], " x ", k.local[1], " x ", k.local[2], "\nextern \"C\" __global__ void __launch_bounds__(", threads, ") rlx_kernel(");
  else
    s += cat("\n__kernel __attribute__((reqd_work_group_size(", k.local[0], ", ", k.local[1], ", ", k.local[2], "))) void rlx_kernel(");
  for (size_t i = 0; i < k.bindings.size(); ++i) s += cat(pointer(k.bindings[i], cat("a", i)), metal ? cat(" [[buffer(", i, ")]]") : "", ", ");
  if (metal) {
    s += cat("constant rlx_words& words [[buffer(", k.bindings.size(), ")]]");
    for (const auto& [id, attr] : metal_ids()) s += cat(", ", attr.substr(0, attr.find(' ')), " ", id, "_ ", attr.substr(attr.find(' ') + 1));
    s += ") {\n";
  } else {
    s += cat(tag, "rlx_words words) {\n");
  }
  for (const auto& [name, sh] : r.shared()) s += cat("  ", local, cl_type(sh.type), " ", name, sh.dims, ";\n");
  s += cat("  ", tag, "rlx_bindings b;\n");
  for (size_t i = 0; i < k.bindings.size(); ++i) s += cat("  b.", k.bindings[i].name, " = a", i, ";\n");
  for (const auto& [name, sh] : r.shared()) s += cat("  b.", name, " = ", sh.dims.empty() ? "&" : "", name, ";\n");
  for (const auto& [name, v] : r.privates())
    if (!v.init.empty()) s += cat("  b.", name, " = ", v.init, ";\n");
  if (metal)
    for (const auto& [id, attr] : metal_ids()) s += cat("  b.", id, " = ", id, "_;\n");
  s += "  b.p = words;\n  rlx_main(&b);\n}\n";
  return s;
}

}  // namespace

std::string opencl_c(const ClKernel& k, const std::string& glsl) { return c_like_program(CLanguage::opencl, k, glsl); }
std::string metal_source(const ClKernel& k, const std::string& glsl) { return c_like_program(CLanguage::metal, k, glsl); }
std::string hip_source(const ClKernel& k, const std::string& glsl) { return c_like_program(CLanguage::hip, k, glsl); }

}  // namespace rlx::backends::vulkan
