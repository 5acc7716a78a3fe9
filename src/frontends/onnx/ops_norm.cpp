// Normalizations: BatchNormalization (inference and training mode), InstanceNormalization,
// LayerNormalization (with its Mean/InvStdDev outputs), LRN, MeanVarianceNormalization,
// GroupNormalization.
#include "frontends/onnx/ops_util.h"
#include "rlx/error.h"

namespace rlx::frontends::onnx {

namespace {

std::vector<ValueId> one(ValueId v) { return {v}; }

// [C] → [1, C, 1, …] for an input of rank r.
ValueId per_channel(FoldingBuilder& b, ValueId v, size_t r) {
  Shape s(r, Dim(1));
  s[1] = shape_numel(b.shape(v));
  return b.reshape(v, s);
}

ValueId mean_over(FoldingBuilder& b, ValueId x, const Ints& axes) {
  Shape s = b.shape(x);
  Dim n(1);
  for (int64_t a : axes) n = n * s[static_cast<size_t>(a)];
  return b.div(b.reduce(x, "sum", axes, true), b.cast(dim_value(b, n), b.dtype(x)));
}

std::vector<ValueId> batch_norm(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0), scale = c.in(1), bias = c.in(2), mean = c.in(3), var = c.in(4);
  c.require_rank(x, 2, 8, "the input");
  size_t r = b.rank(x);
  double eps = c.attr_f("epsilon", 1e-5f), mom = c.attr_f("momentum", 0.9f);
  bool training = c.opset >= 14 ? c.attr_i("training_mode", 0) != 0 : (c.opset < 9 ? false : c.num_outputs() > 1 && c.wants(1));
  if (c.opset < 7 && c.attr_i("is_test", 1) == 0) training = true;
  if (c.opset < 9 && c.attr_i("spatial", 1) == 0) c.fail("spatial=0 (per-activation statistics)");
  std::vector<ValueId> outs;
  ValueId m = per_channel(b, mean, r), v = per_channel(b, var, r);
  ValueId cur_mean = kNoValue, cur_var = kNoValue;
  if (training) {
    Ints axes = {0};
    for (size_t i = 2; i < r; ++i) axes.push_back(static_cast<int64_t>(i));
    m = mean_over(b, x, axes);
    ValueId d = b.sub(x, m);
    v = mean_over(b, b.mul(d, d), axes);
    cur_mean = b.reshape(m, b.shape(mean));
    cur_var = b.reshape(v, b.shape(var));
  }
  ValueId inv = b.unary(Op::rsqrt, b.add(v, like(b, v, eps)));
  ValueId y = b.add(b.mul(b.mul(b.sub(x, m), inv), per_channel(b, scale, r)), per_channel(b, bias, r));
  outs.push_back(y);
  if (training) {
    outs.push_back(b.add(b.mul(mean, like(b, mean, mom)), b.mul(cur_mean, like(b, mean, 1 - mom))));
    outs.push_back(b.add(b.mul(var, like(b, var, mom)), b.mul(cur_var, like(b, var, 1 - mom))));
    if (c.wants(3)) outs.push_back(cur_mean);
    if (c.wants(4)) outs.push_back(b.unary(Op::rsqrt, b.add(cur_var, like(b, var, eps))));
  }
  return outs;
}

std::vector<ValueId> instance_norm(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0);
  c.require_rank(x, 3, 8, "the input");
  size_t r = b.rank(x);
  Ints axes = iota_ints(static_cast<int64_t>(r), 2);
  ValueId m = mean_over(b, x, axes);
  ValueId d = b.sub(x, m);
  ValueId v = mean_over(b, b.mul(d, d), axes);
  ValueId y = b.mul(d, b.unary(Op::rsqrt, b.add(v, like(b, v, c.attr_f("epsilon", 1e-5f)))));
  return one(b.add(b.mul(y, per_channel(b, c.in(1), r)), per_channel(b, c.in(2), r)));
}

std::vector<ValueId> layer_norm(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0);
  int64_t r = c.rank(x);
  int64_t axis = c.axis(c.attr_i("axis", -1), r);
  double eps = c.attr_f("epsilon", 1e-5f);
  Shape s = c.shape(x);
  Shape tail(s.begin() + axis, s.end());
  bool exact = (!c.has(1) || c.shape(c.in(1)) == tail) && (!c.has(2) || c.shape(c.in(2)) == tail) && shape_is_static(tail);
  if (exact && !c.wants(1) && !c.wants(2) && is_float(c.dtype(x))) {
    std::vector<ValueId> in = {x};
    if (c.has(1)) in.push_back(c.in(1));
    if (c.has(2)) in.push_back(c.in(2));
    return one(b.emit1(Op::layer_norm, in, Attrs{{"axis", axis}, {"eps", eps}}));
  }
  // Statistics in f32 at least (stash_type=1), then the affine part in the input type.
  DType d = c.dtype(x);
  DType cd = (d == DType::f16 || d == DType::bf16) ? DType::f32 : d;
  ValueId xc = b.cast(x, cd);
  Ints axes = iota_ints(r, axis);
  ValueId m = mean_over(b, xc, axes);
  ValueId diff = b.sub(xc, m);
  ValueId var = mean_over(b, b.mul(diff, diff), axes);
  ValueId inv = b.unary(Op::rsqrt, b.add(var, like(b, var, eps)));
  ValueId y = b.cast(b.mul(diff, inv), d);
  if (c.has(1)) y = b.mul(y, c.in(1));
  if (c.has(2)) y = b.add(y, c.in(2));
  std::vector<ValueId> outs = {y};
  if (c.wants(1) || c.wants(2)) outs.push_back(m);
  if (c.wants(2)) outs.push_back(inv);
  return outs;
}

