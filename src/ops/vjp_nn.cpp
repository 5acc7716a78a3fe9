// Reverse-mode rules of the HIR ops that have a better gradient than their decomposition's
// (fewer nodes, no recomputed reductions). HIR ops without a rule here are decomposed first.
#include <cmath>

#include "ops/infer_util.h"
#include "ops/vjp_util.h"

namespace rlx::ops {

namespace {

using V = std::vector<ValueId>;
constexpr ValueId kNone = ir::kNoValue;

// linear(x[..., in], w[out, in], b[out]): dx = g·w, dw = gᵀ·x over all leading dims, db = Σ g.
V linear(Builder& b, const VjpArgs& a) {
  ValueId x = a.in[0], w = a.in[1], g = a.cot[0];
  int64_t r = static_cast<int64_t>(b.rank(x));
  Ints lead;
  for (int64_t i = 0; i + 1 < r; ++i) lead.push_back(i);
  V out = {b.dot_general(g, w, {{}, {}}, {{r - 1}, {0}}), b.dot_general(g, x, {{}, {}}, {lead, lead})};
  if (a.in.size() == 3) out.push_back(lead.empty() ? g : b.reduce(g, "sum", lead, false));
  return out;
}

V relu(Builder& b, const VjpArgs& a) {
  ValueId zero = b.scalar_like(a.in[0], 0.0);
  return {b.select(b.binary(Op::gt, a.in[0], zero), a.cot[0], b.scalar_like(a.cot[0], 0.0))};
}

// d/dx x·Φ(x) = Φ(x) + x·φ(x)
V gelu(Builder& b, const VjpArgs& a) {
  ValueId x = a.in[0];
  ValueId cdf = b.mul(b.add(b.unary(Op::erf, b.mul(x, b.scalar_like(x, M_SQRT1_2))), b.scalar_like(x, 1.0)), b.scalar_like(x, 0.5));
  ValueId pdf = b.mul(b.unary(Op::exp, b.mul(b.mul(x, x), b.scalar_like(x, -0.5))), b.scalar_like(x, 1.0 / std::sqrt(2 * M_PI)));
  return {b.mul(a.cot[0], b.add(cdf, b.mul(x, pdf)))};
}

// d/dx x·σ(x) = σ(x)·(1 + x·(1 − σ(x)))
V silu(Builder& b, const VjpArgs& a) {
  ValueId x = a.in[0];
  ValueId s = b.unary(Op::sigmoid, x);
  ValueId d = b.mul(s, b.add(b.scalar_like(x, 1.0), b.mul(x, b.sub(b.scalar_like(x, 1.0), s))));
  return {b.mul(a.cot[0], d)};
}

V softmax(Builder& b, const VjpArgs& a) {
  ValueId y = a.out[0], g = a.cot[0];
  int64_t axis = normalize_axis(Op::softmax, a.attrs.i("axis"), b.rank(y));
  ValueId dot = b.reduce(b.mul(g, y), "sum", {axis}, true);
  return {b.mul(y, b.sub(g, dot))};
}

V log_softmax(Builder& b, const VjpArgs& a) {
  ValueId y = a.out[0], g = a.cot[0];
  int64_t axis = normalize_axis(Op::log_softmax, a.attrs.i("axis"), b.rank(y));
  ValueId total = b.reduce(g, "sum", {axis}, true);
  return {b.sub(g, b.mul(b.unary(Op::exp, y), total))};
}

// softmax cross-entropy: dlogits = (softmax(logits) − onehot(labels)) · g, with ignored labels
// giving 0 and mean reduction dividing by the number of counted labels.
V cross_entropy(Builder& b, const VjpArgs& a) {
  ValueId logits = a.in[0], g = a.cot[0];
  DType d = b.dtype(logits);
  ValueId p = b.emit1(Op::softmax, {logits}, Attrs{{"axis", int64_t{1}}});
  Shape ls = b.shape(logits);
  ValueId labels = b.cast(a.in[1], DType::i64);
  Shape lab1 = b.shape(labels);
  lab1.insert(lab1.begin() + 1, Dim(1));
  ValueId labels1 = b.reshape(labels, lab1);
  ValueId onehot = b.cast(b.binary(Op::eq, b.iota(ls, DType::i64, 1), labels1), d);
  ValueId valid = b.binary(Op::ne, labels1, b.scalar(DType::i64, static_cast<double>(a.attrs.i("ignore_index"))));
  ValueId diff = b.select(valid, b.sub(p, onehot), b.scalar(d, 0.0));
  const std::string& red = a.attrs.s("reduction");
  if (red == "none") return {b.mul(diff, b.reshape(g, lab1)), kNone};
  ValueId scale = g;
  if (red == "mean") {
    Ints all;
    for (size_t i = 0; i < b.rank(labels); ++i) all.push_back(static_cast<int64_t>(i));
    ValueId count = b.reduce(b.cast(b.binary(Op::ne, labels, b.scalar(DType::i64, static_cast<double>(a.attrs.i("ignore_index")))), d), "sum", all, false);
    scale = b.div(g, count);
  }
  return {b.mul(diff, scale), kNone};
}

V embedding(Builder& b, const VjpArgs& a) {
  ValueId zeros = zeros_like(b, a.in[0]);
  return {b.emit1(Op::scatter, {zeros, a.in[1], a.cot[0]}, Attrs{{"axis", int64_t{0}}, {"reduce", std::string("add")}}), kNone};
}

}  // namespace

void register_vjp_nn(RuleTable& t) {
  auto set = [&](Op op, VjpFn f) { t[static_cast<size_t>(op)].vjp = f; };
  set(Op::linear, linear);
  set(Op::relu, relu);
  set(Op::gelu, gelu);
  set(Op::silu, silu);
  set(Op::softmax, softmax);
  set(Op::log_softmax, log_softmax);
  set(Op::cross_entropy, cross_entropy);
  set(Op::embedding, embedding);
}

}  // namespace rlx::ops
