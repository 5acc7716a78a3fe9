// Pooling of any spatial rank: MaxPool (dilations, ceil_mode, the Indices output),
// AveragePool (count_include_pad), LpPool and the global poolings, as padded strided window
// slices combined with max/add.
#include "frontends/onnx/ops_util.h"
#include "rlx/error.h"

namespace rlx::frontends::onnx {

namespace {

std::vector<ValueId> one(ValueId v) { return {v}; }

struct PoolGeometry {
  size_t sp = 0;
  Ints kernel, strides, dil, lo, hi, extra, out;  // extra: ceil_mode padding past hi
};

PoolGeometry pool_geometry(NodeCtx& c, const std::vector<int64_t>& xs) {
  PoolGeometry g;
  g.sp = xs.size() - 2;
  size_t sp = g.sp;
  g.kernel = c.attr_ints("kernel_shape");
  if (g.kernel.size() != sp) c.invalid(cat("kernel_shape must have ", sp, " entries"));
  for (int64_t k : g.kernel) {
    if (k <= 0) c.invalid(cat("kernel_shape entry ", k, " must be positive"));
    // One strided slice per kernel offset and axis: beyond this, a global pooling is the way to write it.
    if (k > 4096) c.fail(cat("a pooling window of ", k, " along one axis (the unrolled windows stop at 4096)"));
  }
  g.strides = c.attr_ints("strides", Ints(sp, 1));
  g.dil = c.attr_ints("dilations", Ints(sp, 1));
  Ints pads = c.attr_ints("pads", Ints(2 * sp, 0));
  if (g.strides.size() != sp || g.dil.size() != sp || pads.size() != 2 * sp) c.invalid(cat("strides, dilations and pads must match the ", sp, " spatial dims"));
  for (size_t i = 0; i < sp; ++i)
    if (g.strides[i] <= 0 || g.dil[i] <= 0 || pads[i] < 0 || pads[sp + i] < 0) c.invalid("strides and dilations must be positive, pads non-negative");
  bool ceil_mode = c.attr_i("ceil_mode", 0) != 0;
  std::string auto_pad = c.attr_s("auto_pad", "NOTSET");
  for (size_t i = 0; i < sp; ++i) {
    int64_t in = xs[2 + i], k = (g.kernel[i] - 1) * g.dil[i] + 1, s = g.strides[i];
    int64_t lo = pads[i], hi = pads[sp + i], out;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      out = (in + s - 1) / s;
      int64_t total = std::max<int64_t>((out - 1) * s + k - in, 0);
      lo = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      hi = total - lo;
    } else {
      if (auto_pad == "VALID") lo = hi = 0;
      int64_t span = in + lo + hi - k;
      if (span < 0) c.invalid("the kernel is larger than the padded input");
      out = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
      // A last window starting in the right padding is dropped (as PyTorch and ORT do).
      if (ceil_mode && (out - 1) * s >= in + lo) --out;
    }
    g.lo.push_back(lo);
    g.hi.push_back(hi);
    g.out.push_back(out);
    g.extra.push_back(std::max<int64_t>((out - 1) * s + k - (in + lo + hi), 0));
  }
  return g;
}

// Dims of an [N, C, spatial…] input for window arithmetic: the spatial dims must be static;
// N and C may be symbolic (reported as 1, unused).
std::vector<int64_t> pool_dims(NodeCtx& c, ValueId x) {
  Shape s = c.shape(x);
  if (s.size() < 3) c.invalid(cat("the input must be [N, C, spatial…], got ", shape_str(s)));
  std::vector<int64_t> out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i >= 2 && !s[i].is_static()) c.fail(cat("pooling over a symbolic spatial dim (", shape_str(s), ")"));
    out.push_back(s[i].is_static() ? s[i].value() : 1);
  }
  return out;
}

ValueId pad_spatial(FoldingBuilder& b, ValueId x, const Ints& lo, const Ints& hi, double value) {
  bool any = false;
  for (size_t i = 0; i < lo.size(); ++i) any = any || lo[i] || hi[i];
  if (!any) return x;
  Ints l = {0, 0}, h = {0, 0};
  l.insert(l.end(), lo.begin(), lo.end());
  h.insert(h.end(), hi.begin(), hi.end());
  return b.emit1(Op::pad, {x}, Attrs{{"lo", l}, {"hi", h}, {"value", value}});
}

