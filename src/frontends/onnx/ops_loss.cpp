// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (class weights, ignore_index,
// reductions none/sum/mean) over [N, C, d…] inputs.
#include "frontends/onnx/ops_util.h"
#include "rlx/error.h"

namespace rlx::frontends::onnx {

namespace {

// loss[n, d…] = −logp[n, t, d…]·w[t], 0 where t = ignore_index; then the reduction.
ValueId nll(NodeCtx& c, ValueId logp, ValueId target, ValueId weight) {
  FoldingBuilder& b = c.b;
  DType d = b.dtype(logp);
  Shape ls = b.shape(logp);
  ValueId t = b.cast(target, DType::i64);
  ValueId valid = b.broadcast(b.scalar(DType::boolean, 1), b.shape(t));
  if (c.has_attr("ignore_index")) valid = b.binary(Op::ne, t, b.scalar(DType::i64, static_cast<double>(c.attr_i("ignore_index", 0))));
  ValueId safe_t = b.select(valid, t, b.scalar(DType::i64, 0));
  ValueId hot = b.binary(Op::eq, b.iota(ls, DType::i64, 1), insert_axes(b, safe_t, {1}));
  ValueId picked = b.reduce(b.select(hot, logp, like(b, logp, 0.0)), "sum", {1}, false);
  ValueId w = weight != kNoValue ? b.gather(weight, safe_t, 0) : full(b, d, b.shape(t), 1.0);
  w = b.select(valid, w, like(b, w, 0.0));
  ValueId loss = b.mul(b.unary(Op::neg, picked), w);
  std::string red = c.attr_s("reduction", "mean");
  if (red == "none") return loss;
  Ints all = iota_ints(static_cast<int64_t>(b.rank(loss)));
  ValueId total = b.reduce(loss, "sum", all, false);
  if (red == "sum") return total;
  if (red != "mean") c.invalid(cat("reduction '", red, "'"));
  return b.div(total, b.reduce(w, "sum", all, false));
}

std::vector<ValueId> nll_loss(NodeCtx& c) { return {nll(c, c.in(0), c.in(1), c.has(2) ? c.in(2) : kNoValue)}; }

std::vector<ValueId> softmax_ce(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId logp = b.emit1(Op::log_softmax, {c.in(0)}, Attrs{{"axis", int64_t{1}}});
  std::vector<ValueId> out = {nll(c, logp, c.in(1), c.has(2) ? c.in(2) : kNoValue)};
  if (c.wants(1)) out.push_back(logp);
  return out;
}

}  // namespace

void register_loss(OpTable& t) {
  t.insert(t.end(), {
                        {"", "NegativeLogLikelihoodLoss", 12, nll_loss},
                        {"", "SoftmaxCrossEntropyLoss", 12, softmax_ce},
                    });
}

}  // namespace rlx::frontends::onnx
