// conv2d (ONNX-style attributes) and max/avg pooling, decomposed into mir.conv, pad and
// strided slices (one slice per kernel offset, combined with max or add).
#include <limits>

#include "ops/builder.h"
#include "ops/infer_util.h"
#include "ops/rules.h"

namespace rlx::ops {

namespace {

using ir::Type;

Attrs conv_attrs(const Attrs& a) {
  const Ints& p = a.ints("pads");  // [top, left, bottom, right]
  return Attrs{{"strides", a.ints("strides")},
               {"padding", Intss{{p[0], p[2]}, {p[1], p[3]}}},
               {"dilation", a.ints("dilations")},
               {"groups", a.i("groups")}};
}

std::vector<Type> infer_conv2d(Op op, const std::vector<Type>& in, const Attrs& a) {
  require_rank(op, in[0], 4, "input");
  require_rank(op, in[1], 4, "weight");
  if (a.ints("pads").size() != 4 || a.ints("strides").size() != 2 || a.ints("dilations").size() != 2)
    type_error(op, "needs pads [top, left, bottom, right], strides [h, w] and dilations [h, w]");
  if (in.size() == 3) {
    if (in[2].dtype != in[0].dtype) type_error(op, "bias must have the input's dtype");
    if (!(in[2].shape == Shape{in[1].shape[0]})) type_error(op, cat("bias must be [", in[1].shape[0].str(), "]"));
  }
  std::vector<Type> out = op_rule(Op::conv).infer(Op::conv, {in[0], in[1]}, conv_attrs(a));
  return out;
}

std::vector<ValueId> decompose_conv2d(Builder& b, const std::vector<ValueId>& in, const Attrs& a) {
  ValueId y = b.emit1(Op::conv, {in[0], in[1]}, conv_attrs(a));
  if (in.size() == 3) y = b.add(y, b.reshape(in[2], {Dim(1), b.shape(in[2])[0], Dim(1), Dim(1)}));
  return {y};
}

struct PoolGeom {
  size_t sp;
  Ints kernel, strides, pads;  // pads: begins then ends
  Shape out;
};

PoolGeom pool_geometry(Op op, const Type& x, const Attrs& a) {
  if (x.shape.size() < 3) type_error(op, cat("input must be [N, C, spatial…], got ", shape_str(x.shape)));
  PoolGeom g;
  g.sp = x.shape.size() - 2;
  g.kernel = a.ints("kernel");
  if (g.kernel.size() != g.sp) type_error(op, cat("kernel needs ", g.sp, " entries"));
  g.strides = a.has("strides") ? a.ints("strides") : Ints(g.sp, 1);
  g.pads = a.has("pads") ? a.ints("pads") : Ints(2 * g.sp, 0);
  if (g.strides.size() != g.sp || g.pads.size() != 2 * g.sp)
    type_error(op, cat("strides needs ", g.sp, " entries and pads ", 2 * g.sp));
  g.out = {x.shape[0], x.shape[1]};
  for (size_t i = 0; i < g.sp; ++i) {
    if (g.pads[i] < 0 || g.pads[g.sp + i] < 0) type_error(op, "pads must be non-negative");
    if (g.pads[i] >= g.kernel[i] || g.pads[g.sp + i] >= g.kernel[i]) type_error(op, "pads must be smaller than the kernel");
    g.out.push_back(window_out_dim(op, x.shape[2 + i], g.pads[i], g.pads[g.sp + i], g.kernel[i], g.strides[i], 1));
  }
  return g;
}

std::vector<Type> infer_pool(Op op, const std::vector<Type>& in, const Attrs& a) {
  require_dtype(op, in[0], op == Op::max_pool ? (is_numeric(in[0].dtype) && !is_complex(in[0].dtype)) : is_float(in[0].dtype),
                op == Op::max_pool ? "real numeric" : "a float type");
  return {{in[0].dtype, pool_geometry(op, in[0], a).out}};
}

// Combines the strided window slices of x (already padded) with `combine`.
ValueId pool_windows(Builder& b, ValueId x, const PoolGeom& g, Op combine) {
  size_t r = g.sp + 2;
  Ints offset(g.sp, 0);
  ValueId acc = ir::kNoValue;
  for (;;) {
    Shape start(r, Dim(0)), limit = b.shape(x);
    Ints stride(r, 1);
    for (size_t i = 0; i < g.sp; ++i) {
      start[2 + i] = Dim(offset[i]);
      limit[2 + i] = Dim(offset[i]) + (g.out[2 + i] - Dim(1)) * Dim(g.strides[i]) + Dim(1);
      stride[2 + i] = g.strides[i];
    }
    ValueId w = b.slice(x, start, limit, stride);
    acc = acc == ir::kNoValue ? w : b.binary(combine, acc, w);
    size_t i = g.sp;
    while (i-- > 0) {
      if (++offset[i] < g.kernel[i]) break;
      offset[i] = 0;
    }
    if (i == static_cast<size_t>(-1)) return acc;
  }
}

ValueId pad_spatial(Builder& b, ValueId x, const PoolGeom& g, double value) {
  bool any = false;
  for (int64_t p : g.pads) any = any || p != 0;
  if (!any) return x;
  Ints lo(2, 0), hi(2, 0);
  for (size_t i = 0; i < g.sp; ++i) {
    lo.push_back(g.pads[i]);
    hi.push_back(g.pads[g.sp + i]);
  }
  return b.emit1(Op::pad, {x}, Attrs{{"lo", lo}, {"hi", hi}, {"value", value}});
}

std::vector<ValueId> decompose_max_pool(Builder& b, const std::vector<ValueId>& in, const Attrs& a) {
  PoolGeom g = pool_geometry(Op::max_pool, b.type(in[0]), a);
  DType d = b.dtype(in[0]);
  double lowest = is_float(d) ? -std::numeric_limits<double>::infinity()
                  : d == DType::u8 ? 0.0
                  : d == DType::i8 ? -128.0
                  : d == DType::i16 ? -32768.0
                  : d == DType::i32 ? -2147483648.0
                                    : -9.2233720368547758e18;
  return {pool_windows(b, pad_spatial(b, in[0], g, lowest), g, Op::max)};
}

std::vector<ValueId> decompose_avg_pool(Builder& b, const std::vector<ValueId>& in, const Attrs& a) {
  PoolGeom g = pool_geometry(Op::avg_pool, b.type(in[0]), a);
  ValueId sum = pool_windows(b, pad_spatial(b, in[0], g, 0.0), g, Op::add);
  int64_t ksize = 1;
  for (int64_t k : g.kernel) ksize *= k;
  if (a.b("count_include_pad")) return {b.mul(sum, b.scalar_like(in[0], 1.0 / static_cast<double>(ksize)))};
  // Divide by the number of real (unpadded) elements under each window.
  Shape ones_shape = {Dim(1), Dim(1)};
  for (size_t i = 0; i < g.sp; ++i) ones_shape.push_back(b.shape(in[0])[2 + i]);
  ValueId ones = b.broadcast(b.scalar_like(in[0], 1.0), ones_shape);
  ValueId count = pool_windows(b, pad_spatial(b, ones, g, 0.0), g, Op::add);
  return {b.div(sum, count)};
}

}  // namespace

void register_conv_pool(RuleTable& t) {
  t[static_cast<size_t>(Op::conv2d)] = {infer_conv2d, decompose_conv2d};
  t[static_cast<size_t>(Op::max_pool)] = {infer_pool, decompose_max_pool};
  t[static_cast<size_t>(Op::avg_pool)] = {infer_pool, decompose_avg_pool};
}

}  // namespace rlx::ops
