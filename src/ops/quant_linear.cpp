// Integer (linear) quantization: quantize_linear and dequantize_linear (ONNX's meaning),
// quantize_rows (dynamic per-row int8),
// requantize (the fixed-point rescaling of an integer accumulator) and fake_quant (quantization
// simulated in float for training, with straight-through and LSQ gradients). Each decomposes
// into MIR arithmetic, so every device runs them; int8 devices claim them natively.
#include <cmath>

#include "ops/builder.h"
#include "ops/infer_util.h"
#include "ops/rules.h"
#include "ops/vjp_util.h"

namespace rlx::ops {

namespace {

using ir::Type;

// The representable range of an integer dtype (i64 clipped to what a double holds exactly).
std::pair<double, double> int_range(DType t) {
  int bits = dtype_bits(t);
  if (dtype_class(t) == DTypeClass::unsigned_int) return {0.0, std::ldexp(1.0, bits) - 1};
  if (bits >= 53) return {-std::ldexp(1.0, 52), std::ldexp(1.0, 52)};
  return {-std::ldexp(1.0, bits - 1), std::ldexp(1.0, bits - 1) - 1};
}

bool quant_int(DType t) { return is_integer(t) && t != DType::i4 && t != DType::i64; }

std::vector<Type> infer_quantize_linear(Op op, const std::vector<Type>& in, const Attrs&) {
  require_dtype(op, in[0], is_float(in[0].dtype), "float", "input");
  require_dtype(op, in[1], in[1].dtype == in[0].dtype, "the input's float type", "scale");
  require_dtype(op, in[2], quant_int(in[2].dtype), "i8, u8, i16 or i32", "zero_point");
  Shape s = broadcast_shapes(op, broadcast_shapes(op, in[0].shape, in[1].shape), in[2].shape);
  if (s != in[0].shape) type_error(op, cat("scale ", shape_str(in[1].shape), " and zero_point ", shape_str(in[2].shape), " must broadcast to the input ", shape_str(in[0].shape)));
  return {{in[2].dtype, in[0].shape}};
}

std::vector<ValueId> decompose_quantize_linear(Builder& b, const std::vector<ValueId>& in, const Attrs&) {
  DType f = b.dtype(in[0]), q = b.dtype(in[2]);
  auto [lo, hi] = int_range(q);
  ValueId r = b.add(b.unary(Op::round, b.div(in[0], in[1])), b.cast(in[2], f));
  r = b.min(b.max(r, b.scalar(f, lo)), b.scalar(f, hi));
  return {b.cast(r, q)};
}

std::vector<Type> infer_quantize_rows(Op op, const std::vector<Type>& in, const Attrs&) {
  require_dtype(op, in[0], is_float(in[0].dtype), "float", "input");
  if (in[0].shape.empty()) type_error(op, "the input needs at least one axis (its rows are the last one)");
  Shape s = in[0].shape;
  s.back() = Dim(1);
  return {{DType::i8, in[0].shape}, {in[0].dtype, s}};
}

std::vector<ValueId> decompose_quantize_rows(Builder& b, const std::vector<ValueId>& in, const Attrs&) {
  ValueId x = in[0];
  DType f = b.dtype(x);
  const int64_t last = static_cast<int64_t>(b.rank(x)) - 1;
  ValueId amax = b.reduce(b.unary(Op::abs, x), "max", {last}, true);
  ValueId s = b.select(b.binary(Op::eq, amax, b.scalar(f, 0)), b.scalar(f, 1), b.div(amax, b.scalar(f, 127)));
  return {b.emit1(Op::quantize_linear, {x, s, b.scalar(DType::i8, 0)}), s};
}

std::vector<Type> infer_dequantize_linear(Op op, const std::vector<Type>& in, const Attrs&) {
  require_dtype(op, in[0], quant_int(in[0].dtype), "i8, u8, i16 or i32", "input");
  require_dtype(op, in[1], is_float(in[1].dtype), "float", "scale");
  require_dtype(op, in[2], in[2].dtype == in[0].dtype, "the input's integer type", "zero_point");
  Shape s = broadcast_shapes(op, broadcast_shapes(op, in[0].shape, in[1].shape), in[2].shape);
  if (s != in[0].shape) type_error(op, cat("scale ", shape_str(in[1].shape), " and zero_point ", shape_str(in[2].shape), " must broadcast to the input ", shape_str(in[0].shape)));
  return {{in[1].dtype, in[0].shape}};
}

std::vector<ValueId> decompose_dequantize_linear(Builder& b, const std::vector<ValueId>& in, const Attrs&) {
  DType f = b.dtype(in[1]);
  // the difference in i32 is exact for every quant_int type; one rounding, in the multiply
  ValueId d = b.sub(b.cast(in[0], DType::i32), b.cast(in[2], DType::i32));
  return {b.mul(b.cast(d, f), in[1])};
}

std::vector<Type> infer_requantize(Op op, const std::vector<Type>& in, const Attrs& a) {
  for (size_t i = 0; i < 3; ++i)
    require_dtype(op, in[i], is_integer(in[i].dtype) && in[i].dtype != DType::i4 && in[i].dtype != DType::u8, "i8, i16, i32 or i64",
                  i == 0 ? "accumulator" : i == 1 ? "multiplier" : "shift");
  Shape s = broadcast_shapes(op, broadcast_shapes(op, in[0].shape, in[1].shape), in[2].shape);
  if (s != in[0].shape) type_error(op, "multiplier and shift must broadcast to the accumulator");
  DType out = a.dtype("out");
  if (!quant_int(out)) type_error(op, cat("out must be i8, u8, i16 or i32, got ", dtype_name(out)));
  auto [lo, hi] = int_range(out);
  if (a.i("lo") > a.i("hi") || static_cast<double>(a.i("lo")) < lo || static_cast<double>(a.i("hi")) > hi)
    type_error(op, cat("the clamp [", a.i("lo"), ", ", a.i("hi"), "] must be a range inside ", dtype_name(out), "'s"));
  return {{out, in[0].shape}};
}

// In i64: p = acc·m + 2^(s−1) (2^−1 is 0 in integer pow, so s = 0 adds nothing), then
// ⌊p / 2^s⌋ — a truncating division, one less where the remainder is negative.
std::vector<ValueId> decompose_requantize(Builder& b, const std::vector<ValueId>& in, const Attrs& a) {
  const DType w = DType::i64;
  ValueId acc = b.cast(in[0], w), m = b.cast(in[1], w), s = b.cast(in[2], w);
  ValueId two = b.scalar(w, 2), one = b.scalar(w, 1);
  ValueId den = b.binary(Op::pow, two, s), half = b.binary(Op::pow, two, b.sub(s, one));
  ValueId p = b.add(b.mul(acc, m), half);
  ValueId q = b.div(p, den);
  ValueId negative_rem = b.binary(Op::lt, b.binary(Op::rem, p, den), b.scalar(w, 0));
  q = b.sub(q, b.select(negative_rem, one, b.scalar(w, 0)));
  q = b.add(q, b.scalar(w, static_cast<double>(a.i("zero_point"))));
  q = b.min(b.max(q, b.scalar(w, static_cast<double>(a.i("lo")))), b.scalar(w, static_cast<double>(a.i("hi"))));
  return {b.cast(q, a.dtype("out"))};
}

std::vector<Type> infer_fake_quant(Op op, const std::vector<Type>& in, const Attrs& a) {
  require_dtype(op, in[0], is_float(in[0].dtype), "float", "input");
  require_same_dtype(op, in, 0, 2);
  Shape s = broadcast_shapes(op, broadcast_shapes(op, in[0].shape, in[1].shape), in[2].shape);
  if (s != in[0].shape) type_error(op, "scale and zero_point must broadcast to the input");
  if (a.i("lo") >= a.i("hi")) type_error(op, cat("the grid [", a.i("lo"), ", ", a.i("hi"), "] is empty"));
  return {in[0]};
}

// v = x / scale + zero_point before rounding; the grid clamps round(v) to [lo, hi].
std::vector<ValueId> decompose_fake_quant(Builder& b, const std::vector<ValueId>& in, const Attrs& a) {
  ValueId x = in[0], scale = in[1], zp = in[2];
  ValueId q = b.add(b.unary(Op::round, b.div(x, scale)), zp);
  q = b.min(b.max(q, b.scalar_like(x, static_cast<double>(a.i("lo")))), b.scalar_like(x, static_cast<double>(a.i("hi"))));
  return {b.mul(b.sub(q, zp), scale)};
}

// Straight-through inside the grid (lo ≤ round(x/s) + z ≤ hi): dx = g, ds = g·(round(x/s) − x/s),
// dz = 0; outside dx = 0, ds = g·(bound − z), dz = −g·s (LSQ, Esser et al. 2020).
std::vector<ValueId> vjp_fake_quant(Builder& b, const VjpArgs& a) {
  ValueId x = a.in[0], scale = a.in[1], zp = a.in[2], g = a.cot[0];
  ValueId lo = b.scalar_like(x, static_cast<double>(a.attrs.i("lo"))), hi = b.scalar_like(x, static_cast<double>(a.attrs.i("hi")));
  ValueId v = b.div(x, scale), r = b.unary(Op::round, v), q = b.add(r, zp);
  ValueId below = b.binary(Op::lt, q, lo), above = b.binary(Op::gt, q, hi);
  ValueId outside = b.binary(Op::logical_or, below, above);
  ValueId zero = b.scalar_like(g, 0.0);
  ValueId dx = b.select(outside, zero, g);
  ValueId bound = b.select(below, lo, hi);
  ValueId ds_elem = b.mul(g, b.select(outside, b.sub(bound, zp), b.sub(r, v)));
  ValueId dz_elem = b.select(outside, b.unary(Op::neg, b.mul(g, scale)), zero);
  return {dx, unbroadcast(b, ds_elem, b.shape(scale)), unbroadcast(b, dz_elem, b.shape(zp))};
}

}  // namespace

void register_quant_linear(RuleTable& t) {
  auto set = [&](Op op, InferFn f, DecomposeFn d) {
    t[static_cast<size_t>(op)].infer = f;
    t[static_cast<size_t>(op)].decompose = d;
  };
  set(Op::quantize_linear, infer_quantize_linear, decompose_quantize_linear);
  set(Op::dequantize_linear, infer_dequantize_linear, decompose_dequantize_linear);
  set(Op::quantize_rows, infer_quantize_rows, decompose_quantize_rows);
  set(Op::requantize, infer_requantize, decompose_requantize);
  set(Op::fake_quant, infer_fake_quant, decompose_fake_quant);
  t[static_cast<size_t>(Op::quantize_linear)].no_gradient = true;
  t[static_cast<size_t>(Op::quantize_rows)].no_gradient = true;
  t[static_cast<size_t>(Op::requantize)].no_gradient = true;
  t[static_cast<size_t>(Op::fake_quant)].vjp = vjp_fake_quant;
}

}  // namespace rlx::ops
