// The oneapi device: the graph's operations mapped onto oneDNN primitives — matmul, convolution,
// eltwise, binary, softmax, layer norm, pooling, reduction, reorder and concat — fused elementwise
// chains as one primitive with a post-op chain, built once per node at compile time and run in
// RLX's pool. Claims are by allow-list and by asking oneDNN whether it can build the primitive for
// the node's shapes; what it cannot run decomposes to common IR or fails to compile by name.
// oneDNN has no primitive for indexing and index generation (gather, iota, pad, select,
// reshape's copy) nor types i64 and f64 (casts from and to them): those few
// data-movement ops run the cpu device's kernels on the same host memory, and are listed as such
// in the device's description.

#include "backends/cpu/onednn_matmul.h"
#include "backends/onednn/oneapi.h"
#include "rlx/error.h"
#include "runtime/registry.h"
#include "util/strings.h"

namespace rlx::backends::onednn {

namespace {

using ir::Op;

// The cpu device's kernels the oneapi device runs for data movement oneDNN has no primitive for.
constexpr Op kBorrowed[] = {Op::reshape, Op::gather, Op::iota, Op::select, Op::pad};

const KernelTable& table() {
  static const KernelTable t = [] {
    KernelTable k{};
    for (Op op : kBorrowed) k[static_cast<size_t>(op)] = cpu::kernel_table()[static_cast<size_t>(op)];
    onednn::register_eltwise(k);
    onednn::register_region(k);
    onednn::register_norm(k);
    onednn::register_reduce(k);
    onednn::register_reorder(k);
    onednn::register_pool(k);
    onednn::register_matmul(k);
    return k;
  }();
  return t;
}

const char* isa_name(dnnl::cpu_isa isa) {
  switch (isa) {
    case dnnl::cpu_isa::sse41: return "SSE4.1";
    case dnnl::cpu_isa::avx: return "AVX";
    case dnnl::cpu_isa::avx2: return "AVX2";
    case dnnl::cpu_isa::avx2_vnni: return "AVX2-VNNI";
    case dnnl::cpu_isa::avx512_core: return "AVX-512";
    case dnnl::cpu_isa::avx512_core_vnni: return "AVX-512 VNNI";
    case dnnl::cpu_isa::avx512_core_bf16: return "AVX-512 BF16";
    case dnnl::cpu_isa::avx512_core_amx: return "AVX-512 with AMX (bf16, int8)";
    default: return "generic x86-64";
  }
}

class OneapiBackend : public runtime::Backend {
 public:
  std::string name() const override { return "oneapi"; }
  std::string description() const override {
    const dnnl_version_t* v = dnnl_version();
    std::string isa = cpu::onednn_available() ? isa_name(dnnl::get_effective_cpu_isa()) : "unavailable";
    return cat("oneDNN ", v->major, ".", v->minor, ".", v->patch, " primitives on the host CPU (", isa,
               "), post-op fusion; gather/iota/pad/select and i64/f64 casts by the cpu device's kernels");
  }
  runtime::Availability availability() const override {
    if (!cpu::onednn_available()) return {false, "oneDNN could not create its CPU engine"};
    return {};
  }
  bool claims_kernel(Op op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs& attrs) const override {
    if (op == Op::constant) return true;
    const KernelEntry& e = table()[static_cast<size_t>(op)];
    return e.claims && e.claims(op, in, out, attrs);
  }
  bool claims_op(Op op) const override { return op == Op::constant || table()[static_cast<size_t>(op)].claims != nullptr; }
  std::unique_ptr<runtime::Executable> compile(const ir::Graph& lir) override {
    if (!cpu::onednn_available()) throw Error(ErrorKind::unsupported, "the oneapi device is not available: oneDNN could not create its CPU engine");
    return runtime::make_host_executable(lir, [](const ir::Node& n, const ir::Graph& g) -> HostKernel {
      const KernelEntry& e = table()[static_cast<size_t>(n.op)];
      try {
        return e.make ? e.make(n, g) : HostKernel{};
      } catch (const dnnl::error& err) {
        throw Error(ErrorKind::unsupported, cat("oneapi: oneDNN could not build the primitive for ", ir::op_keyword(n.op), " (", n.name, "): ", err.what()));
      }
    });
  }
};

}  // namespace

void register_backend() { runtime::register_backend(std::make_unique<OneapiBackend>()); }

}  // namespace rlx::backends::onednn
