#include "backends/cuda/region_jit.h"

#include <nvrtc.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <vector>

#include "backends/cuda/device.h"
#include "codegen/dialect_c.h"
#include "codegen/reduce.h"
#include "util/flags.h"
#include "util/log.h"
#include "util/strings.h"

namespace rlx::backends::cuda {

struct RegionKernel {
  cudaLibrary_t library = nullptr;
  cudaKernel_t kernel = nullptr;
};

namespace {

// The kernel's one parameter; the layout is repeated in the generated source.
struct JitArgs {
  const void* in[kRegionMaxInputs];
  void* out[kRegionMaxOutputs];
  int rank;
  int64_t shape[kRegionRank];
  int64_t st[kRegionMaxInputs][kRegionRank];
  int64_t n;
};

const char* kPrelude = R"(typedef unsigned short u16;
typedef long long i64;
__device__ __forceinline__ float ld_f16(const void* p, i64 i) { u16 h = ((const u16*)p)[i]; float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
__device__ __forceinline__ float ld_bf16(const void* p, i64 i) { return __uint_as_float(((unsigned)((const u16*)p)[i]) << 16); }
__device__ __forceinline__ u16 to_f16(float v) { u16 h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(v)); return h; }
__device__ __forceinline__ u16 to_bf16(float v) { u16 h; asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(v)); return h; }
__device__ __forceinline__ float rd_f16(float v) { u16 h = to_f16(v); float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
__device__ __forceinline__ float rd_bf16(float v) { return __uint_as_float(((unsigned)to_bf16(v)) << 16); }
struct Args { const void* in[12]; void* out[4]; int rank; i64 shape[6]; i64 st[12][6]; i64 n; };
)";

std::string reg(int r) { return cat("v", r); }

// The f32 expression of one instruction: src/codegen's definition printed in CUDA C (region.cu's
// interpreter evaluates the same definition).
std::string expr(const RegionInstr& in) {
  if (in.op == Op::cast) return reg(in.a);  // the rounding below does the work
  std::vector<std::string> operands = {reg(in.a), reg(in.b), reg(in.c)};
  operands.resize(static_cast<size_t>(codegen::arity(in.op)));
  return codegen::print_scalar(codegen::cuda_c(), codegen::ValueClass::floating, in.op, operands);
}

std::string load(Dt dt, int k, const std::string& off) {
  std::string p = cat("a.in[", k, "]");
  switch (dt) {
    case Dt::f16: return cat("ld_f16(", p, ", ", off, ")");
    case Dt::bf16: return cat("ld_bf16(", p, ", ", off, ")");
    case Dt::boolean: return cat("(((const unsigned char*)", p, ")[", off, "] ? 1.0f : 0.0f)");
    default: return cat("((const float*)", p, ")[", off, "]");
  }
}

std::string store(Dt dt, int o, const std::string& v) {
  std::string p = cat("a.out[", o, "]");
  switch (dt) {
    case Dt::f16: return cat("((u16*)", p, ")[i] = to_f16(", v, ");");
    case Dt::bf16: return cat("((u16*)", p, ")[i] = to_bf16(", v, ");");
    case Dt::boolean: return cat("((unsigned char*)", p, ")[i] = ", v, " != 0.0f;");
    default: return cat("((float*)", p, ")[i] = ", v, ";");
  }
}

// The program's loads (input k at element offs[k]), constants and instructions; its outputs are
// registers reg(p.out_reg[o]) afterwards.
void emit_program(std::ostringstream& s, const RegionProgram& p, const std::vector<std::string>& offs) {
  for (int k = 0; k < p.n_in; ++k) s << "    float " << reg(p.in_reg[k]) << " = " << load(p.in_dt[k], k, offs[static_cast<size_t>(k)]) << ";\n";
  for (int c = 0; c < p.n_const; ++c) {
    uint32_t bits;
    std::memcpy(&bits, &p.const_val[c], 4);
    s << "    const float " << reg(p.const_reg[c]) << " = __int_as_float(" << static_cast<int32_t>(bits) << ");\n";
  }
  for (int c = 0; c < p.n_code; ++c) {
    const RegionInstr& in = p.code[c];
    std::string e = expr(in);
    if (in.round == 1) e = cat("rd_f16(", e, ")");
    if (in.round == 2) e = cat("rd_bf16(", e, ")");
    if (in.round == 3) e = cat("(", e, " != 0.0f ? 1.0f : 0.0f)");
    s << "    const float " << reg(in.dst) << " = " << e << ";\n";
  }
}

// launched as a programmatic dependent (common.cuh): let the next kernel start, wait for inputs
const char* kPdl = "#if __CUDA_ARCH__ >= 900\n  asm volatile(\"griddepcontrol.launch_dependents;\" ::: \"memory\");\n"
                   "  asm volatile(\"griddepcontrol.wait;\" ::: \"memory\");\n#endif\n";

std::string source(const RegionProgram& p, const InputAccess* access) {
  std::ostringstream s;
  // launched as a programmatic dependent (common.cuh): let the next kernel start, wait for inputs
  s << kPrelude << "extern \"C\" __global__ void __launch_bounds__(256) rlx_region(const __grid_constant__ Args a) {\n"
    << kPdl << "  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < a.n; i += (i64)gridDim.x * blockDim.x) {\n";
  bool strided = false;
  for (int k = 0; k < p.n_in; ++k) strided = strided || access[k] == InputAccess::strided;
  if (strided) {
    // unravel i once (32-bit division while it fits) for the broadcast inputs
    s << "    i64 c[6];\n    if (a.n <= 0x7fffffff) { unsigned r = (unsigned)i; for (int d = a.rank - 1; d > 0; --d) { unsigned n = (unsigned)a.shape[d]; "
         "c[d] = r % n; r /= n; } c[0] = r; }\n"
      << "    else { i64 r = i; for (int d = a.rank - 1; d > 0; --d) { c[d] = r % a.shape[d]; r /= a.shape[d]; } c[0] = r; }\n";
  }
  std::vector<std::string> offs;
  for (int k = 0; k < p.n_in; ++k) {
    std::string off = "i";
    if (access[k] == InputAccess::scalar) off = "0";
    if (access[k] == InputAccess::strided) {
      s << "    i64 o" << k << " = 0; for (int d = 0; d < a.rank; ++d) o" << k << " += c[d] * a.st[" << k << "][d];\n";
      off = cat("o", k);
    }
    offs.push_back(off);
  }
  emit_program(s, p, offs);
  for (int o = 0; o < p.n_out; ++o) s << "    " << store(p.out_dt[o], o, reg(p.out_reg[o])) << "\n";
  s << "  }\n}\n";
  return s.str();
}

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::filesystem::path cache_dir() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  if (xdg && *xdg) return std::filesystem::path(xdg) / "rlx" / "cuda";
  if (home && *home) return std::filesystem::path(home) / ".cache" / "rlx" / "cuda";
  return {};
}