std::vector<ValueId> group_norm(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0);
  c.require_rank(x, 3, 8, "the input");
  auto xs = c.static_shape(x, "the input");
  int64_t groups = c.attr_i("num_groups", 1);
  int64_t n = xs[0], ch = xs[1];
  if (groups <= 0 || ch % groups) c.invalid(cat("num_groups ", groups, " does not divide ", ch, " channels"));
  int64_t rest = 1;
  for (size_t i = 2; i < xs.size(); ++i) rest *= xs[i];
  ValueId g = reshape_to(b, x, {n, groups, ch / groups * rest});
  ValueId m = mean_over(b, g, {2});
  ValueId d = b.sub(g, m);
  ValueId v = mean_over(b, b.mul(d, d), {2});
  ValueId y = b.mul(d, b.unary(Op::rsqrt, b.add(v, like(b, v, c.attr_f("epsilon", 1e-5f)))));
  y = reshape_to(b, y, xs);
  ValueId scale = c.in(1), bias = c.in(2);
  size_t r = xs.size();
  if (shape_numel(c.shape(scale)) == Dim(groups) && groups != ch) {  // opset 18: per-group affine
    std::vector<int64_t> rs = {groups, 1};
    scale = reshape_to(b, b.broadcast(reshape_to(b, scale, rs), {Dim(groups), Dim(ch / groups)}), {ch});
    bias = reshape_to(b, b.broadcast(reshape_to(b, bias, rs), {Dim(groups), Dim(ch / groups)}), {ch});
  }
  return one(b.add(b.mul(y, per_channel(b, scale, r)), per_channel(b, bias, r)));
}

// y = x / (bias + alpha/size · Σ x² over a window of `size` channels)^beta
std::vector<ValueId> lrn(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0);
  c.require_rank(x, 3, 8, "the input");
  int64_t size = c.attr_i("size", 1);
  if (size <= 0 || size > 1024) c.invalid(cat("size ", size, " must be in [1, 1024]"));
  double alpha = c.attr_f("alpha", 1e-4f), beta = c.attr_f("beta", 0.75f), bias = c.attr_f("bias", 1.0f);
  size_t r = b.rank(x);
  Ints lo(r, 0), hi(r, 0);
  lo[1] = (size - 1) / 2;
  hi[1] = size / 2;
  ValueId sq = b.emit1(Op::pad, {b.mul(x, x)}, Attrs{{"lo", lo}, {"hi", hi}, {"value", 0.0}});
  Dim ch = c.shape(x)[1];
  ValueId sum = kNoValue;
  for (int64_t k = 0; k < size; ++k) {
    ValueId w = b.slice_axis(sq, 1, Dim(k), Dim(k) + ch);
    sum = sum == kNoValue ? w : b.add(sum, w);
  }
  ValueId den = b.binary(Op::pow, b.add(b.mul(sum, like(b, x, alpha / static_cast<double>(size))), like(b, x, bias)), like(b, x, beta));
  return one(b.div(x, den));
}

std::vector<ValueId> mvn(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0);
  Ints axes = c.attr_ints("axes", {0, 2, 3});
  for (auto& a : axes) a = c.axis(a, c.rank(x));
  ValueId m = mean_over(b, x, axes);
  ValueId ex2 = mean_over(b, b.mul(x, x), axes);
  ValueId sd = b.unary(Op::sqrt, b.sub(ex2, b.mul(m, m)));
  return one(b.div(b.sub(x, m), b.add(sd, like(b, x, 1e-9))));
}

}  // namespace

void register_norm(OpTable& t) {
  t.insert(t.end(), {
                        {"", "BatchNormalization", 1, batch_norm},
                        {"", "InstanceNormalization", 1, instance_norm},
                        {"", "LayerNormalization", 1, layer_norm},  // ONNX Runtime accepts it before 17 too
                        {"", "GroupNormalization", 18, group_norm},
                        {"", "LRN", 1, lrn},
                        {"", "MeanVarianceNormalization", 9, mvn},
                    });
}

}  // namespace rlx::frontends::onnx