// Calls f(window slice, offset) for each kernel offset of the (padded) input.
template <class F>
void for_each_window(FoldingBuilder& b, ValueId xp, const PoolGeometry& g, F f) {
  Ints off(g.sp, 0);
  size_t r = g.sp + 2;
  for (;;) {
    Shape start(r, Dim(0)), limit = b.shape(xp);
    Ints stride(r, 1);
    for (size_t i = 0; i < g.sp; ++i) {
      int64_t s0 = off[i] * g.dil[i];
      start[2 + i] = Dim(s0);
      limit[2 + i] = Dim(s0 + (g.out[i] - 1) * g.strides[i] + 1);
      stride[2 + i] = g.strides[i];
    }
    f(b.slice(xp, start, limit, stride), off);
    size_t i = g.sp;
    while (i-- > 0) {
      if (++off[i] < g.kernel[i]) break;
      off[i] = 0;
    }
    if (i == static_cast<size_t>(-1)) return;
  }
}

// The same windows, separably: one axis at a time (max and sum are separable), so a k×k window
// costs 2k slices instead of k².
ValueId reduce_windows(FoldingBuilder& b, ValueId xp, const PoolGeometry& g, Op combine) {
  ValueId v = xp;
  for (size_t i = 0; i < g.sp; ++i) {
    int64_t axis = static_cast<int64_t>(2 + i);
    ValueId acc = kNoValue;
    for (int64_t o = 0; o < g.kernel[i]; ++o) {
      int64_t s0 = o * g.dil[i];
      ValueId w = b.slice_axis(v, axis, Dim(s0), Dim(s0 + (g.out[i] - 1) * g.strides[i] + 1), g.strides[i]);
      acc = acc == kNoValue ? w : b.binary(combine, acc, w);
    }
    v = acc;
  }
  return v;
}

Ints hi_with_extra(const PoolGeometry& g) {
  Ints h = g.hi;
  for (size_t i = 0; i < h.size(); ++i) h[i] += g.extra[i];
  return h;
}

std::vector<ValueId> max_pool(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0);
  auto xs = pool_dims(c, x);
  PoolGeometry g = pool_geometry(c, xs);
  DType d = c.dtype(x);
  bool want_idx = c.wants(1);
  // The plain 2-D case is RLX's max_pool (devices with a pooling kernel claim it; the others
  // decompose it into the same windows as below); dilations, ceil_mode and Indices unroll here.
  bool plain = !want_idx && g.sp == 2;
  for (size_t i = 0; i < g.sp && plain; ++i) plain = g.dil[i] == 1 && g.extra[i] == 0 && g.lo[i] < g.kernel[i] && g.hi[i] < g.kernel[i];
  if (plain)
    return {b.emit1(Op::max_pool, {x}, Attrs{{"kernel", g.kernel}, {"strides", g.strides}, {"pads", Ints{g.lo[0], g.lo[1], g.hi[0], g.hi[1]}}})};
  ValueId xp = pad_spatial(b, x, g.lo, hi_with_extra(g), lowest_of(d));
  if (!want_idx) return {reduce_windows(b, xp, g, Op::max)};
  int64_t windows = 1;
  for (int64_t k : g.kernel) windows *= k;
  if (windows > 4096) c.fail(cat("the Indices output of a ", windows, "-element window (the unrolled windows stop at 4096)"));
  if (want_idx) xs = c.static_shape(x, "the input (for Indices)");
  int64_t order = c.attr_i("storage_order", 0);
  // Flat index (over the unpadded input) of each window's element, per offset.
  std::vector<int64_t> sp_in(xs.begin() + 2, xs.end());
  ValueId acc = kNoValue, acc_idx = kNoValue;
  Shape out_shape = {c.shape(x)[0], c.shape(x)[1]};
  for (int64_t o : g.out) out_shape.push_back(Dim(o));
  ValueId base = kNoValue;
  if (want_idx) {
    int64_t plane = 1;
    for (int64_t v : sp_in) plane *= v;
    ValueId nc = b.add(b.mul(b.iota(out_shape, DType::i64, 0), b.scalar(DType::i64, static_cast<double>(xs[1]))), b.iota(out_shape, DType::i64, 1));
    base = b.mul(nc, b.scalar(DType::i64, static_cast<double>(plane)));
  }
  for_each_window(b, xp, g, [&](ValueId w, const Ints& off) {
    ValueId idx = kNoValue;
    if (want_idx) {
      // spatial index of the element under this offset at every output position
      std::vector<int64_t> osz(g.out.begin(), g.out.end());
      int64_t n = 1;
      for (int64_t v : osz) n *= v;
      std::vector<int64_t> vals(static_cast<size_t>(checked_table(c, n, "pooling index table")));
      std::vector<int64_t> coord(g.sp);
      for (int64_t p = 0; p < n; ++p) {
        int64_t rem = p;
        for (size_t i = g.sp; i-- > 0;) {
          coord[i] = rem % osz[i];
          rem /= osz[i];
        }
        int64_t flat = 0, stride = 1;
        if (order == 0) {
          for (size_t i = g.sp; i-- > 0;) {
            int64_t pos = coord[i] * g.strides[i] + off[i] * g.dil[i] - g.lo[i];
            flat += pos * stride;
            stride *= sp_in[i];
          }
        } else {
          for (size_t i = 0; i < g.sp; ++i) {
            int64_t pos = coord[i] * g.strides[i] + off[i] * g.dil[i] - g.lo[i];
            flat += pos * stride;
            stride *= sp_in[i];
          }
        }
        vals[static_cast<size_t>(p)] = flat;
      }
      std::vector<int64_t> cshape = {1, 1};
      cshape.insert(cshape.end(), osz.begin(), osz.end());
      idx = b.add(base, b.constant(Tensor::from_vector(vals, cshape)));
    }
    if (acc == kNoValue) {
      acc = w;
      acc_idx = idx;
      return;
    }
    if (want_idx) {
      ValueId take = b.binary(Op::gt, w, acc);
      acc_idx = b.select(take, idx, acc_idx);
    }
    acc = b.max(acc, w);
  });
  std::vector<ValueId> out = {acc};
  if (want_idx) out.push_back(acc_idx);
  return out;
}