// NVRTC → CUBIN for this GPU; empty on failure (logged at RLX_DEBUG=1).
std::string compile(const std::string& src, const std::string& arch) {
  nvrtcProgram prog;
  if (nvrtcCreateProgram(&prog, src.c_str(), "rlx_region.cu", 0, nullptr, nullptr) != NVRTC_SUCCESS) return {};
  std::string arch_opt = "--gpu-architecture=" + arch;
  const char* opts[] = {arch_opt.c_str(), "--std=c++17"};
  nvrtcResult r = nvrtcCompileProgram(prog, 2, opts);
  std::string cubin;
  if (r == NVRTC_SUCCESS) {
    size_t n = 0;
    nvrtcGetCUBINSize(prog, &n);
    cubin.resize(n);
    nvrtcGetCUBIN(prog, cubin.data());
  } else if (debug_at(1)) {
    size_t n = 0;
    nvrtcGetProgramLogSize(prog, &n);
    std::string logtext(n, '\0');
    nvrtcGetProgramLog(prog, logtext.data());
    log_line(cat("cuda: NVRTC failed on a fused region (", nvrtcGetErrorString(r), "):\n", logtext, "\n", src));
  }
  nvrtcDestroyProgram(&prog);
  return cubin;
}

std::string cubin_for(const std::string& src) {
  const GpuInfo& g = gpu_info();
  std::string arch = cat("sm_", g.major, g.minor);
  char name[64];
  std::snprintf(name, sizeof(name), "region-%016llx-%s.cubin", static_cast<unsigned long long>(fnv1a(src)), arch.c_str());
  std::filesystem::path dir = cache_dir(), file = dir.empty() ? std::filesystem::path() : dir / name;
  std::error_code ec;
  if (!file.empty() && std::filesystem::exists(file, ec)) {
    std::ifstream in(file, std::ios::binary);
    std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!data.empty()) return data;
  }
  std::string cubin = compile(src, arch);
  if (!cubin.empty() && !file.empty()) {
    // written under a unique name and renamed: concurrent processes never read half a file
    std::filesystem::create_directories(dir, ec);
    std::filesystem::path tmp = dir / cat(name, ".", getpid(), ".tmp");
    {
      std::ofstream out(tmp, std::ios::binary);
      out.write(cubin.data(), static_cast<std::streamsize>(cubin.size()));
    }
    std::filesystem::rename(tmp, file, ec);
    if (ec) std::filesystem::remove(tmp, ec);
  }
  return cubin;
}

