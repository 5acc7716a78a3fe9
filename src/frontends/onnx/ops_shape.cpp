// Shape and layout operators: Reshape, Flatten, (Un)Squeeze, Transpose, Concat, Split, Slice,
// Expand, Tile, Pad, Shape, Size, ConstantOfShape, Constant, Range, DepthToSpace,
// SpaceToDepth, EyeLike, Trilu, Dropout (inference).
#include "frontends/onnx/ops_util.h"
#include "frontends/onnx/proto.h"
#include "rlx/error.h"

namespace rlx::frontends::onnx {

namespace {

std::vector<ValueId> one(ValueId v) { return {v}; }

std::vector<ValueId> reshape(NodeCtx& c) {
  ValueId x = c.in(0);
  std::vector<Dim> target;
  if (c.opset < 5) {
    for (int64_t d : c.attr_ints("shape")) target.push_back(Dim(d));
  } else {
    target = c.dims(1, "shape");
  }
  bool allowzero = c.attr_i("allowzero", 0) != 0;
  Shape s = c.shape(x), out;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == Dim(0) && !allowzero) {
      if (i >= s.size()) c.invalid(cat("shape entry ", i, " is 0 (copy the input dim) but the input has rank ", s.size()));
      out.push_back(s[i]);
    } else {
      out.push_back(target[i]);
    }
  }
  return one(c.b.reshape(x, out));
}

std::vector<ValueId> flatten(NodeCtx& c) {
  ValueId x = c.in(0);
  int64_t r = c.rank(x), a = c.attr_i("axis", 1);
  if (a < 0) a += r;
  if (a < 0 || a > r) c.invalid(cat("axis ", c.attr_i("axis", 1), " is out of range for rank ", r));
  return one(flatten2d(c.b, x, a));
}

std::vector<ValueId> squeeze(NodeCtx& c) {
  ValueId x = c.in(0);
  int64_t r = c.rank(x);
  Ints axes = c.opset >= 13 ? (c.has(1) ? c.ints(1, "axes") : Ints{}) : c.attr_ints("axes");
  Shape s = c.shape(x);
  if (axes.empty()) {
    for (int64_t i = 0; i < r; ++i)
      if (s[static_cast<size_t>(i)] == Dim(1)) axes.push_back(i);
  }
  for (auto& a : axes) {
    a = c.axis(a, r);
    if (a >= r) c.invalid(cat("cannot squeeze axis ", a, " of a rank-", r, " tensor"));  // axis() lets a scalar have axis 0
    if (s[static_cast<size_t>(a)] != Dim(1)) c.invalid(cat("cannot squeeze axis ", a, " of size ", s[static_cast<size_t>(a)].str()));
  }
  return one(remove_axes(c.b, x, axes));
}

std::vector<ValueId> unsqueeze(NodeCtx& c) {
  ValueId x = c.in(0);
  Ints axes = c.opset >= 13 ? c.ints(1, "axes") : c.attr_ints("axes");
  int64_t r = c.rank(x) + static_cast<int64_t>(axes.size());
  for (auto& a : axes) a = c.axis(a, r);
  return one(insert_axes(c.b, x, axes));
}

std::vector<ValueId> transpose(NodeCtx& c) {
  ValueId x = c.in(0);
  int64_t r = c.rank(x);
  Ints perm = c.attr_ints("perm");
  if (perm.empty())
    for (int64_t i = r - 1; i >= 0; --i) perm.push_back(i);
  for (auto& p : perm) p = c.axis(p, r);
  return one(c.b.transpose(x, perm));
}

std::vector<ValueId> concat(NodeCtx& c) {
  std::vector<ValueId> xs;
  for (size_t i = 0; i < c.num_inputs(); ++i)
    if (c.has(i)) xs.push_back(c.in(i));
  int64_t axis = c.axis(c.attr_i("axis", c.opset < 4 ? 1 : 0), c.rank(xs[0]));
  return one(c.b.concat(xs, axis));
}