std::vector<ValueId> avg_pool(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0);
  auto xs = pool_dims(c, x);
  PoolGeometry g = pool_geometry(c, xs);
  bool include_pad = c.attr_i("count_include_pad", 0) != 0;
  ValueId xp = pad_spatial(b, x, g.lo, hi_with_extra(g), 0.0);
  ValueId sum = reduce_windows(b, xp, g, Op::add);
  // Elements under each window: real ones, plus the explicit padding with count_include_pad
  // (never the ceil_mode overhang). A constant over the spatial dims, folded at import.
  Shape ones_shape = {Dim(1), Dim(1)};
  for (size_t i = 0; i < g.sp; ++i) ones_shape.push_back(Dim(xs[2 + i]));
  ValueId ones = full(b, c.dtype(x), ones_shape, 1.0);
  ValueId op = include_pad ? pad_spatial(b, pad_spatial(b, ones, g.lo, g.hi, 1.0), Ints(g.sp, 0), g.extra, 0.0)
                           : pad_spatial(b, ones, g.lo, hi_with_extra(g), 0.0);
  return one(b.div(sum, reduce_windows(b, op, g, Op::add)));
}

std::vector<ValueId> lp_pool(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0);
  auto xs = pool_dims(c, x);
  PoolGeometry g = pool_geometry(c, xs);
  double p = static_cast<double>(c.attr_i("p", 2));
  ValueId xa = b.binary(Op::pow, b.unary(Op::abs, x), like(b, x, p));
  ValueId sum = reduce_windows(b, pad_spatial(b, xa, g.lo, hi_with_extra(g), 0.0), g, Op::add);
  return one(b.binary(Op::pow, sum, like(b, sum, 1.0 / p)));
}

std::vector<ValueId> global_pool(NodeCtx& c, const char* kind) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0);
  Ints axes = iota_ints(c.rank(x), 2);
  if (std::string(kind) == "mean") {
    ValueId s = b.reduce(x, "sum", axes, true);
    Dim n(1);
    for (int64_t a : axes) n = n * c.shape(x)[static_cast<size_t>(a)];
    return one(b.div(s, b.cast(dim_value(b, n), c.dtype(x))));
  }
  return one(b.reduce(x, kind, axes, true));
}
std::vector<ValueId> global_avg(NodeCtx& c) { return global_pool(c, "mean"); }
std::vector<ValueId> global_max(NodeCtx& c) { return global_pool(c, "max"); }

std::vector<ValueId> global_lp(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0);
  double p = static_cast<double>(c.attr_i("p", 2));
  ValueId s = b.reduce(b.binary(Op::pow, b.unary(Op::abs, x), like(b, x, p)), "sum", iota_ints(c.rank(x), 2), true);
  return one(b.binary(Op::pow, s, like(b, s, 1.0 / p)));
}

}  // namespace

void register_pool(OpTable& t) {
  t.insert(t.end(), {
                        {"", "MaxPool", 1, max_pool},
                        {"", "AveragePool", 1, avg_pool},
                        {"", "LpPool", 1, lp_pool},
                        {"", "GlobalAveragePool", 1, global_avg},
                        {"", "GlobalMaxPool", 1, global_max},
                        {"", "GlobalLpPool", 1, global_lp},
                    });
}

}  // namespace rlx::frontends::onnx
