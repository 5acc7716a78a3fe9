// The reference device: claims every op and dtype the IR defines; runs them naively.
#include <map>

#include "backends/reference/kernels.h"
#include "ops/builder.h"
#include "ops/rules.h"
#include "rlx/error.h"
#include "runtime/registry.h"
#include "util/strings.h"

namespace rlx::backends::reference {

const KernelTable& kernels() {
  static const KernelTable t = [] {
    KernelTable k{};
    register_elementwise(k);
    register_reduce(k);
    register_linalg(k);
    register_movement(k);
    register_nn(k);
    register_quant(k);
    register_collective(k);
    register_factorize(k);
    register_sparse(k);
    register_complex(k);
    register_fft(k);
    register_eig(k);
    register_splat(k);
    return k;
  }();
  return t;
}

namespace {

class ReferenceBackend : public runtime::Backend {
 public:
  std::string name() const override { return "reference"; }
  std::string description() const override { return "naive loops with f64 accumulation: the definition of every op (oracle)"; }
  bool claims_kernel(ir::Op op, const std::vector<ir::Type>&, const std::vector<ir::Type>&, const ir::Attrs&) const override {
    return claims_op(op);
  }
  bool claims_op(ir::Op op) const override { return op == ir::Op::constant || kernels()[static_cast<size_t>(op)] != nullptr; }
  // The definition of every variant it has a kernel for.
  bool implements_variant(ir::Op op, const std::string&) const override { return claims_op(op); }

  std::unique_ptr<runtime::Executable> compile(const ir::Graph& lir) override {
    return runtime::make_host_executable(lir, [](const ir::Node& n, const ir::Graph&) -> runtime::HostKernel {
      Kernel k = kernels()[static_cast<size_t>(n.op)];
      if (!k) return {};
      return [k](const KernelArgs& a) { k(a); };
    });
  }

  passes::NodeEvaluator evaluator() const override {
    return evaluate_node;
  }

  // One node on host tensors: a reference kernel for MIR ops; an op with no kernel (HIR: the
  // importer folds a DequantizeLinear of constant weights) through its decomposition, node by node.
  static std::vector<Tensor> evaluate_node(ir::Op op, const ir::Attrs& attrs, const std::vector<Tensor>& in, const std::vector<ir::Type>& out_types) {
    if (op != ir::Op::constant && !kernels()[static_cast<size_t>(op)]) {
      if (!ops::has_decomposition(op))
        throw Error(ErrorKind::internal, cat("the reference backend has neither a kernel nor a decomposition for ", ir::op_keyword(op)));
      ir::Graph g;
      ops::Builder b(g);
      std::vector<ir::ValueId> args;
      for (const Tensor& t : in) args.push_back(b.constant(t));
      std::vector<ir::ValueId> outs = ops::op_rule(op).decompose(b, args, attrs);
      std::map<ir::ValueId, Tensor> value;
      for (const ir::Node& n : g.nodes()) {
        std::vector<Tensor> nin;
        std::vector<ir::Type> ntypes;
        for (ir::ValueId v : n.inputs) nin.push_back(value.at(v));
        for (ir::ValueId v : n.outputs) ntypes.push_back(g.type(v));
        std::vector<Tensor> r = evaluate_node(n.op, n.attrs, nin, ntypes);
        for (size_t i = 0; i < n.outputs.size(); ++i) value[n.outputs[i]] = r[i];
      }
      std::vector<Tensor> result;
      for (size_t i = 0; i < outs.size(); ++i) result.push_back(value.at(outs[i]));
      (void)out_types;
      return result;
    }
    {
      ir::Node node;
      node.op = op;
      node.attrs = attrs;
      std::vector<HostView> iv, ov;
      std::vector<Tensor> keep, outs;
      for (const Tensor& t : in) {
        Tensor c = t.contiguous();
        keep.push_back(c);
        iv.push_back({c.data(), c.dtype(), c.shape(), c.numel()});
      }
      for (const auto& t : out_types) {
        Tensor o = Tensor::zeros(t.dtype, shape_values(t.shape));
        outs.push_back(o);
        ov.push_back({o.data(), o.dtype(), o.shape(), o.numel()});
      }
      if (op == ir::Op::constant) return std::vector<Tensor>{attrs.tensor("value")};
      kernels()[static_cast<size_t>(op)](KernelArgs{node, iv, ov});
      return outs;
    }
  }
};

}  // namespace

void register_backend() { runtime::register_backend(std::make_unique<ReferenceBackend>()); }

}  // namespace rlx::backends::reference