std::vector<ValueId> split(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0);
  int64_t axis = c.axis(c.attr_i("axis", 0), c.rank(x));
  Dim n = c.shape(x)[static_cast<size_t>(axis)];
  Ints parts = c.opset >= 13 ? (c.has(1) ? c.ints(1, "split") : Ints{}) : c.attr_ints("split");
  size_t outs = c.num_outputs();
  if (parts.empty()) {
    if (!n.is_static()) c.fail("an equal split of a symbolic dim");
    int64_t total = n.value();
    int64_t k = static_cast<int64_t>(c.opset >= 18 && c.has_attr("num_outputs") ? c.attr_i("num_outputs", 1) : static_cast<int64_t>(outs));
    if (k <= 0) c.invalid("an equal split needs at least one output");
    int64_t each = (total + k - 1) / k;
    for (int64_t i = 0; i < k; ++i) parts.push_back(std::min(each, total - i * each));
  }
  std::vector<ValueId> r;
  Dim start(0);
  for (int64_t p : parts) {
    r.push_back(b.slice_axis(x, axis, start, start + Dim(p)));
    start = start + Dim(p);
  }
  return r;
}

// Slice along each listed axis with ONNX's clamping; negative steps go through a gather.
std::vector<ValueId> slice(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0);
  int64_t r = c.rank(x);
  std::vector<Dim> starts, ends;
  Ints axes, steps;
  if (c.opset < 10) {
    for (int64_t v : c.attr_ints("starts")) starts.push_back(Dim(v));
    for (int64_t v : c.attr_ints("ends")) ends.push_back(Dim(v));
    axes = c.attr_ints("axes");
  } else {
    starts = c.dims(1, "starts");
    ends = c.dims(2, "ends");
    if (c.has(3)) axes = c.ints(3, "axes");
    if (c.has(4)) steps = c.ints(4, "steps");
  }
  if (axes.empty()) axes = iota_ints(static_cast<int64_t>(starts.size()));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    c.invalid("starts, ends, axes and steps must have the same length");
  Shape s = c.shape(x);
  Shape st(static_cast<size_t>(r), Dim(0)), lim = s;
  Ints stride(static_cast<size_t>(r), 1);
  std::vector<std::pair<int64_t, std::vector<int64_t>>> gathers;  // negative steps
  for (size_t k = 0; k < starts.size(); ++k) {
    int64_t a = c.axis(axes[k], r);
    int64_t step = steps[k];
    if (step == 0) c.invalid("a step of 0");
    const Dim& n = s[static_cast<size_t>(a)];
    if (!n.is_static() || !starts[k].is_static() || !ends[k].is_static()) {
      if (step != 1) c.fail("a strided slice of a symbolic dim");
      auto sym = [&](const Dim& v) {
        if (!v.is_static()) return v;
        int64_t x = v.value();
        if (x >= (int64_t{1} << 31)) return n;
        if (x < 0) return n + Dim(x);
        return v;
      };
      st[static_cast<size_t>(a)] = sym(starts[k]);
      lim[static_cast<size_t>(a)] = sym(ends[k]);
      continue;
    }
    int64_t len = n.value(), b0 = starts[k].value(), e0 = ends[k].value();
    if (b0 < 0) b0 += len;
    if (e0 < 0) e0 += len;
    if (step > 0) {
      b0 = std::clamp<int64_t>(b0, 0, len);
      e0 = std::clamp<int64_t>(e0, 0, len);
      if (e0 < b0) e0 = b0;
      st[static_cast<size_t>(a)] = Dim(b0);
      lim[static_cast<size_t>(a)] = Dim(e0);
      stride[static_cast<size_t>(a)] = step;
    } else {
      b0 = std::clamp<int64_t>(b0, 0, len - 1);
      e0 = std::clamp<int64_t>(e0, -1, len - 1);
      checked_table(c, (b0 - e0) / -step + 1, "reversed slice index table");
      std::vector<int64_t> idx;
      for (int64_t i = b0; i > e0; i += step) idx.push_back(i);
      gathers.push_back({a, idx});
    }
  }
  ValueId y = b.slice(x, st, lim, stride);
  for (auto& [a, idx] : gathers) {
    int64_t m = static_cast<int64_t>(idx.size());
    y = b.gather(y, b.constant(Tensor::from_vector(idx, {m})), a);
  }
  return one(y);
}

