// The cuda device: NVIDIA GPUs through the CUDA runtime, cuBLASLt for contractions and the
// kernels of this folder. Everything the kernel table does not claim reaches it through
// decompositions and rewrites, or compilation fails naming it (DESIGN §3).
#include "backends/cuda/device.h"
#include "backends/cuda/executable.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/resident.h"
#include "rlx/error.h"
#include "util/flags.h"
#include "runtime/registry.h"
#include "util/strings.h"

namespace rlx::backends::cuda {

const KernelTable& kernel_table() {
  static const KernelTable t = [] {
    KernelTable k{};
    register_elementwise(k);
    register_movement(k);
    register_reduce(k);
    register_matmul(k);
    register_nn(k);
    register_attention(k);
    register_region(k);
    register_collective(k);
    register_fft(k);
    register_splat(k);
    register_linalg(k);
    register_sparse(k);
    register_complex(k);
    return k;
  }();
  return t;
}

namespace {

class CudaBackend : public runtime::Backend {
 public:
  std::string name() const override { return "cuda"; }
  std::string description() const override {
    const GpuInfo& g = gpu_info();
    std::string what = "NVIDIA GPU: cuBLASLt GEMMs, fused attention, norms and elementwise regions";
    if (!g.usable) return what;
    return cat(g.name, " (compute ", g.major, ".", g.minor, ", ", g.sm_count, " SMs, ", g.memory >> 20, " MiB, CUDA driver ", g.driver / 1000, ".",
               (g.driver % 1000) / 10, "): cuBLASLt GEMMs, fused attention, norms and elementwise regions");
  }
  runtime::Availability availability() const override {
    const GpuInfo& g = gpu_info();
    return {g.usable, g.reason};
  }
  std::string status() const override { return availability().available ? "runs here" : "runs on the accelerator machine"; }
  // Claims depend on the node only, never on the GPU: the dispatch report and docs/ops.md
  // read the same wherever the backend is built.
  bool claims_kernel(ir::Op op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs& attrs) const override {
    if (op == ir::Op::constant) return true;
    const KernelEntry& e = kernel_table()[static_cast<size_t>(op)];
    return e.claims && e.claims(op, in, out, attrs);
  }
  bool claims_op(ir::Op op) const override { return op == ir::Op::constant || kernel_table()[static_cast<size_t>(op)].claims != nullptr; }
  // The fused forms this folder's kernels implement (each kernel's claim still checks its
  // types and shapes).
  bool implements_variant(ir::Op op, const std::string& attr) const override {
    switch (op) {
      case ir::Op::dequant_matmul: return attr == "act" || attr == "glu" || attr == "norm_eps";
      case ir::Op::rope: return attr == "norm_eps" || attr == "append_axis";
      case ir::Op::attention: return attr == "compute" || attr == "out";
      case ir::Op::layer_norm:
      case ir::Op::rms_norm: return attr == "out";
      default: return false;
    }
  }
  std::unique_ptr<runtime::Executable> compile(const ir::Graph& lir) override {
    const GpuInfo& g = gpu_info();
    if (!g.usable) throw Error(ErrorKind::unsupported, cat("device cuda is not available: ", g.reason));
    return make_executable(lir);
  }
  bool runs_steps_concurrently() const override {
    return flags().RLX_CUDA_CONCURRENT && flags().RLX_CUDA_GRAPHS && flags().RLX_CUDA_BRANCH_PLAN;
  }
  bool make_resident(const Tensor& t) override {
    const GpuInfo& g = gpu_info();
    if (!g.usable) throw Error(ErrorKind::unsupported, cat("device cuda is not available: ", g.reason));
    return cuda::make_resident(t);
  }
  void release_resident(const Tensor& t, bool copy_back) override { cuda::release_resident(t, copy_back); }
};

}  // namespace

void register_backend() { runtime::register_backend(std::make_unique<CudaBackend>()); }

}  // namespace rlx::backends::cuda
