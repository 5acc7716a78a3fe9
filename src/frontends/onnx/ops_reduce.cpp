// Reductions (Reduce*, ArgMax/ArgMin), scans (CumSum), TopK and the softmax family, with the
// axis conventions of each opset (axes as an input from ReduceSum-13 / Reduce*-18; softmax's
// 2-D coercion before opset 13).
#include "frontends/onnx/ops_util.h"
#include "rlx/error.h"

namespace rlx::frontends::onnx {

namespace {

std::vector<ValueId> one(ValueId v) { return {v}; }

// The reduced axes of a Reduce* node, or nullopt for "no reduction" (noop_with_empty_axes).
std::optional<Ints> reduce_axes(NodeCtx& c, bool axes_input) {
  int64_t r = c.rank(c.in(0));
  Ints axes;
  if (axes_input) {
    if (c.has(1)) axes = c.ints(1, "axes");
  } else {
    axes = c.attr_ints("axes");
  }
  if (axes.empty()) {
    if (c.attr_i("noop_with_empty_axes", 0)) return std::nullopt;
    return iota_ints(r);
  }
  for (auto& a : axes) a = c.axis(a, r);
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  return axes;
}

enum class Red { sum, mean, max, min, prod, l1, l2, log_sum, log_sum_exp, sum_square };

std::vector<ValueId> reduce(NodeCtx& c, Red kind, int64_t axes_input_since) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0);
  bool keep = c.attr_i("keepdims", 1) != 0;
  auto axes = reduce_axes(c, c.opset >= axes_input_since);
  // Elementwise part first (applies even when nothing is reduced).
  ValueId pre = x;
  if (kind == Red::l1) pre = b.unary(Op::abs, x);
  if (kind == Red::l2 || kind == Red::sum_square) pre = b.mul(x, x);
  ValueId m = kNoValue;
  if (kind == Red::log_sum_exp) {
    if (axes && !axes->empty()) {
      m = b.reduce(x, "max", *axes, true);
      // An all −inf slice would give NaN: use 0 as the shift there.
      if (is_float(c.dtype(x))) m = b.select(b.binary(Op::eq, m, like(b, m, -INFINITY)), like(b, m, 0.0), m);
      pre = b.unary(Op::exp, b.sub(x, m));
    } else {
      pre = b.unary(Op::exp, x);
    }
  }
  ValueId r = pre;
  if (axes && !axes->empty()) {
    const char* k = kind == Red::max ? "max" : kind == Red::min ? "min" : kind == Red::prod ? "prod" : "sum";
    r = b.reduce(pre, k, *axes, keep);
    if (kind == Red::mean) {
      Shape s = c.shape(x);
      Dim n(1);
      for (int64_t a : *axes) n = n * s[static_cast<size_t>(a)];
      r = b.div(r, b.cast(dim_value(b, n), c.dtype(r)));
    }
  }
  if (kind == Red::l2) r = b.unary(Op::sqrt, r);
  if (kind == Red::log_sum) r = b.unary(Op::log, r);
  if (kind == Red::log_sum_exp) {
    r = b.unary(Op::log, r);
    if (m != kNoValue) r = b.add(r, keep ? m : b.reshape(m, b.shape(r)));
  }
  return one(r);
}

template <Red kind, int since>
std::vector<ValueId> reduce_op(NodeCtx& c) {
  return reduce(c, kind, since);
}

// Reverses x along one axis with a constant gather.
ValueId reverse_axis(FoldingBuilder& b, ValueId x, int64_t axis) {
  int64_t n = b.shape(x)[static_cast<size_t>(axis)].value();
  if (n > kMaxImportTable) throw Error(ErrorKind::unsupported, cat("reversing an axis of ", n, " elements"));
  std::vector<int64_t> idx;
  for (int64_t i = n - 1; i >= 0; --i) idx.push_back(i);
  return b.gather(x, b.constant(Tensor::from_vector(idx, {n})), axis);
}

std::vector<ValueId> arg(NodeCtx& c, const char* kind) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0);
  int64_t axis = c.axis(c.attr_i("axis", 0), c.rank(x));
  bool keep = c.attr_i("keepdims", 1) != 0;
  if (c.dtype(x) == DType::boolean) x = b.cast(x, DType::i32);
  if (c.attr_i("select_last_index", 0)) {
    Dim n = c.shape(x)[static_cast<size_t>(axis)];
    if (!n.is_static()) c.fail("select_last_index needs a static axis size");
    ValueId r = b.reduce(reverse_axis(b, x, axis), kind, {axis}, keep);
    return one(b.sub(b.scalar(DType::i64, static_cast<double>(n.value() - 1)), r));
  }
  return one(b.reduce(x, kind, {axis}, keep));
}
std::vector<ValueId> argmax(NodeCtx& c) { return arg(c, "argmax"); }
std::vector<ValueId> argmin(NodeCtx& c) { return arg(c, "argmin"); }