// The reduce kernel's one parameter; the layout is repeated in the generated source.
struct JitReduceArgs {
  const void* in[kRegionMaxInputs];
  void* out;
  int64_t kshape[kRegionRank], rshape[kRegionRank];
  int64_t kst[kRegionMaxInputs][kRegionRank], rst[kRegionMaxInputs][kRegionRank];
  int64_t K, R;
};

// Unravels index `idx` over `rank` dims of a.<shape> into offsets <prefix><k> of every input.
void emit_unravel(std::ostringstream& s, const RegionProgram& p, int rank, const char* idx, const char* shape, const char* st, const char* prefix) {
  for (int k = 0; k < p.n_in; ++k) s << "    i64 " << prefix << k << " = 0;\n";
  if (rank == 0) return;
  s << "    { i64 t = " << idx << ", c;\n";
  for (int d = rank - 1; d >= 0; --d) {
    if (d > 0) s << "      c = t % a." << shape << "[" << d << "]; t /= a." << shape << "[" << d << "];\n";
    else s << "      c = t;\n";
    for (int k = 0; k < p.n_in; ++k) s << "      " << prefix << k << " += c * a." << st << "[" << k << "][" << d << "];\n";
  }
  s << "    }\n";
}

std::string reduce_source(const RegionProgram& p, Red kind, Dt out, const ReduceGeometry& g) {
  std::ostringstream s;
  const char* identity = kind == Red::sum ? "0.0" : kind == Red::max ? "-__longlong_as_double(0x7ff0000000000000ll)" : "__longlong_as_double(0x7ff0000000000000ll)";
  s << kPrelude << "struct RArgs { const void* in[12]; void* out; i64 kshape[6], rshape[6]; i64 kst[12][6], rst[12][6]; i64 K, R; };\n"
    << "__device__ __forceinline__ double comb(double x, double v) { return "
    << codegen::print_scalar(codegen::cuda_c(), codegen::ValueClass::floating,
                             codegen::fold_op(kind == Red::sum ? codegen::Reduction::sum : kind == Red::max ? codegen::Reduction::max : codegen::Reduction::min),
                             {"x", "v"})
    << "; }\n"
    << "extern \"C\" __global__ void __launch_bounds__(" << (g.serial || g.rows ? 256 : 1024) << ") rlx_reduce(const __grid_constant__ RArgs a) {\n" << kPdl;
  std::vector<std::string> offs;
  for (int k = 0; k < p.n_in; ++k) offs.push_back(cat("(ko", k, " + ro", k, ")"));
  const int G = g.rows ? g.group : 0;
  if (g.serial) s << "  const int lane = 0;\n  const i64 o = (i64)blockIdx.x * 256 + threadIdx.x;\n";
  else if (g.rows) s << "  const int lane = threadIdx.x % " << G << ";\n  const i64 o = (i64)blockIdx.x * " << 256 / G << " + threadIdx.x / " << G << ";\n";
  else s << "  const int lane = threadIdx.x / 32;\n  const i64 o = (i64)blockIdx.x * 32 + threadIdx.x % 32;\n";
  // each lane keeps 4 sums of every 4th element of its share, so 4 loads are in flight
  const int stride = g.serial ? 1 : g.rows ? G : 32;
  s << "  double acc = " << identity << ", acc1 = acc, acc2 = acc, acc3 = acc;\n  if (o < a.K) {\n";
  emit_unravel(s, p, g.krank, "o", "kshape", "kst", "ko");
  s << "    for (i64 r0 = lane; r0 < a.R; r0 += " << 4 * stride << ") {\n";
  for (int u = 0; u < 4; ++u) {
    const std::string acc = u == 0 ? "acc" : cat("acc", u);
    s << "    { const i64 r = r0 + " << u * stride << ";\n    if (r < a.R) {\n";
    emit_unravel(s, p, g.rrank, "r", "rshape", "rst", "ro");
    emit_program(s, p, offs);
    s << "    " << acc << " = comb(" << acc << ", (double)" << reg(p.out_reg[0]) << ");\n    } }\n";
  }
  s << "    }\n  }\n  acc = comb(comb(acc, acc1), comb(acc2, acc3));\n";
  std::string store_expr = out == Dt::f16 ? "((u16*)a.out)[o] = to_f16((float)acc);" : out == Dt::bf16 ? "((u16*)a.out)[o] = to_bf16((float)acc);"
                                                                                                        : "((float*)a.out)[o] = (float)acc;";
  if (g.serial) {
    s << "  if (o < a.K) { " << store_expr << " }\n}\n";
  } else if (g.rows) {
    // the group's lanes: a warp by shuffles, then (a block per output) the warps through shared memory
    s << "  for (int m = 16; m > 0; m >>= 1) acc = comb(acc, __shfl_xor_sync(0xffffffffu, acc, m));\n";
    if (G == 256)
      s << "  __shared__ double part[8];\n  if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = acc;\n  __syncthreads();\n"
        << "  if (threadIdx.x != 0) return;\n  acc = part[0];\n  for (int w = 1; w < 8; ++w) acc = comb(acc, part[w]);\n";
    else s << "  if (lane != 0) return;\n";
    s << "  if (o < a.K) { " << store_expr << " }\n}\n";
  } else {
    // 32 neighbouring outputs across the lanes, their reduced elements over the 32 warps
    s << "  __shared__ double part[32][33];\n  part[lane][threadIdx.x % 32] = acc;\n  __syncthreads();\n"
      << "  if (lane != 0 || o >= a.K) return;\n  for (int w = 1; w < 32; ++w) acc = comb(acc, part[w][threadIdx.x % 32]);\n"
      << "  " << store_expr << "\n}\n";
  }
  return s.str();
}

