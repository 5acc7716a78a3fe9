#include "ops/rules.h"

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::ops {

namespace {
const RuleTable& table() {
  static const RuleTable t = [] {
    RuleTable r(ir::kNumOps);
    register_elementwise(r);
    register_reduce(r);
    register_linalg(r);
    register_movement(r);
    register_nn(r);
    register_attention(r);
    register_conv_pool(r);
    register_region(r);
    register_quant(r);
    register_quant_linear(r);
    register_experts(r);
    register_collective(r);
    register_factorize(r);
    register_sparse(r);
    register_complex(r);
    register_fft(r);
    register_eig(r);
    register_splat(r);
    register_vjp_elementwise(r);
    register_vjp_structural(r);
    register_vjp_nn(r);
    for (int i = 0; i < ir::kNumOps; ++i) {
      Op op = static_cast<Op>(i);
      if (!r[i].infer) throw Error(ErrorKind::internal, cat(ir::op_keyword(op), " has no type inference rule"));
      if (ir::op_info(op).level == ir::Level::HIR && !r[i].decompose)
        throw Error(ErrorKind::internal, cat(ir::op_keyword(op), " is an HIR op without a decomposition"));
    }
    return r;
  }();
  return t;
}
}  // namespace

const OpRule& op_rule(Op op) { return table()[static_cast<size_t>(op)]; }

std::vector<Type> infer_types(Op op, const std::vector<Type>& in, const Attrs& attrs) {
  return op_rule(op).infer(op, in, attrs);
}

}  // namespace rlx::ops
