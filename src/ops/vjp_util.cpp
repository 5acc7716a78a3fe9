#include "ops/vjp_util.h"

#include <unordered_map>
#include <unordered_set>

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::ops {

ValueId unbroadcast(Builder& b, ValueId grad, const Shape& target) {
  Shape gs = b.shape(grad);
  if (gs == target) return grad;
  size_t lead = gs.size() - target.size();
  Ints axes;
  for (size_t i = 0; i < gs.size(); ++i)
    if (i < lead || (target[i - lead] == Dim(1) && gs[i] != Dim(1))) axes.push_back(static_cast<int64_t>(i));
  ValueId r = axes.empty() ? grad : b.reduce(grad, "sum", axes, true);
  return b.reshape(r, target);
}

ValueId zeros_like(Builder& b, ValueId like) { return b.broadcast(b.scalar_like(like, 0.0), b.shape(like)); }

ValueId conj_if_complex(Builder& b, ValueId v) { return is_complex(b.dtype(v)) ? b.unary(Op::conj, v) : v; }

Ints invert_perm(const Ints& perm) {
  Ints inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inv[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  return inv;
}

namespace {

// A builder that emits through another and remembers every node it asked for, in order (the
// other may be a rewrite that expands or reuses them; the record keeps what was meant).
class Tape : public Builder {
 public:
  struct Step {
    Op op;
    std::vector<ValueId> in, out;
    Attrs attrs;
  };
  explicit Tape(Builder& inner) : Builder(inner.graph()), inner_(inner) { set_context(inner.context_name(), inner.context_origin()); }
  std::vector<ValueId> emit(Op op, std::vector<ValueId> inputs, Attrs attrs) override {
    std::vector<ValueId> out = inner_.emit(op, inputs, attrs);
    steps.push_back({op, std::move(inputs), out, std::move(attrs)});
    return out;
  }
  std::vector<Step> steps;

 private:
  Builder& inner_;
};

bool carries_gradient(DType d) { return is_float(d) || is_complex(d); }

}  // namespace

std::vector<ValueId> vjp_of_decomposition(Builder& b, Op op, const std::vector<ValueId>& in, const std::vector<ValueId>& cot, const Attrs& attrs) {
  const OpRule& rule = op_rule(op);
  if (!rule.decompose) throw Error(ErrorKind::internal, cat("vjp_of_decomposition: ", ir::op_keyword(op), " has no decomposition"));
  Tape tape(b);
  std::vector<ValueId> outs = rule.decompose(tape, in, attrs);
  // Which values depend on an input through values that carry gradients.
  std::unordered_set<ValueId> needs;
  for (ValueId v : in)
    if (carries_gradient(b.dtype(v))) needs.insert(v);
  for (const auto& s : tape.steps) {
    bool any = false;
    for (ValueId v : s.in) any = any || needs.count(v);
    if (any)
      for (ValueId v : s.out)
        if (carries_gradient(b.dtype(v))) needs.insert(v);
  }
  std::unordered_map<ValueId, ValueId> grad;
  auto accumulate = [&](ValueId v, ValueId g) {
    auto [it, fresh] = grad.emplace(v, g);
    if (!fresh) it->second = b.add(it->second, g);
  };
  for (size_t k = 0; k < outs.size() && k < cot.size(); ++k)
    if (cot[k] != ir::kNoValue) accumulate(outs[k], cot[k]);
  // Backwards over the steps; a value the inner builder handed out twice is walked once.
  std::unordered_set<ValueId> walked;
  for (auto s = tape.steps.rbegin(); s != tape.steps.rend(); ++s) {
    bool reached = false, fresh = true;
    for (ValueId v : s->out) {
      reached = reached || (needs.count(v) && grad.count(v));
      fresh = fresh && !walked.count(v);
    }
    bool input_needs = false;
    for (ValueId v : s->in) input_needs = input_needs || needs.count(v);
    if (!reached || !fresh || !input_needs) continue;
    walked.insert(s->out.begin(), s->out.end());
    const OpRule& r = op_rule(s->op);
    if (r.no_gradient) continue;
    if (!r.vjp)
      throw Error(ErrorKind::unsupported, cat("the gradient of ", ir::op_keyword(op), "'s decomposition: ", ir::op_keyword(s->op), " has no gradient rule"));
    std::vector<ValueId> cots;
    for (ValueId v : s->out) cots.push_back(grad.count(v) ? grad[v] : zeros_like(b, v));
    std::vector<ValueId> g = r.vjp(b, VjpArgs{s->in, s->out, cots, s->attrs});
    for (size_t k = 0; k < s->in.size() && k < g.size(); ++k)
      if (g[k] != ir::kNoValue && needs.count(s->in[k])) accumulate(s->in[k], g[k]);
  }
  std::vector<ValueId> result;
  for (ValueId v : in) result.push_back(!carries_gradient(b.dtype(v)) ? ir::kNoValue : grad.count(v) ? grad[v] : zeros_like(b, v));
  return result;
}

}  // namespace rlx::ops