// One compiled kernel per source, kept for the process (kernels are few); null where NVRTC is
// off or fails.
std::shared_ptr<const RegionKernel> jit_kernel(const std::string& src, const char* name) {
  if (!flags().RLX_CUDA_NVRTC) return nullptr;
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<const RegionKernel>> cache;
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache.find(src); it != cache.end()) return it->second;
  std::shared_ptr<RegionKernel> k;
  std::string cubin = cubin_for(src);
  if (!cubin.empty()) {
    k = std::make_shared<RegionKernel>();
    use_device();
    if (cudaLibraryLoadData(&k->library, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0) != cudaSuccess ||
        cudaLibraryGetKernel(&k->kernel, k->library, name) != cudaSuccess) {
      cudaGetLastError();
      if (debug_at(1)) log_line("cuda: could not load an NVRTC region kernel; interpreting the region");
      k = nullptr;
    }
  }
  cache[src] = k;
  return k;
}

// A compiled kernel whose one parameter is *args, as a programmatic dependent (common.cuh).
void launch_jit(const RegionKernel& k, void* args, int64_t blocks, unsigned threads, cudaStream_t s, const char* what) {
  void* params[] = {args};
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(static_cast<unsigned>(blocks));
  cfg.blockDim = dim3(threads);
  cfg.stream = s;
  cudaLaunchAttribute attr[1];
  dependent_launch(cfg, attr);
  check(cudaLaunchKernelExC(&cfg, reinterpret_cast<const void*>(k.kernel), params), what);
}

}  // namespace

std::shared_ptr<const RegionKernel> jit_region(const RegionProgram& p, const InputAccess* access) {
  return jit_kernel(source(p, access), "rlx_region");
}

std::shared_ptr<const RegionKernel> jit_reduce_region(const RegionProgram& p, Red kind, Dt out, const ReduceGeometry& g) {
  return jit_kernel(reduce_source(p, kind, out, g), "rlx_reduce");
}

void launch_reduce_region_jit(const RegionKernel& k, const RegionProgram& p, const ReduceGeometry& g, const void* const* in, void* out, cudaStream_t s) {
  if (g.K == 0) return;
  JitReduceArgs a{};
  for (int i = 0; i < p.n_in; ++i) a.in[i] = in[i];
  a.out = out;
  for (int d = 0; d < g.krank; ++d) a.kshape[d] = g.kshape[d];
  for (int d = 0; d < g.rrank; ++d) a.rshape[d] = g.rshape[d];
  for (int i = 0; i < p.n_in; ++i) {
    for (int d = 0; d < g.krank; ++d) a.kst[i][d] = g.kst[i][d];
    for (int d = 0; d < g.rrank; ++d) a.rst[i][d] = g.rst[i][d];
  }
  a.K = g.K;
  a.R = g.R;
  int64_t per_block = g.serial ? 256 : g.rows ? 256 / g.group : 32;
  launch_jit(k, &a, (g.K + per_block - 1) / per_block, g.serial || g.rows ? 256 : 1024, s, "launching a fused reduction");
}

void launch_region_jit(const RegionKernel& k, const RegionProgram& p, const void* const* in, void* const* out, int64_t n, cudaStream_t s) {
  if (n == 0) return;
  JitArgs a{};
  for (int i = 0; i < p.n_in; ++i) a.in[i] = in[i];
  for (int o = 0; o < p.n_out; ++o) a.out[o] = out[o];
  a.rank = p.rank;
  for (int d = 0; d < p.rank; ++d) a.shape[d] = p.shape[d];
  for (int i = 0; i < p.n_in; ++i)
    for (int d = 0; d < p.rank; ++d) a.st[i][d] = p.in_stride[i][d];
  a.n = n;
  launch_jit(k, &a, std::min<int64_t>((n + 255) / 256, int64_t{1} << 20), 256, s, "launching a fused region");
}

}  // namespace rlx::backends::cuda