std::vector<ValueId> expand(NodeCtx& c) {
  ValueId x = c.in(0);
  std::vector<Dim> target = c.dims(1, "shape");
  Shape out = broadcast_shape(c.shape(x), Shape(target.begin(), target.end()));
  return one(c.b.broadcast(x, out));
}

// Tile as one broadcast: [d…] → [1,d0,1,d1,…] → [r0,d0,r1,d1,…] → [r0·d0, …].
std::vector<ValueId> tile(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0);
  Ints reps = c.ints(1, "repeats");
  Shape s = c.shape(x);
  if (reps.size() != s.size()) c.invalid(cat("repeats has ", reps.size(), " entries for rank ", s.size()));
  Shape split, wide, out;
  for (size_t i = 0; i < s.size(); ++i) {
    split.push_back(Dim(1));
    split.push_back(s[i]);
    wide.push_back(Dim(reps[i]));
    wide.push_back(s[i]);
    out.push_back(Dim(reps[i]) * s[i]);
  }
  return one(b.reshape(b.broadcast(b.reshape(x, split), wide), out));
}

std::vector<ValueId> pad(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0);
  int64_t r = c.rank(x);
  std::string mode = c.attr_s("mode", "constant");
  Ints pads;
  double value = 0;
  if (c.opset < 11) {
    pads = c.has_attr("pads") ? c.attr_ints("pads") : c.attr_ints("paddings");
    value = c.attr_f("value", 0.0f);
  } else {
    pads = c.ints(1, "pads");
    if (c.has(2)) value = c.scalar(2, "constant_value");
  }
  Ints axes = iota_ints(r);
  if (c.opset >= 18 && c.has(3)) {
    axes = c.ints(3, "axes");
    for (auto& a : axes) a = c.axis(a, r);
  }
  size_t na = axes.size();
  if (pads.size() != 2 * na) c.invalid(cat("pads has ", pads.size(), " entries, expected ", 2 * na));
  Ints lo(static_cast<size_t>(r), 0), hi(static_cast<size_t>(r), 0);
  for (size_t k = 0; k < na; ++k) {
    lo[static_cast<size_t>(axes[k])] = pads[k];
    hi[static_cast<size_t>(axes[k])] = pads[na + k];
  }
  if (mode != "constant" && mode != "reflect" && mode != "edge") c.fail(cat("pad mode '", mode, "'"));
  if (mode != "constant") {
    // Negative pads crop first; reflect/edge then pad the rest.
    Shape s = c.shape(x);
    Shape st(static_cast<size_t>(r), Dim(0)), lim = s;
    bool crop = false;
    for (size_t i = 0; i < lo.size(); ++i) {
      if (lo[i] < 0) st[i] = Dim(-lo[i]), lo[i] = 0, crop = true;
      if (hi[i] < 0) lim[i] = s[i] + Dim(hi[i]), hi[i] = 0, crop = true;
    }
    if (crop) x = b.slice(x, st, lim, Ints(static_cast<size_t>(r), 1));
  }
  bool any = false;
  for (size_t i = 0; i < lo.size(); ++i) any = any || lo[i] || hi[i];
  if (!any) return one(x);
  return one(b.emit1(Op::pad, {x}, Attrs{{"lo", lo}, {"hi", hi}, {"mode", mode}, {"value", value}}));
}

std::vector<ValueId> shape_op(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  Shape s = c.shape(c.in(0));
  int64_t r = static_cast<int64_t>(s.size());
  int64_t start = c.attr_i("start", 0), end = c.attr_i("end", r);
  if (start < 0) start += r;
  if (end < 0) end += r;
  start = std::clamp<int64_t>(start, 0, r);
  end = std::clamp<int64_t>(end, start, r);
  Shape part(s.begin() + start, s.begin() + end);
  int64_t n = end - start;
  if (shape_is_static(part)) return one(b.constant(Tensor::from_vector(shape_values(part), {n})));
  std::vector<ValueId> parts;
  for (const Dim& d : part) parts.push_back(b.reshape(dim_value(b, d), {Dim(1)}));
  ValueId v = b.concat(parts, 0);
  b.set_dims_value(v, std::vector<Dim>(part.begin(), part.end()));
  return one(v);
}