std::vector<ValueId> cumsum(NodeCtx& c) {
  ValueId x = c.in(0);
  int64_t axis = c.axis(c.int_scalar(1, "axis"), c.rank(x));
  return one(c.b.emit1(Op::cumsum, {x}, Attrs{{"axis", axis}, {"exclusive", c.attr_i("exclusive", 0) != 0}, {"reverse", c.attr_i("reverse", 0) != 0}}));
}

std::vector<ValueId> topk(NodeCtx& c) {
  ValueId x = c.in(0);
  int64_t k = c.opset >= 10 ? c.int_scalar(1, "K") : c.attr_i("k", 1);
  int64_t axis = c.axis(c.attr_i("axis", -1), c.rank(x));
  bool largest = c.attr_i("largest", 1) != 0;
  return c.b.emit(Op::topk, {x}, Attrs{{"k", k}, {"axis", axis}, {"largest", largest}});
}

// Softmax-family with the pre-13 2-D coercion: [∏ dims < axis, ∏ dims ≥ axis].
ValueId softmax_like(NodeCtx& c, Op op) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0);
  int64_t r = c.rank(x);
  if (c.opset >= 13) {
    int64_t axis = c.axis(c.attr_i("axis", -1), r);
    return b.emit1(op, {x}, Attrs{{"axis", axis}});
  }
  int64_t axis = c.axis(c.attr_i("axis", 1), r);
  Shape s = c.shape(x);
  ValueId flat = flatten2d(b, x, axis);
  return b.reshape(b.emit1(op, {flat}, Attrs{{"axis", int64_t{1}}}), s);
}

std::vector<ValueId> softmax(NodeCtx& c) { return one(softmax_like(c, Op::softmax)); }
std::vector<ValueId> log_softmax(NodeCtx& c) { return one(softmax_like(c, Op::log_softmax)); }

ValueId hardmax_axis(FoldingBuilder& b, ValueId x, int64_t axis) {
  ValueId am = b.reduce(x, "argmax", {axis}, true);
  ValueId hot = b.binary(Op::eq, b.iota(b.shape(x), DType::i64, axis), am);
  return b.cast(hot, b.dtype(x));
}

std::vector<ValueId> hardmax(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0);
  int64_t r = c.rank(x);
  if (c.opset >= 13) return one(hardmax_axis(b, x, c.axis(c.attr_i("axis", -1), r)));
  int64_t axis = c.axis(c.attr_i("axis", 1), r);
  return one(b.reshape(hardmax_axis(b, flatten2d(b, x, axis), 1), c.shape(x)));
}

}  // namespace

void register_reduce(OpTable& t) {
  t.insert(t.end(), {
                        {"", "ReduceSum", 1, reduce_op<Red::sum, 13>},
                        {"", "ReduceMean", 1, reduce_op<Red::mean, 18>},
                        {"", "ReduceMax", 1, reduce_op<Red::max, 18>},
                        {"", "ReduceMin", 1, reduce_op<Red::min, 18>},
                        {"", "ReduceProd", 1, reduce_op<Red::prod, 18>},
                        {"", "ReduceL1", 1, reduce_op<Red::l1, 18>},
                        {"", "ReduceL2", 1, reduce_op<Red::l2, 18>},
                        {"", "ReduceLogSum", 1, reduce_op<Red::log_sum, 18>},
                        {"", "ReduceLogSumExp", 1, reduce_op<Red::log_sum_exp, 18>},
                        {"", "ReduceSumSquare", 1, reduce_op<Red::sum_square, 18>},
                        {"", "ArgMax", 1, argmax},
                        {"", "ArgMin", 1, argmin},
                        {"", "CumSum", 11, cumsum},
                        {"", "TopK", 1, topk},
                        {"", "Softmax", 1, softmax},
                        {"", "LogSoftmax", 1, log_softmax},
                        {"", "Hardmax", 1, hardmax},
                    });
}

}  // namespace rlx::frontends::onnx
