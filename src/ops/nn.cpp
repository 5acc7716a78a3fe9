// Activations, softmax, normalization and losses (HIR) with their decompositions into MIR.
// Softmax and norms of f16/bf16 inputs compute in f32, as careful frameworks do.
#include <cmath>

#include "ops/builder.h"
#include "ops/infer_util.h"
#include "ops/rules.h"

namespace rlx::ops {

namespace {

using ir::Type;

bool is_half(DType d) { return d == DType::f16 || d == DType::bf16; }
DType compute_dtype(DType d) { return is_half(d) ? DType::f32 : d; }

std::vector<Type> infer_float_unary(Op op, const std::vector<Type>& in, const Attrs&) {
  require_dtype(op, in[0], is_float(in[0].dtype), "a float type");
  return {in[0]};
}

std::vector<Type> infer_relu(Op op, const std::vector<Type>& in, const Attrs&) {
  require_dtype(op, in[0], is_numeric(in[0].dtype) && !is_complex(in[0].dtype), "real numeric");
  return {in[0]};
}

std::vector<Type> infer_axis_float(Op op, const std::vector<Type>& in, const Attrs& a) {
  require_dtype(op, in[0], is_float(in[0].dtype), "a float type");
  normalize_axis(op, a.i("axis"), in[0].shape.size());
  return {in[0]};
}

// 0.5·x·(1 + erf(x/√2))
std::vector<ValueId> decompose_gelu(Builder& b, const std::vector<ValueId>& in, const Attrs&) {
  ValueId x = in[0];
  ValueId t = b.unary(Op::erf, b.mul(x, b.scalar_like(x, M_SQRT1_2)));
  ValueId one_plus = b.add(t, b.scalar_like(x, 1.0));
  return {b.mul(b.mul(x, b.scalar_like(x, 0.5)), one_plus)};
}

// 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))
std::vector<ValueId> decompose_gelu_tanh(Builder& b, const std::vector<ValueId>& in, const Attrs&) {
  ValueId x = in[0];
  ValueId x3 = b.mul(b.mul(x, x), x);
  ValueId inner = b.add(x, b.mul(x3, b.scalar_like(x, 0.044715)));
  ValueId t = b.unary(Op::tanh, b.mul(inner, b.scalar_like(x, std::sqrt(2.0 / M_PI))));
  return {b.mul(b.mul(x, b.scalar_like(x, 0.5)), b.add(t, b.scalar_like(x, 1.0)))};
}

std::vector<ValueId> decompose_silu(Builder& b, const std::vector<ValueId>& in, const Attrs&) {
  return {b.mul(in[0], b.unary(Op::sigmoid, in[0]))};
}

std::vector<ValueId> decompose_relu(Builder& b, const std::vector<ValueId>& in, const Attrs&) {
  return {b.max(in[0], b.scalar_like(in[0], 0.0))};
}

std::vector<ValueId> decompose_softmax(Builder& b, const std::vector<ValueId>& in, const Attrs& a) {
  DType d = b.dtype(in[0]);
  ValueId x = b.cast(in[0], compute_dtype(d));
  int64_t axis = normalize_axis(Op::softmax, a.i("axis"), b.rank(x));
  ValueId m = b.reduce(x, "max", {axis}, true);
  ValueId e = b.unary(Op::exp, b.sub(x, m));
  ValueId s = b.reduce(e, "sum", {axis}, true);
  return {b.cast(b.div(e, s), d)};
}

std::vector<ValueId> decompose_log_softmax(Builder& b, const std::vector<ValueId>& in, const Attrs& a) {
  DType d = b.dtype(in[0]);
  ValueId x = b.cast(in[0], compute_dtype(d));
  int64_t axis = normalize_axis(Op::log_softmax, a.i("axis"), b.rank(x));
  ValueId m = b.reduce(x, "max", {axis}, true);
  ValueId shifted = b.sub(x, m);
  ValueId lse = b.unary(Op::log, b.reduce(b.unary(Op::exp, shifted), "sum", {axis}, true));
  return {b.cast(b.sub(shifted, lse), d)};
}

// Normalized dims [axis, rank) and their static element count.
Ints norm_axes(Op op, const Shape& s, int64_t axis_attr, int64_t& count) {
  int64_t axis = normalize_axis(op, axis_attr, s.size());
  Ints axes;
  count = 1;
  for (size_t i = static_cast<size_t>(axis); i < s.size(); ++i) {
    auto v = s[i].try_value();
    if (!v) type_error(op, cat("normalized dim ", i, " (", s[i].str(), ") must be static"));
    count *= *v;
    axes.push_back(static_cast<int64_t>(i));
  }
  return axes;
}

std::vector<Type> infer_norm(Op op, const std::vector<Type>& in, const Attrs& a) {
  require_dtype(op, in[0], is_float(in[0].dtype), "a float type");
  int64_t count = 0;
  Ints axes = norm_axes(op, in[0].shape, a.i("axis"), count);
  Shape tail(in[0].shape.begin() + axes.front(), in[0].shape.end());
  for (size_t k = 1; k < in.size(); ++k) {
    if (in[k].dtype != in[0].dtype) type_error(op, cat("input ", k, " must have the input's dtype"));
    if (in[k].shape != tail) type_error(op, cat("input ", k, " must have shape ", shape_str(tail), ", got ", shape_str(in[k].shape)));
  }
  if (!a.has("out")) return {in[0]};
  if (!is_float(a.dtype("out"))) type_error(op, cat("out must be a float type, got ", dtype_name(a.dtype("out"))));
  return {Type{a.dtype("out"), in[0].shape}};
}

// out: the norm in x's type, then cast (what the attribute means).
ValueId stored_as(Builder& b, ValueId y, const Attrs& a) { return a.has("out") ? b.cast(y, a.dtype("out")) : y; }

std::vector<ValueId> decompose_layer_norm(Builder& b, const std::vector<ValueId>& in, const Attrs& a) {
  DType d = b.dtype(in[0]);
  DType cd = compute_dtype(d);
  ValueId x = b.cast(in[0], cd);
  int64_t count = 0;
  Ints axes = norm_axes(Op::layer_norm, b.shape(x), a.i("axis"), count);
  ValueId inv_n = b.scalar(cd, 1.0 / static_cast<double>(count));
  ValueId mean = b.mul(b.reduce(x, "sum", axes, true), inv_n);
  ValueId centered = b.sub(x, mean);
  ValueId var = b.mul(b.reduce(b.mul(centered, centered), "sum", axes, true), inv_n);
  ValueId y = b.mul(centered, b.unary(Op::rsqrt, b.add(var, b.scalar(cd, a.f("eps")))));
  if (in.size() > 1) y = b.mul(y, b.cast(in[1], cd));
  if (in.size() > 2) y = b.add(y, b.cast(in[2], cd));
  return {stored_as(b, b.cast(y, d), a)};
}

std::vector<ValueId> decompose_rms_norm(Builder& b, const std::vector<ValueId>& in, const Attrs& a) {
  DType d = b.dtype(in[0]);
  DType cd = compute_dtype(d);
  ValueId x = b.cast(in[0], cd);
  int64_t count = 0;
  Ints axes = norm_axes(Op::rms_norm, b.shape(x), a.i("axis"), count);
  ValueId ms = b.mul(b.reduce(b.mul(x, x), "sum", axes, true), b.scalar(cd, 1.0 / static_cast<double>(count)));
  ValueId y = b.mul(x, b.unary(Op::rsqrt, b.add(ms, b.scalar(cd, a.f("eps")))));
  if (in.size() > 1) y = b.mul(y, b.cast(in[1], cd));
  return {stored_as(b, b.cast(y, d), a)};
}

// cross_entropy(logits[N, C, d…], labels[N, d…]): softmax cross-entropy over the class axis 1.
std::vector<Type> infer_cross_entropy(Op op, const std::vector<Type>& in, const Attrs& a) {
  require_dtype(op, in[0], is_float(in[0].dtype), "a float type", "logits");
  require_dtype(op, in[1], in[1].dtype == DType::i32 || in[1].dtype == DType::i64, "i32 or i64", "labels");
  const Shape& l = in[0].shape;
  if (l.size() < 2) type_error(op, cat("logits must be [N, C, …], got ", shape_str(l)));
  Shape expect = l;
  expect.erase(expect.begin() + 1);
  if (in[1].shape != expect) type_error(op, cat("labels must be ", shape_str(expect), ", got ", shape_str(in[1].shape)));
  if (a.s("reduction") == "none") return {{in[0].dtype, expect}};
  return {{in[0].dtype, {}}};
}

std::vector<ValueId> decompose_cross_entropy(Builder& b, const std::vector<ValueId>& in, const Attrs& a) {
  DType d = b.dtype(in[0]);
  DType cd = compute_dtype(d);
  ValueId logits = b.cast(in[0], cd);
  ValueId logp = b.emit1(Op::log_softmax, {logits}, Attrs{{"axis", int64_t{1}}});
  Shape ls = b.shape(logits);
  ValueId labels = b.cast(in[1], DType::i64);
  Shape lab1 = b.shape(labels);
  lab1.insert(lab1.begin() + 1, Dim(1));
  ValueId onehot = b.binary(Op::eq, b.iota(ls, DType::i64, 1), b.reshape(labels, lab1));
  ValueId picked = b.reduce(b.select(onehot, logp, b.scalar(cd, 0.0)), "sum", {1}, false);
  ValueId valid = b.binary(Op::ne, labels, b.scalar(DType::i64, static_cast<double>(a.i("ignore_index"))));
  ValueId loss = b.select(valid, b.unary(Op::neg, picked), b.scalar(cd, 0.0));
  const std::string& red = a.s("reduction");
  if (red == "none") return {b.cast(loss, d)};
  Ints all;
  for (size_t i = 0; i < b.rank(loss); ++i) all.push_back(static_cast<int64_t>(i));
  ValueId total = b.reduce(loss, "sum", all, false);
  if (red == "sum") return {b.cast(total, d)};
  ValueId count = b.reduce(b.cast(valid, cd), "sum", all, false);
  return {b.cast(b.div(total, count), d)};
}

}  // namespace

void register_nn(RuleTable& t) {
  auto set = [&](Op op, InferFn f, DecomposeFn d) { t[static_cast<size_t>(op)] = {f, d}; };
  set(Op::gelu, infer_float_unary, decompose_gelu);
  set(Op::gelu_tanh, infer_float_unary, decompose_gelu_tanh);
  set(Op::silu, infer_float_unary, decompose_silu);
  set(Op::relu, infer_relu, decompose_relu);
  set(Op::softmax, infer_axis_float, decompose_softmax);
  set(Op::log_softmax, infer_axis_float, decompose_log_softmax);
  set(Op::layer_norm, infer_norm, decompose_layer_norm);
  set(Op::rms_norm, infer_norm, decompose_rms_norm);
  set(Op::cross_entropy, infer_cross_entropy, decompose_cross_entropy);
}

}  // namespace rlx::ops