std::vector<ValueId> size_op(NodeCtx& c) {
  Dim n = shape_numel(c.shape(c.in(0)));
  ValueId v = dim_value(c.b, n);
  if (!n.is_static()) c.b.set_dims_value(v, {n});
  return one(v);
}

std::vector<ValueId> constant_of_shape(NodeCtx& c) {
  std::vector<Dim> dims = c.dims(0, "shape");
  Tensor v = c.has_attr("value") ? c.attr_t("value") : Tensor::scalar(DType::f32, 0.0);
  ValueId s = c.b.constant(v.reshape({}));
  return one(c.b.broadcast(s, Shape(dims.begin(), dims.end())));
}

std::vector<ValueId> constant(NodeCtx& c) {
  if (c.has_attr("value")) return one(c.b.constant(c.attr_t("value")));
  if (c.has_attr("value_float")) return one(c.b.scalar(DType::f32, c.attr_f("value_float", 0)));
  if (c.has_attr("value_int")) return one(c.b.scalar(DType::i64, static_cast<double>(c.attr_i("value_int", 0))));
  if (c.has_attr("value_floats")) {
    auto v = c.attr_floats("value_floats");
    return one(c.b.constant(Tensor::from_vector(v, {static_cast<int64_t>(v.size())})));
  }
  if (c.has_attr("value_ints")) {
    auto v = c.attr_ints("value_ints");
    return one(c.b.constant(Tensor::from_vector(v, {static_cast<int64_t>(v.size())})));
  }
  c.fail("only tensor, float(s) and int(s) constants are supported (strings and sparse tensors are not)");
}

// start + i·delta for i < max(ceil((limit − start) / delta), 0); the count must be known.
std::vector<ValueId> range(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  DType d = c.dtype(c.in(0));
  Dim n(0);
  auto sym_limit = is_integer(d) ? b.dims_value(c.in(1)) : std::nullopt;
  if (sym_limit && sym_limit->size() == 1 && !(*sym_limit)[0].is_static()) {
    // arange(start, S) with a symbolic S (a sequence length): S − start elements, delta 1.
    double start = c.scalar(0, "start"), delta = c.scalar(2, "delta");
    if (delta != 1) c.fail("a symbolic limit with a step other than 1");
    n = (*sym_limit)[0] - Dim(static_cast<int64_t>(start));
  } else {
    double start = c.scalar(0, "start"), limit = c.scalar(1, "limit"), delta = c.scalar(2, "delta");
    if (delta == 0) c.invalid("delta is 0");
    n = Dim(std::max<int64_t>(static_cast<int64_t>(std::ceil((limit - start) / delta)), 0));
  }
  ValueId i = b.iota({n}, d, 0);
  ValueId st = b.reshape(c.in(0), {}), de = b.reshape(c.in(2), {});
  return one(b.add(b.mul(i, de), st));
}

std::vector<ValueId> depth_to_space(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0);
  c.require_rank(x, 4, 4, "the input");
  auto s = c.static_shape(x, "DepthToSpace");
  int64_t bs = c.attr_i("blocksize", 0), N = s[0], C = s[1], H = s[2], W = s[3];
  if (bs <= 0 || bs > C || C % (bs * bs)) c.invalid(cat("blocksize ", bs, " does not divide the ", C, " channels"));
  int64_t Co = C / (bs * bs);
  ValueId t;
  if (c.attr_s("mode", "DCR") == "DCR") {
    t = b.transpose(reshape_to(b, x, {N, bs, bs, Co, H, W}), {0, 3, 4, 1, 5, 2});
  } else {
    t = b.transpose(reshape_to(b, x, {N, Co, bs, bs, H, W}), {0, 1, 4, 2, 5, 3});
  }
  return one(reshape_to(b, t, {N, Co, H * bs, W * bs}));
}

