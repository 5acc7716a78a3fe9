// The cpu device: native kernels where this folder has them; everything else reaches it
// through decompositions and rewrites.
#include <cblas.h>
#include <omp.h>

#include "backends/cpu/bf16_rate.h"
#include "backends/cpu/kernels.h"
#include "backends/cpu/onednn_matmul.h"
#include "backends/cpu/quant_rows.h"
#include "util/strings.h"
#include "runtime/registry.h"

namespace rlx::backends::cpu {

const KernelTable& kernel_table() {
  static const KernelTable t = [] {
    KernelTable k{};
    register_elementwise(k);
    register_reduce(k);
    register_matmul(k);
    register_movement(k);
    register_nn(k);
    register_fused(k);
    register_attention(k);
    register_fused_dot(k);
    register_rope(k);
    register_quant(k);
    register_quant_linear(k);
    register_experts(k);
    register_collective(k);
    register_factorize(k);
    register_sparse(k);
    register_fft(k);
    register_eig(k);
    register_splat(k);
    register_complex(k);
    return k;
  }();
  return t;
}

namespace {

const KernelTable& table() { return kernel_table(); }

class CpuBackend : public runtime::Backend {
 public:
  std::string name() const override { return "cpu"; }
  std::string description() const override {
    std::string d = "host CPU: oneDNN GEMMs (OpenBLAS where oneDNN has none), AVX2/AVX-512 kernels, thread pool";
    if (onednn_available() && cpu_has_bf16_gemm()) {
      // which bf16 products this CPU runs (bf16_rate.h): AMX, its vdpbf16ps, or f32 FMAs
      if (cpu_has_amx()) return d + "; bf16 products on AMX";
      const Bf16Rates r = bf16_rates();
      d += cat("; bf16 products ", bf16_products_native() ? "as vdpbf16ps" : "widened to f32", " (a core: vdpbf16ps ", static_cast<int>(r.bf16_dot),
               ", f32 FMA ", static_cast<int>(r.f32_fma), " GFLOP/s)");
    }
    return d;
  }
  runtime::Availability availability() const override {
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return {false, "the cpu device needs AVX2 and FMA (x86-64-v3)"};
    return {};
  }
  bool claims_kernel(ir::Op op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs& attrs) const override {
    if (op == ir::Op::constant) return true;
    const KernelEntry& e = table()[static_cast<size_t>(op)];
    return e.claims && e.claims(op, in, out, attrs);
  }
  // 8-bit activations for packed matmuls (AVX512-VNNI), reduced-precision attention products.
  bool implements_variant(ir::Op op, const std::string& attr) const override {
    return ((op == ir::Op::dequant_matmul || op == ir::Op::expert_matmul) && attr == "act") || (op == ir::Op::attention && attr == "compute");
  }
  // The q8 dot products of quant_q8.cpp (AVX512-VNNI where the CPU has it, AVX2 elsewhere).
  bool has_int8_dot_products() const override { return true; }
  bool claims_op(ir::Op op) const override { return op == ir::Op::constant || table()[static_cast<size_t>(op)].claims != nullptr; }
  std::unique_ptr<runtime::Executable> compile(const ir::Graph& lir) override {
    return runtime::make_host_executable(lir, [](const ir::Node& n, const ir::Graph& g) -> HostKernel {
      const KernelEntry& e = table()[static_cast<size_t>(n.op)];
      return e.make ? e.make(n, g) : HostKernel{};
    });
  }
};

}  // namespace

void register_backend() {
  // OpenBLAS only ever runs inside our pool threads: its own threads would spin (sched_yield)
  // against ours on every call.
  openblas_set_num_threads(1);
  // oneDNN's OpenMP likewise: a team started once keeps a thread spinning next to ours.
  omp_set_num_threads(1);
  runtime::register_backend(std::make_unique<CpuBackend>());
}

}  // namespace rlx::backends::cpu
