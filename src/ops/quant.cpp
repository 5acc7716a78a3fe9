// Packed (block-quantized) weights: dequantize (MIR) decodes ggml blocks to f32, and
// dequant_matmul (HIR) multiplies by a packed weight matrix, linear(x, dequantize(W)). Devices
// with a native dequant_matmul decode on the fly and never materialize W.
#include "ops/builder.h"
#include "ops/infer_util.h"
#include "ops/q8_rounding.h"
#include "ops/rules.h"
#include "util/quant_blocks.h"

namespace rlx::ops {

// x → blocks of 32 → q = round(x · 127/max|x|) → q · (max|x|/127), all in f32 (what the
// integer kernels compute: Σ q·w is exact, the block scale multiplies after).
ValueId round_to_q8_blocks(Builder& b, ValueId x, int64_t k) {
  Shape s = b.shape(x), blocks = s;
  blocks.back() = Dim(k / 32);
  blocks.push_back(Dim(32));
  ValueId xb = b.reshape(x, blocks);
  int64_t last = static_cast<int64_t>(blocks.size()) - 1;
  ValueId amax = b.reduce(b.unary(Op::abs, xb), "max", {last}, true);
  ValueId zero = b.scalar(DType::f32, 0), c127 = b.scalar(DType::f32, 127);
  // An all-zero block has q = 0 whatever the inverse scale: use 0, not 127/0.
  ValueId inv = b.select(b.emit1(Op::eq, {amax, zero}), zero, b.div(c127, amax));
  ValueId q = b.unary(Op::round, b.mul(xb, inv));
  return b.reshape(b.mul(q, b.div(amax, c127)), s);
}

namespace {

using ir::Type;

quant::BlockType block_type(Op op, const Attrs& a) {
  auto t = quant::block_type_from_name(a.s("type"));
  if (!t) type_error(op, cat("unknown packed type '", a.s("type"), "'"));
  return *t;
}

// Bytes of one row of k elements, checking that k holds whole blocks.
int64_t packed_row_bytes(Op op, quant::BlockType t, int64_t k) {
  auto rb = quant::row_bytes(t, k);
  if (!rb || k <= 0)
    type_error(op, cat("rows of ", k, " elements are not whole ", quant::block_type_name(t), " blocks of ", quant::block_elems(t)));
  return *rb;
}

// packed u8[d…, row bytes] → f32[d…, k]; or u8[total bytes] → f32[static shape].
std::vector<Type> infer_dequantize(Op op, const std::vector<Type>& in, const Attrs& a) {
  quant::BlockType t = block_type(op, a);
  require_dtype(op, in[0], in[0].dtype == DType::u8, "u8 (packed blocks)");
  const Shape& p = in[0].shape;
  const Shape& s = a.dims("shape");
  if (p.empty() || s.empty()) type_error(op, "the packed input and the shape must have rank ≥ 1");
  auto k = s.back().try_value();
  if (!k) type_error(op, "the last dim of shape must be static");
  int64_t rb = packed_row_bytes(op, t, *k);
  if (p.size() == s.size()) {
    for (size_t i = 0; i + 1 < s.size(); ++i)
      if (p[i] != s[i]) type_error(op, cat("packed input ", shape_str(p), " and shape ", shape_str(s), " differ in dim ", i));
    if (p.back() != Dim(rb)) type_error(op, cat("rows of ", *k, " ", quant::block_type_name(t), " values take ", rb, " bytes, got ", p.back().str()));
  } else if (p.size() == 1 && shape_is_static(s)) {
    int64_t rows = shape_numel(s).value() / *k;
    if (p[0] != Dim(rows * rb)) type_error(op, cat(shape_str(s), " in ", quant::block_type_name(t), " takes ", rows * rb, " bytes, got ", p[0].str()));
  } else {
    type_error(op, cat("packed input ", shape_str(p), " must be [", shape_str(s), " rows…, row bytes] or flat bytes"));
  }
  return {{DType::f32, s}};
}

// x[..., k] · Wᵀ, W[n, k] packed as u8[n, row bytes] or u8[n · row bytes].
std::vector<Type> infer_dequant_matmul(Op op, const std::vector<Type>& in, const Attrs& a) {
  quant::BlockType t = block_type(op, a);
  int64_t n = a.i("n"), k = a.i("k");
  if (n <= 0 || k <= 0) type_error(op, cat("n=", n, " and k=", k, " must be positive"));
  if (a.has("act") && a.s("act") == "q8" && k % 32 != 0) type_error(op, cat("act=q8 quantizes x in blocks of 32; k=", k, " is not a multiple"));
  int64_t rb = packed_row_bytes(op, t, k);
  const bool glu = a.has("glu");
  const int64_t rows = glu ? 2 * n : n;  // the gate's rows, then the up projection's
  require_dtype(op, in[0], is_float(in[0].dtype), "a float type", "x");
  require_dtype(op, in[1], in[1].dtype == DType::u8, "u8 (packed blocks)", "weight");
  const Shape& x = in[0].shape;
  const Shape& w = in[1].shape;
  if (x.empty() || x.back() != Dim(k)) type_error(op, cat("x must be [..., ", k, "], got ", shape_str(x)));
  bool ok = (w.size() == 2 && w[0] == Dim(rows) && w[1] == Dim(rb)) || (w.size() == 1 && w[0] == Dim(rows * rb));
  if (!ok)
    type_error(op, cat("a [", rows, ", ", k, "] ", quant::block_type_name(t), " weight", glu ? " (glu: gate and up rows)" : "", " is u8[", rows, ", ", rb,
                       "] or u8[", rows * rb, "], got ", shape_str(w)));
  Shape out = x;
  out.back() = Dim(n);
  DType od = in[0].dtype;
  if (auto* o = a.find("out")) od = std::get<DType>(*o);
  if (!is_float(od)) type_error(op, cat("out must be a float type, got ", dtype_name(od)));
  if (a.has("norm_eps")) {
    if (in.size() != 3 || in[2].dtype != in[0].dtype || in[2].shape != Shape{Dim(k)})
      type_error(op, cat("norm_eps needs the norm's weight ", dtype_name(in[0].dtype), "[", k, "] as the third input"));
  } else if (in.size() == 3 && (in[2].dtype != od || in[2].shape != out)) {
    type_error(op, cat("the addend must be the result's type ", ir::type_str(Type{od, out}), ", got ", ir::type_str(in[2])));
  }
  return {{od, out}};
}

// Products accumulate in f32 (f64 for f64 x). Half-precision x multiplies the weights rounded
// to its own dtype (bf16 × bf16 products are exact in f32: what AMX computes).
std::vector<ValueId> decompose_dequant_matmul(Builder& b, const std::vector<ValueId>& in_, const Attrs& a) {
  std::vector<ValueId> in = in_;
  if (a.has("norm_eps")) {  // the norm first; the third input is its weight, not an addend
    in = {b.emit1(Op::rms_norm, {in_[0], in_[2]}, Attrs{{"eps", a.f("norm_eps")}}), in_[1]};
  }
  const bool glu = a.has("glu");
  const int64_t n = a.i("n");
  Shape ws = {Dim(glu ? 2 * n : n), Dim(a.i("k"))};
  ValueId w = b.emit1(Op::dequantize, {in[1]}, Attrs{{"type", a.s("type")}, {"shape", ws}});
  DType d = b.dtype(in[0]);
  DType cd = d == DType::f64 ? d : DType::f32;
  if (d == DType::bf16 || d == DType::f16) w = b.cast(w, d);
  DType od = a.has("out") ? a.dtype("out") : d;
  ValueId x = b.cast(in[0], cd);
  if (a.has("act") && a.s("act") == "q8") x = b.cast(round_to_q8_blocks(b, b.cast(x, DType::f32), a.i("k")), cd);
  ValueId y = b.cast(b.emit1(Op::linear, {x, b.cast(w, cd)}), od);
  if (glu) {  // silu(gate) · up, each rounded to the result's type as the separate products are
    int axis = static_cast<int>(b.rank(y)) - 1;
    y = b.mul(b.emit1(Op::silu, {b.slice_axis(y, axis, Dim(0), Dim(n))}), b.slice_axis(y, axis, Dim(n), Dim(2 * n)));
  }
  return {in.size() == 3 ? b.add(y, in[2]) : y};
}

}  // namespace

void register_quant(RuleTable& t) {
  t[static_cast<size_t>(Op::dequantize)] = {infer_dequantize, nullptr, nullptr, /*no_gradient=*/true};
  t[static_cast<size_t>(Op::dequant_matmul)] = {infer_dequant_matmul, decompose_dequant_matmul};
}

}  // namespace rlx::ops