std::vector<ValueId> space_to_depth(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0);
  c.require_rank(x, 4, 4, "the input");
  auto s = c.static_shape(x, "SpaceToDepth");
  int64_t bs = c.attr_i("blocksize", 0), N = s[0], C = s[1], H = s[2], W = s[3];
  if (bs <= 0 || bs > H || bs > W || H % bs || W % bs) c.invalid(cat("blocksize ", bs, " does not divide ", H, "x", W));
  ValueId t = b.transpose(reshape_to(b, x, {N, C, H / bs, bs, W / bs, bs}), {0, 3, 5, 1, 2, 4});
  return one(reshape_to(b, t, {N, C * bs * bs, H / bs, W / bs}));
}

std::vector<ValueId> eye_like(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0);
  Shape s = c.shape(x);
  if (s.size() != 2) c.invalid("the input must be 2-D");
  DType d = c.dtype(x);
  if (c.has_attr("dtype")) {
    auto t = dtype_from_onnx(static_cast<int32_t>(c.attr_i("dtype", 1)));
    if (!t) c.fail("an unsupported dtype");
    d = *t;
  }
  int64_t k = c.attr_i("k", 0);
  ValueId diff = b.sub(b.iota(s, DType::i64, 1), b.iota(s, DType::i64, 0));
  return one(b.cast(b.binary(Op::eq, diff, b.scalar(DType::i64, static_cast<double>(k))), d));
}

// Keeps j − i ≥ k (upper) or j − i ≤ k (lower) over the last two dims; k may be a run-time value.
std::vector<ValueId> trilu(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0);
  Shape s = c.shape(x);
  if (s.size() < 2) c.invalid("the input must have rank ≥ 2");
  Shape m(s.end() - 2, s.end());
  ValueId diff = b.sub(b.iota(m, DType::i64, 1), b.iota(m, DType::i64, 0));
  ValueId k = c.has(1) ? b.reshape(b.cast(c.in(1), DType::i64), {}) : b.scalar(DType::i64, 0);
  ValueId keep = b.binary(c.attr_i("upper", 1) ? Op::ge : Op::le, diff, k);
  return one(b.select(keep, x, b.scalar(c.dtype(x), 0)));
}

std::vector<ValueId> dropout(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0);
  bool training = false;
  double ratio = c.attr_f("ratio", 0.5f);
  if (c.opset >= 12) {
    if (c.has(2)) training = c.scalar(2, "training_mode") != 0;
    if (c.has(1) && training) ratio = c.scalar(1, "ratio");
  } else if (c.opset < 7) {
    training = c.attr_i("is_test", 0) == 0;
  }
  if (training && ratio != 0) c.fail("training-mode dropout draws random masks, which RLX does not import");
  std::vector<ValueId> out = {x};
  if (c.wants(1)) out.push_back(b.broadcast(b.scalar(DType::boolean, 1), c.shape(x)));
  return out;
}

}  // namespace

void register_shape(OpTable& t) {
  t.insert(t.end(), {
                        {"", "Reshape", 1, reshape},
                        {"", "Flatten", 1, flatten},
                        {"", "Squeeze", 1, squeeze},
                        {"", "Unsqueeze", 1, unsqueeze},
                        {"", "Transpose", 1, transpose},
                        {"", "Concat", 1, concat},
                        {"", "Split", 1, split},
                        {"", "Slice", 1, slice},
                        {"", "Expand", 8, expand},
                        {"", "Tile", 6, tile},
                        {"", "Pad", 1, pad},
                        {"", "Shape", 1, shape_op},
                        {"", "Size", 1, size_op},
                        {"", "ConstantOfShape", 9, constant_of_shape},
                        {"", "Constant", 1, constant},
                        {"", "Range", 11, range},
                        {"", "DepthToSpace", 1, depth_to_space},
                        {"", "SpaceToDepth", 1, space_to_depth},
                        {"", "EyeLike", 9, eye_like},
                        {"", "Trilu", 14, trilu},
                        {"", "Dropout", 1, dropout},
                    });
}

}  // namespace rlx::frontends::onnx
