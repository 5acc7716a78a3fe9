// Quantization operators: QuantizeLinear and DequantizeLinear as RLX's ops; MatMulInteger and
// QLinearMatMul as one i8 × i8 product summed in i32 (the int8 kernels) with zero-point
// corrections; QLinearConv in QDQ form (f64, which fold-qdq makes an integer layer); the rest
// (DynamicQuantizeLinear, ConvInteger, and shapes the integer product does not take) as float
// arithmetic on dequantized values, exact in f64.
#include "frontends/onnx/ops_nn.h"
#include "frontends/onnx/ops_util.h"
#include "rlx/error.h"

namespace rlx::frontends::onnx {

namespace {

std::vector<ValueId> one(ValueId v) { return {v}; }

// A per-axis parameter ([C] along `axis`) shaped to broadcast against a rank-r tensor.
ValueId along(FoldingBuilder& b, ValueId p, int64_t axis, size_t r) {
  if (b.rank(p) == 0 || shape_numel(b.shape(p)) == Dim(1)) return b.reshape(p, {});
  if (axis < 0) axis += static_cast<int64_t>(r);
  if (axis < 0 || axis >= static_cast<int64_t>(r))
    throw Error(ErrorKind::format, cat("a per-axis quantization parameter along axis ", axis, " of a rank-", r, " tensor"));
  Shape s(r, Dim(1));
  s[static_cast<size_t>(axis)] = b.shape(p)[0];
  return b.reshape(p, s);
}

ValueId saturate_round(FoldingBuilder& b, ValueId x, DType to) {
  ValueId r = b.unary(Op::round, x);
  r = b.max(b.min(r, like(b, r, highest_of(to))), like(b, r, lowest_of(to)));
  return b.cast(r, to);
}

ValueId dequant(FoldingBuilder& b, ValueId x, ValueId scale, ValueId zp, int64_t axis, DType cd) {
  size_t r = b.rank(x);
  ValueId xf = b.cast(x, cd);
  if (zp != kNoValue) xf = b.sub(xf, b.cast(along(b, zp, axis, r), cd));
  return b.mul(xf, b.cast(along(b, scale, axis, r), cd));
}

ValueId quant(FoldingBuilder& b, ValueId y, ValueId scale, ValueId zp, int64_t axis, DType to) {
  size_t r = b.rank(y);
  DType cd = b.dtype(y) == DType::f64 ? DType::f64 : DType::f32;
  ValueId q = b.div(b.cast(y, cd), b.cast(along(b, scale, axis, r), cd));
  q = b.unary(Op::round, q);
  if (zp != kNoValue) q = b.add(q, b.cast(along(b, zp, axis, r), cd));
  q = b.max(b.min(q, like(b, q, highest_of(to))), like(b, q, lowest_of(to)));
  return b.cast(q, to);
}

// 8-bit (or i32) values with f32/f64 scales of x's own type: RLX's quantize_linear and
// dequantize_linear ops (the same meaning), which int8 devices run natively. Half-precision
// scales keep the f32 arithmetic below (the op would compute in the half type).
bool native_qdq(DType q, DType scale, DType x) {
  return (q == DType::i8 || q == DType::u8 || q == DType::i32) && (scale == DType::f32 || scale == DType::f64) && scale == x;
}

std::vector<ValueId> quantize_linear(NodeCtx& c) {
  ValueId x = c.in(0);
  int64_t axis = c.attr_i("axis", 1);
  ValueId zp = c.has(2) ? c.in(2) : kNoValue;
  DType to = zp != kNoValue ? c.dtype(zp) : DType::u8;
  if (native_qdq(to, c.dtype(c.in(1)), c.dtype(x)) && to != DType::i32) {
    size_t r = c.rank(x);
    ValueId z = zp != kNoValue ? along(c.b, zp, axis, r) : c.b.scalar(to, 0);
    return one(c.b.emit1(Op::quantize_linear, {x, along(c.b, c.in(1), axis, r), z}));
  }
  return one(quant(c.b, x, c.in(1), zp, axis, to));
}

std::vector<ValueId> dequantize_linear(NodeCtx& c) {
  ValueId x = c.in(0);
  int64_t axis = c.attr_i("axis", 1);
  DType out = c.dtype(c.in(1));
  if (native_qdq(c.dtype(x), out, out) && (!c.has(2) || c.dtype(c.in(2)) == c.dtype(x))) {
    size_t r = c.rank(x);
    ValueId z = c.has(2) ? along(c.b, c.in(2), axis, r) : c.b.scalar(c.dtype(x), 0);
    return one(c.b.emit1(Op::dequantize_linear, {x, along(c.b, c.in(1), axis, r), z}));
  }
  ValueId y = dequant(c.b, x, c.in(1), c.has(2) ? c.in(2) : kNoValue, axis, out == DType::f64 ? DType::f64 : DType::f32);
  return one(c.b.cast(y, out));
}

std::vector<ValueId> dynamic_quantize_linear(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0);
  Ints all = iota_ints(c.rank(x));
  ValueId mx = b.max(b.reduce(x, "max", all, false), like(b, x, 0.0));
  ValueId mn = b.min(b.reduce(x, "min", all, false), like(b, x, 0.0));
  ValueId scale = b.div(b.sub(mx, mn), like(b, x, 255.0));
  ValueId zp = saturate_round(b, b.sub(like(b, x, 0.0), b.div(mn, scale)), DType::u8);
  ValueId y = quant(b, x, scale, zp, 0, DType::u8);
  return {y, scale, zp};
}

bool per_tensor(FoldingBuilder& b, ValueId v) { return shape_numel(b.shape(v)) == Dim(1); }

// An 8-bit operand as i8 with its zero point in i32: u8 values shift by −128 (exactly), and so
// does their zero point (an absent one is 0).
std::pair<ValueId, ValueId> as_i8(FoldingBuilder& b, ValueId x, ValueId zp) {
  ValueId z = zp != kNoValue ? b.cast(zp, DType::i32) : kNoValue;
  if (b.dtype(x) == DType::i8) return {x, z};
  ValueId shift = b.scalar(DType::i32, 128);
  return {b.cast(b.sub(b.cast(x, DType::i32), shift), DType::i8), z != kNoValue ? b.sub(z, shift) : b.scalar(DType::i32, -128)};
}

// (A − a_zp)·(B − b_zp) summed exactly in i32 over one i8 × i8 product — the device's int8
// kernel (VNNI on the cpu) — with the zero points as corrections:
// A·B − a_zp·Σ_k B − b_zp·Σ_k A + K·a_zp·b_zp. A is [..., K] (a_zp per tensor, or per row of a
// 2-D A), B is [K, N] (b_zp per tensor or per column). kNoValue for anything else.
ValueId integer_product(FoldingBuilder& b, ValueId a, ValueId w, ValueId a_zp, ValueId w_zp) {
  auto eight_bit = [&](ValueId v) { return b.dtype(v) == DType::i8 || b.dtype(v) == DType::u8; };
  const size_t r = b.rank(a);
  if (!eight_bit(a) || !eight_bit(w) || r < 2 || b.rank(w) != 2) return kNoValue;
  const Dim K = b.shape(w)[0], N = b.shape(w)[1];
  if (b.shape(a)[r - 1] != K || !K.is_static()) return kNoValue;
  if (a_zp != kNoValue && !per_tensor(b, a_zp) && !(r == 2 && b.rank(a_zp) == 1 && b.shape(a_zp)[0] == b.shape(a)[0])) return kNoValue;
  if (w_zp != kNoValue && !per_tensor(b, w_zp) && !(b.rank(w_zp) == 1 && b.shape(w_zp)[0] == N)) return kNoValue;
  auto [a8, za] = as_i8(b, a, a_zp);
  auto [w8, zw] = as_i8(b, w, w_zp);
  if (za != kNoValue) za = per_tensor(b, za) ? b.reshape(za, {}) : b.reshape(za, {b.shape(za)[0], Dim(1)});
  if (zw != kNoValue) zw = per_tensor(b, zw) ? b.reshape(zw, {}) : zw;
  ValueId acc = b.emit1(Op::dot_general, {a8, w8}, Attrs{{"contract", ir::Intss{{static_cast<int64_t>(r) - 1}, {0}}}, {"out", DType::i32}});
  if (za != kNoValue) acc = b.sub(acc, b.mul(za, b.reduce(b.cast(w8, DType::i32), "sum", {0}, false)));
  if (zw != kNoValue) acc = b.sub(acc, b.mul(zw, b.reduce(b.cast(a8, DType::i32), "sum", {static_cast<int64_t>(r) - 1}, true)));
  if (za != kNoValue && zw != kNoValue) acc = b.add(acc, b.mul(b.mul(za, zw), b.scalar(DType::i32, static_cast<double>(K.value()))));
  return acc;
}

// (A − a_zp)·(B − b_zp) in i32; a_zp may be per row of A, b_zp per column of B.
std::vector<ValueId> matmul_integer(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  if (ValueId p = integer_product(b, c.in(0), c.in(1), c.has(2) ? c.in(2) : kNoValue, c.has(3) ? c.in(3) : kNoValue); p != kNoValue) return one(p);
  ValueId a = b.cast(c.in(0), DType::i32), w = b.cast(c.in(1), DType::i32);
  if (c.has(2)) {
    ValueId zp = b.cast(c.in(2), DType::i32);
    if (b.rank(zp) == 1 && shape_numel(b.shape(zp)) != Dim(1)) zp = b.reshape(zp, {b.shape(zp)[0], Dim(1)});
    else zp = b.reshape(zp, {});
    a = b.sub(a, zp);
  }
  if (c.has(3)) {
    ValueId zp = b.cast(c.in(3), DType::i32);
    w = b.sub(w, b.rank(zp) == 0 || shape_numel(b.shape(zp)) == Dim(1) ? b.reshape(zp, {}) : zp);
  }
  return one(b.emit1(Op::matmul, {a, w}));
}

std::vector<ValueId> conv_integer(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = b.cast(c.in(0), DType::f64), w = b.cast(c.in(1), DType::f64);
  if (c.has(2)) x = b.sub(x, b.reshape(b.cast(c.in(2), DType::f64), {}));
  if (c.has(3)) w = b.sub(w, along(b, b.cast(c.in(3), DType::f64), 0, b.rank(w)));
  c.require_rank(c.in(0), 3, 8, "the input");
  c.require_rank(c.in(1), c.rank(c.in(0)), c.rank(c.in(0)), "the weight");
  auto xs = c.static_shape(c.in(0), "the input");
  auto ws = c.static_shape(c.in(1), "the weight");
  ConvGeometry g = conv_geometry(c, xs, std::vector<int64_t>(ws.begin() + 2, ws.end()));
  // Zero points pad with the zero point: padding happens after the shift, as 0.
  return one(b.cast(conv_nd(b, x, w, g, c.attr_i("group", 1)), DType::i32));
}

// A value the builder knows to be constant, as a constant node (an initializer's arithmetic
// folded at import), so that passes see its value; v itself otherwise.
ValueId materialized(FoldingBuilder& b, ValueId v);

// Whether every value of a constant is zero (false for anything computed).
bool all_zero(FoldingBuilder& b, ValueId v) {
  const Tensor* t = b.constant_value(v);
  if (!t) return false;
  for (double x : t->to_f64())
    if (x != 0) return false;
  return true;
}

// QLinearMatMul as Q(dot(DQ(a), DQ(w))) in f64 with RLX's quantize/dequantize ops — int8 a and
// y with one scale and zero point each, constant int8 weights [K, N] with zero points of 0 and a
// scale per tensor or per column — the form passes::fold_qdq makes an integer layer of.
// kNoValue when the operands are not of that kind.
ValueId qlinear_matmul_qdq(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  auto i8 = [&](size_t i) { return c.dtype(c.in(i)) == DType::i8; };
  auto f32 = [&](size_t i) { return c.dtype(c.in(i)) == DType::f32; };
  if (!i8(0) || !i8(2) || !i8(3) || !i8(5) || !i8(7) || !f32(1) || !f32(4) || !f32(6)) return kNoValue;
  if (!per_tensor(b, c.in(1)) || !per_tensor(b, c.in(2)) || !per_tensor(b, c.in(6)) || !per_tensor(b, c.in(7))) return kNoValue;
  if (c.rank(c.in(0)) < 2 || c.rank(c.in(3)) != 2 || !b.constant_value(c.in(3)) || !all_zero(b, c.in(5))) return kNoValue;
  const Dim N = c.shape(c.in(3))[1];
  if (!per_tensor(b, c.in(4)) && !(c.rank(c.in(4)) == 1 && c.shape(c.in(4))[0] == N)) return kNoValue;
  auto f64 = [&](ValueId v) { return b.cast(v, DType::f64); };
  const size_t r = c.rank(c.in(0));
  ValueId x = b.emit1(Op::dequantize_linear, {c.in(0), materialized(b, f64(b.reshape(c.in(1), {}))), b.reshape(c.in(2), {})});
  ValueId sw = per_tensor(b, c.in(4)) ? b.reshape(c.in(4), {}) : along(b, c.in(4), 1, 2);
  ValueId w = b.emit1(Op::dequantize_linear, {materialized(b, c.in(3)), materialized(b, f64(sw)), b.scalar(DType::i8, 0)});
  ValueId y = b.dot_general(x, w, {{}, {}}, {{static_cast<int64_t>(r) - 1}, {0}});
  return b.emit1(Op::quantize_linear, {y, materialized(b, f64(b.reshape(c.in(6), {}))), b.reshape(c.in(7), {})});
}

std::vector<ValueId> qlinear_matmul(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  if (c.imp.options().qlinear_matmul_as_qdq)
    if (ValueId y = qlinear_matmul_qdq(c); y != kNoValue) return one(y);
  // the integer product, then its scale sa·sb (per tensor, or per column of B) in f64
  const bool scales_fit = per_tensor(b, c.in(1)) && (per_tensor(b, c.in(4)) || b.rank(c.in(4)) == 1);
  if (ValueId p = scales_fit ? integer_product(b, c.in(0), c.in(3), c.in(2), c.in(5)) : kNoValue; p != kNoValue) {
    ValueId sb = b.cast(per_tensor(b, c.in(4)) ? b.reshape(c.in(4), {}) : c.in(4), DType::f64);
    ValueId y = b.mul(b.mul(b.cast(p, DType::f64), b.cast(b.reshape(c.in(1), {}), DType::f64)), sb);
    return one(quant(b, y, c.in(6), c.in(7), 1, c.dtype(c.in(7))));
  }
  ValueId a = dequant(b, c.in(0), c.in(1), c.in(2), 1, DType::f64);
  ValueId w = dequant(b, c.in(3), c.in(4), c.in(5), b.rank(c.in(3)) - 1, DType::f64);
  ValueId y = b.emit1(Op::matmul, {a, w});
  return one(quant(b, y, c.in(6), c.in(7), 1, c.dtype(c.in(7))));
}

// A value the builder knows to be constant, as a constant node (an initializer's arithmetic
// folded at import), so that passes see its value; v itself otherwise.
ValueId materialized(FoldingBuilder& b, ValueId v) {
  const Tensor* t = b.constant_value(v);
  return t ? b.constant(*t) : v;
}

// Q(conv(DQ(x), DQ(w)) + DQ(bias)) in f64 with RLX's quantize/dequantize ops: ONNX's meaning
// (every product and sum exact in f64, one rounding in the QuantizeLinear) in the QDQ form that
// the fold-qdq pass turns into an integer layer for int8 devices (cortex-m).
std::vector<ValueId> qlinear_conv(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  c.require_rank(c.in(0), 3, 8, "the input");
  c.require_rank(c.in(3), c.rank(c.in(0)), c.rank(c.in(0)), "the weight");
  // the batch may be symbolic (only the spatial dims shape the geometry, and only with auto_pad)
  const Shape xs_sym = c.shape(c.in(0));
  std::vector<int64_t> xs;
  for (size_t i = 0; i < xs_sym.size(); ++i) xs.push_back(xs_sym[i].is_static() ? xs_sym[i].value() : 1);
  if (!shape_is_static(Shape(xs_sym.begin() + 2, xs_sym.end())) && c.attr_s("auto_pad", "NOTSET").rfind("SAME", 0) == 0)
    c.fail("auto_pad SAME over symbolic spatial dims");
  auto ws = c.static_shape(c.in(3), "the weight");
  const size_t r = c.rank(c.in(0));
  auto f64 = [&](ValueId v) { return b.cast(v, DType::f64); };
  const bool native = native_qdq(c.dtype(c.in(0)), DType::f32, DType::f32) && native_qdq(c.dtype(c.in(3)), DType::f32, DType::f32) &&
                      c.dtype(c.in(2)) == c.dtype(c.in(0)) && c.dtype(c.in(5)) == c.dtype(c.in(3)) && per_tensor(b, c.in(1)) && per_tensor(b, c.in(2));
  ValueId x, w;
  if (native) {
    x = b.emit1(Op::dequantize_linear, {c.in(0), materialized(b, f64(b.reshape(c.in(1), {}))), b.reshape(c.in(2), {})});
    w = b.emit1(Op::dequantize_linear, {c.in(3), materialized(b, along(b, f64(c.in(4)), 0, r)), materialized(b, along(b, c.in(5), 0, r))});
  } else {
    x = dequant(b, c.in(0), c.in(1), c.in(2), 1, DType::f64);
    w = dequant(b, c.in(3), c.in(4), c.in(5), 0, DType::f64);
  }
  ConvGeometry g = conv_geometry(c, xs, std::vector<int64_t>(ws.begin() + 2, ws.end()));
  ValueId y = conv_nd(b, x, w, g, c.attr_i("group", 1));
  if (c.has(8)) {
    // int32 bias with scale x_scale·w_scale, per output channel
    ValueId s = b.mul(f64(b.reshape(c.in(1), {})), f64(c.in(4)));
    s = materialized(b, b.rank(s) == 0 ? s : b.reshape(s, {shape_numel(b.shape(s))}));
    ValueId bias = b.emit1(Op::dequantize_linear, {c.in(8), s, b.scalar(DType::i32, 0)});
    y = add_channel_bias(b, y, bias);
  }
  if (native && c.dtype(c.in(7)) != DType::i32) {
    ValueId z = b.reshape(c.in(7), {});
    return one(b.emit1(Op::quantize_linear, {y, materialized(b, f64(b.reshape(c.in(6), {}))), z}));
  }
  return one(quant(b, y, c.in(6), c.in(7), 1, c.dtype(c.in(7))));
}

}  // namespace

void register_quant(OpTable& t) {
  t.insert(t.end(), {
                        {"", "QuantizeLinear", 10, quantize_linear},
                        {"", "DequantizeLinear", 10, dequantize_linear},
                        {"", "DynamicQuantizeLinear", 11, dynamic_quantize_linear},
                        {"", "MatMulInteger", 10, matmul_integer},
                        {"", "ConvInteger", 10, conv_integer},
                        {"", "QLinearMatMul", 10, qlinear_matmul},
                        {"", "QLinearConv", 10, qlinear_conv},
                    });
}

}  // namespace rlx::frontends::onnx
