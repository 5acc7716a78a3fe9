#include "passes/autodiff.h"

#include "ir/verify.h"
#include "ops/rules.h"
#include "ops/vjp_util.h"
#include "passes/rewrite.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::passes {

namespace {

// Values that carry gradients: real floats and complex numbers (∂L/∂re + i·∂L/∂im).
bool differentiable_dtype(DType d) { return is_float(d) || is_complex(d); }

// HIR ops without their own rule become MIR (whose ops all have one).
ir::Graph decompose_for_autodiff(const ir::Graph& g) {
  Rule rule{"decompose-for-autodiff",
            [](RewriteBuilder& b, Op op, const std::vector<ValueId>& in, const Attrs& attrs) -> std::optional<std::vector<ValueId>> {
              const ops::OpRule& r = ops::op_rule(op);
              if (r.vjp || r.no_gradient || !r.decompose) return std::nullopt;
              std::string name = b.context_name(), origin = b.context_origin();
              b.set_context(name, origin.empty() ? ir::op_keyword(op) : origin);
              auto out = r.decompose(b, in, attrs);
              b.set_context(name, origin);
              return out;
            }};
  return rewrite(g, {rule}, "decompose-for-autodiff");
}

}  // namespace

ir::Graph value_and_grad(const ir::Graph& original, size_t loss, const std::vector<ValueId>& wrt) {
  if (loss >= original.outputs().size())
    throw Error(ErrorKind::invalid_argument, cat("autodiff: graph @", original.name, " has ", original.outputs().size(), " outputs; loss index ", loss, " is out of range"));
  const ir::Type& lt = original.type(original.outputs()[loss]);
  if (!is_float(lt.dtype) || !lt.shape.empty())
    throw Error(ErrorKind::invalid_argument, cat("autodiff: the loss must be a float scalar, got ", ir::type_str(lt)));
  for (ValueId v : wrt) {
    if (original.value(v).node >= 0) throw Error(ErrorKind::invalid_argument, "autodiff: gradients are taken with respect to graph inputs only");
    if (!differentiable_dtype(original.type(v).dtype))
      throw Error(ErrorKind::invalid_argument, cat("autodiff: input '", original.value(v).name, "' is ", dtype_name(original.type(v).dtype), "; only float and complex inputs have gradients"));
  }
  ir::Graph g = decompose_for_autodiff(original);
  // Which values depend on a wrt input through float values.
  std::vector<bool> needs(g.num_values(), false);
  for (ValueId v : wrt) needs[static_cast<size_t>(g.inputs()[static_cast<size_t>(original.value(v).index)])] = true;
  for (const auto& n : g.nodes()) {
    bool any = false;
    for (ValueId v : n.inputs) any = any || needs[static_cast<size_t>(v)];
    for (ValueId v : n.outputs) needs[static_cast<size_t>(v)] = any && differentiable_dtype(g.type(v).dtype);
  }

  // Forward: a copy of the graph. Backward: appended below, node by node in reverse.
  ir::Graph out;
  out.name = g.name;
  std::vector<ValueId> map(g.num_values(), ir::kNoValue);
  for (ValueId v : g.inputs()) map[static_cast<size_t>(v)] = out.add_input(g.type(v), g.value(v).name);
  ops::Builder b(out);
  for (const auto& n : g.nodes()) {
    std::vector<ValueId> in;
    for (ValueId v : n.inputs) in.push_back(map[static_cast<size_t>(v)]);
    b.set_context(n.name, n.origin);
    auto outs = b.emit(n.op, in, n.attrs);
    for (size_t k = 0; k < outs.size(); ++k) {
      map[static_cast<size_t>(n.outputs[k])] = outs[k];
      if (!g.value(n.outputs[k]).name.empty()) out.value(outs[k]).name = g.value(n.outputs[k]).name;
    }
  }
  std::vector<ValueId> cot(g.num_values(), ir::kNoValue);
  ValueId loss_v = g.outputs()[loss];
  cot[static_cast<size_t>(loss_v)] = b.scalar(lt.dtype, 1.0);
  for (int i = g.num_nodes() - 1; i >= 0; --i) {
    const ir::Node& n = g.node(i);
    bool reached = false;
    for (ValueId v : n.outputs) reached = reached || (cot[static_cast<size_t>(v)] != ir::kNoValue && needs[static_cast<size_t>(v)]);
    if (!reached) continue;
    bool input_needs = false;
    for (ValueId v : n.inputs) input_needs = input_needs || needs[static_cast<size_t>(v)];
    if (!input_needs) continue;
    const ops::OpRule& rule = ops::op_rule(n.op);
    if (rule.no_gradient) continue;
    if (!rule.vjp)
      throw Error(ErrorKind::unsupported, cat("autodiff: ", ir::describe_node(g, i), " is not differentiable (no gradient rule), but the loss depends on it"));
    std::vector<ValueId> in, outs, cots;
    for (ValueId v : n.inputs) in.push_back(map[static_cast<size_t>(v)]);
    for (ValueId v : n.outputs) {
      outs.push_back(map[static_cast<size_t>(v)]);
      ValueId c = cot[static_cast<size_t>(v)];
      // a multi-output op whose other outputs get no cotangent: they contribute zero
      cots.push_back(c != ir::kNoValue ? c : ops::zeros_like(b, map[static_cast<size_t>(v)]));
    }
    b.set_context(n.name, "vjp " + ir::op_keyword(n.op));
    std::vector<ValueId> grads = rule.vjp(b, ops::VjpArgs{in, outs, cots, n.attrs});
    for (size_t k = 0; k < n.inputs.size() && k < grads.size(); ++k) {
      ValueId src = n.inputs[k];
      if (grads[k] == ir::kNoValue || !needs[static_cast<size_t>(src)]) continue;
      ValueId& acc = cot[static_cast<size_t>(src)];
      acc = acc == ir::kNoValue ? grads[k] : b.add(acc, grads[k]);
    }
  }
  std::vector<ValueId> results;
  for (ValueId v : g.outputs()) results.push_back(map[static_cast<size_t>(v)]);
  for (ValueId v : wrt) {
    ValueId in = g.inputs()[static_cast<size_t>(original.value(v).index)];
    ValueId c = cot[static_cast<size_t>(in)];
    ValueId grad = c != ir::kNoValue ? c : ops::zeros_like(b, map[static_cast<size_t>(in)]);
    results.push_back(grad);
    const std::string& name = original.value(v).name;
    if (!name.empty() && out.value(grad).name.empty()) out.value(grad).name = "grad_" + name;
  }
  out.set_outputs(results);
  after_pass(out, "autodiff");
  return out;
}

}  // namespace rlx::passes
