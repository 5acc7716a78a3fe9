// Reverse-mode rules of reductions, contractions and data movement.
#include <algorithm>
#include <numeric>

#include "ops/infer_util.h"
#include "ops/vjp_util.h"

namespace rlx::ops {

namespace {

using V = std::vector<ValueId>;
constexpr ValueId kNone = ir::kNoValue;

Ints norm(const Ints& axes, size_t rank) {
  Ints out;
  for (int64_t a : axes) out.push_back(a < 0 ? a + static_cast<int64_t>(rank) : a);
  return out;
}

// The cotangent of a reduction, reshaped to keepdims form and broadcast over the input.
ValueId expand_reduced(Builder& b, ValueId g, ValueId x, const Ints& axes) {
  Shape keep = b.shape(x);
  for (int64_t a : axes) keep[static_cast<size_t>(a)] = Dim(1);
  return b.broadcast(b.reshape(g, keep), b.shape(x));
}

V reduce(Builder& b, const VjpArgs& a) {
  const std::string& kind = a.attrs.s("kind");
  ValueId x = a.in[0];
  Ints axes = norm(a.attrs.ints("axes"), b.rank(x));
  if (kind == "argmax" || kind == "argmin") return {kNone};
  ValueId g = expand_reduced(b, a.cot[0], x, axes);
  if (kind == "sum") return {g};
  ValueId y = expand_reduced(b, a.out[0], x, axes);
  if (kind == "prod") {
    ValueId d = b.div(y, x);  // ∂y/∂x: the product of the others
    return {b.mul(g, conj_if_complex(b, d))};
  }
  // max/min: shared equally between the elements that attain it.
  ValueId hit = b.cast(b.binary(Op::eq, x, y), b.dtype(x));
  ValueId count = expand_reduced(b, b.reduce(hit, "sum", axes, a.attrs.b("keepdims")), x, axes);
  return {b.div(b.mul(g, hit), count)};
}

V cumsum(Builder& b, const VjpArgs& a) {
  return {b.emit1(Op::cumsum, {a.cot[0]}, Attrs{{"axis", a.attrs.i("axis")}, {"exclusive", a.attrs.b("exclusive")}, {"reverse", !a.attrs.b("reverse")}})};
}

// Transposes the result of a gradient contraction into the operand's own dim order: `dims_of`
// maps each operand dim to its position in `r`.
ValueId to_operand_order(Builder& b, ValueId r, const std::vector<int64_t>& pos) { return b.transpose(r, Ints(pos.begin(), pos.end())); }

int64_t rank_in(const Ints& sorted_vals, int64_t v) {
  return std::lower_bound(sorted_vals.begin(), sorted_vals.end(), v) - sorted_vals.begin();
}

V dot_general(Builder& b, const VjpArgs& a) {
  ValueId x = a.in[0], w = a.in[1], g = a.cot[0];
  size_t xr = b.rank(x), wr = b.rank(w);
  const Intss& batch = a.attrs.intss("batch");
  const Intss& contract = a.attrs.intss("contract");
  Ints lb = norm(batch[0], xr), rb = norm(batch[1], wr), lc = norm(contract[0], xr), rc = norm(contract[1], wr);
  auto free_dims = [](size_t r, const Ints& bd, const Ints& cd) {
    Ints f;
    for (size_t i = 0; i < r; ++i)
      if (std::find(bd.begin(), bd.end(), i) == bd.end() && std::find(cd.begin(), cd.end(), i) == cd.end()) f.push_back(static_cast<int64_t>(i));
    return f;
  };
  Ints lf = free_dims(xr, lb, lc), rf = free_dims(wr, rb, rc);
  int64_t nb = static_cast<int64_t>(lb.size()), nlf = static_cast<int64_t>(lf.size()), nrf = static_cast<int64_t>(rf.size());
  Ints g_batch(static_cast<size_t>(nb)), g_lf(static_cast<size_t>(nlf)), g_rf(static_cast<size_t>(nrf));
  std::iota(g_batch.begin(), g_batch.end(), 0);
  std::iota(g_lf.begin(), g_lf.end(), nb);
  std::iota(g_rf.begin(), g_rf.end(), nb + nlf);
  DType xd = b.dtype(x), wd = b.dtype(w);
  if (b.dtype(g) != xd) g = b.cast(g, xd);
  // dx = g · w over w's free dims → [batch, x free, w contracting (ascending)]
  // gradient products keep the forward's compute type (bf16 matmuls stay bf16 in training)
  auto dot = [&](ValueId x1, ValueId x2, Intss batch, Intss contract) {
    Attrs at{{"batch", std::move(batch)}, {"contract", std::move(contract)}};
    if (const ir::AttrValue* c = a.attrs.find("compute")) at.set("compute", *c);
    return b.emit1(Op::dot_general, {x1, x2}, at);
  };
  // complex operands: x̄ = ḡ·conj(w), w̄ = conj(x)·ḡ (complex.cpp's convention)
  ValueId dx = dot(g, conj_if_complex(b, w), {g_batch, rb}, {g_rf, rf});
  Ints rc_sorted = rc;
  std::sort(rc_sorted.begin(), rc_sorted.end());
  std::vector<int64_t> px(xr);
  for (size_t i = 0; i < lb.size(); ++i) px[static_cast<size_t>(lb[i])] = static_cast<int64_t>(i);
  for (size_t j = 0; j < lf.size(); ++j) px[static_cast<size_t>(lf[j])] = nb + static_cast<int64_t>(j);
  for (size_t i = 0; i < lc.size(); ++i) px[static_cast<size_t>(lc[i])] = nb + nlf + rank_in(rc_sorted, rc[i]);
  // dw = x · g over x's free dims → [batch, x contracting (ascending), w free]
  ValueId dw = dot(conj_if_complex(b, x), g, {lb, g_batch}, {lf, g_lf});
  Ints lc_sorted = lc;
  std::sort(lc_sorted.begin(), lc_sorted.end());
  std::vector<int64_t> pw(wr);
  for (size_t i = 0; i < rb.size(); ++i) pw[static_cast<size_t>(rb[i])] = static_cast<int64_t>(i);
  for (size_t i = 0; i < rc.size(); ++i) pw[static_cast<size_t>(rc[i])] = nb + rank_in(lc_sorted, lc[i]);
  for (size_t j = 0; j < rf.size(); ++j) pw[static_cast<size_t>(rf[j])] = nb + static_cast<int64_t>(lc.size()) + static_cast<int64_t>(j);
  // transpose(r, perm) puts r's dim perm[i] at position i: operand dim i lives at pos[i] in r.
  return {b.cast(to_operand_order(b, dx, px), xd), b.cast(to_operand_order(b, dw, pw), wd)};
}

V reshape(Builder& b, const VjpArgs& a) { return {b.reshape(a.cot[0], b.shape(a.in[0]))}; }
V transpose(Builder& b, const VjpArgs& a) { return {b.transpose(a.cot[0], invert_perm(a.attrs.ints("perm")))}; }
V broadcast(Builder& b, const VjpArgs& a) { return {unbroadcast(b, a.cot[0], b.shape(a.in[0]))}; }

std::vector<int64_t> static_dims(Builder& b, ValueId v, const char* op) {
  Shape s = b.shape(v);
  std::vector<int64_t> out;
  for (const auto& d : s) {
    auto x = d.try_value();
    if (!x) throw Error(ErrorKind::unsupported, cat("autodiff: the gradient of ", op, " needs static shapes, got ", shape_str(s)));
    out.push_back(*x);
  }
  return out;
}

// Places g (the slice) back into zeros of the input's shape: pad with the stride as interior.
// Dims the slice leaves whole may stay symbolic.
V slice(Builder& b, const VjpArgs& a) {
  Shape in = b.shape(a.in[0]), out = b.shape(a.out[0]);
  const Shape& start = a.attrs.dims("start");
  const Shape& limit = a.attrs.dims("limit");
  const Ints& stride = a.attrs.ints("stride");
  Ints lo, hi, interior;
  for (size_t d = 0; d < in.size(); ++d) {
    if (start[d] == Dim(0) && limit[d] == in[d] && stride[d] == 1) {
      lo.push_back(0);
      hi.push_back(0);
      interior.push_back(0);
      continue;
    }
    auto n = in[d].try_value(), m = out[d].try_value(), s0 = start[d].try_value();
    if (!n || !m || !s0)
      throw Error(ErrorKind::unsupported, cat("autodiff: the gradient of mir.slice needs static sizes in sliced dim ", d, ", got ", shape_str(in)));
    int64_t last = *m ? *s0 + (*m - 1) * stride[d] : *s0 - 1;
    lo.push_back(*s0);
    interior.push_back(stride[d] - 1);
    hi.push_back(*m ? *n - 1 - last : *n - *s0);  // an empty slice pads to the full size
  }
  return {b.emit1(Op::pad, {a.cot[0]}, Attrs{{"lo", lo}, {"hi", hi}, {"interior", interior}})};
}

V concat(Builder& b, const VjpArgs& a) {
  int64_t axis = normalize_axis(Op::concat, a.attrs.i("axis"), b.rank(a.out[0]));
  V out;
  Dim offset(0);
  for (ValueId x : a.in) {
    Dim len = b.shape(x)[static_cast<size_t>(axis)];
    out.push_back(b.slice_axis(a.cot[0], axis, offset, offset + len));
    offset = offset + len;
  }
  return out;
}

// reflect/edge padding is a gather along each padded dim with fixed indices; its gradient
// scatters back, one dim at a time.
V pad_gathered(Builder& b, const VjpArgs& a, const std::vector<int64_t>& in) {
  const Ints& lo = a.attrs.ints("lo");
  const Ints& hi = a.attrs.ints("hi");
  bool edge = a.attrs.s("mode") == "edge";
  ValueId g = a.cot[0];
  for (size_t d = in.size(); d-- > 0;) {
    if (lo[d] == 0 && hi[d] == 0) continue;  // (in[d] is only known for padded dims)
    int64_t n = in[d], m = n + lo[d] + hi[d];
    std::vector<int64_t> idx(static_cast<size_t>(m));
    for (int64_t o = 0; o < m; ++o) {
      int64_t p = o - lo[d];
      if (p < 0) p = edge ? 0 : -p;
      if (p >= n) p = edge ? n - 1 : 2 * (n - 1) - p;
      idx[static_cast<size_t>(o)] = p;
    }
    Shape zs = b.shape(g);
    zs[d] = Dim(n);
    ValueId zeros = b.broadcast(b.scalar_like(g, 0.0), zs);
    ValueId indices = b.constant(Tensor::from_vector(idx, {m}));
    g = b.emit1(Op::scatter, {zeros, indices, g}, Attrs{{"axis", static_cast<int64_t>(d)}, {"reduce", std::string("add")}});
  }
  return {g};
}

V pad(Builder& b, const VjpArgs& a) {
  Shape shape = b.shape(a.in[0]);
  const Ints& lo = a.attrs.ints("lo");
  const Ints& hi = a.attrs.ints("hi");
  Ints interior = a.attrs.has("interior") ? a.attrs.ints("interior") : Ints(shape.size(), 0);
  std::vector<int64_t> in(shape.size(), -1);  // static sizes of the padded dims
  for (size_t d = 0; d < shape.size(); ++d) {
    if (lo[d] == 0 && hi[d] == 0 && interior[d] == 0) continue;
    auto n = shape[d].try_value();
    if (!n) throw Error(ErrorKind::unsupported, cat("autodiff: the gradient of mir.pad needs static sizes in padded dim ", d, ", got ", shape_str(shape)));
    in[d] = *n;
  }
  if (a.attrs.s("mode") != "constant") return pad_gathered(b, a, in);
  // The inverse of padding: a strided slice; negative padding (a crop) becomes padding.
  ValueId g = a.cot[0];
  bool crop = false;
  for (size_t d = 0; d < in.size(); ++d) crop = crop || lo[d] < 0 || hi[d] < 0;
  if (crop) {
    Ints neg_lo(in.size(), 0), neg_hi(in.size(), 0);
    for (size_t d = 0; d < in.size(); ++d) {
      neg_lo[d] = std::max<int64_t>(0, -lo[d]);
      neg_hi[d] = std::max<int64_t>(0, -hi[d]);
    }
    g = b.emit1(Op::pad, {g}, Attrs{{"lo", neg_lo}, {"hi", neg_hi}});
  }
  Shape start, limit;
  Ints stride;
  Shape gs = b.shape(g);
  for (size_t d = 0; d < in.size(); ++d) {
    if (in[d] < 0) {
      start.push_back(Dim(0));
      limit.push_back(gs[d]);
      stride.push_back(1);
      continue;
    }
    int64_t s0 = std::max<int64_t>(0, lo[d]);
    start.push_back(Dim(s0));
    limit.push_back(Dim(s0 + (in[d] ? (in[d] - 1) * (interior[d] + 1) + 1 : 0)));
    stride.push_back(interior[d] + 1);
  }
  return {b.slice(g, start, limit, stride)};
}

V gather(Builder& b, const VjpArgs& a) {
  ValueId zeros = zeros_like(b, a.in[0]);
  return {b.emit1(Op::scatter, {zeros, a.in[1], a.cot[0]}, Attrs{{"axis", a.attrs.i("axis")}, {"reduce", std::string("add")}}), kNone};
}

// y = scatter(x, idx, u) along `axis`: the cotangent at a written position goes to the update
// written there (none: the position's x is overwritten, so it gets nothing; add: both get it;
// max/min: shared equally between x and the updates that attain the result, as reduce does).
// "none" assumes distinct indices (with repeats the forward itself depends on write order).
V scatter(Builder& b, const VjpArgs& a) {
  ValueId x = a.in[0], idx = a.in[1], u = a.in[2], g = a.cot[0];
  int64_t axis = a.attrs.i("axis");
  const std::string& red = a.attrs.s("reduce");
  auto at_idx = [&](ValueId v) { return b.gather(v, idx, axis); };
  auto scatter_as = [&](ValueId into, ValueId rows, const char* how) {
    return b.emit1(Op::scatter, {into, idx, rows}, Attrs{{"axis", axis}, {"reduce", std::string(how)}});
  };
  if (red == "add") return {g, kNone, at_idx(g)};
  if (red == "none") return {scatter_as(g, zeros_like(b, u), "none"), kNone, at_idx(g)};
  DType d = b.dtype(x);
  ValueId y = a.out[0];
  ValueId hit_x = b.cast(b.binary(Op::eq, x, y), d), hit_u = b.cast(b.binary(Op::eq, u, at_idx(y)), d);
  ValueId share = b.div(g, b.add(hit_x, scatter_as(zeros_like(b, x), hit_u, "add")));  // ≥ 1 attains every position
  return {b.mul(share, hit_x), kNone, b.mul(at_idx(share), hit_u)};
}

// Reverses the spatial dims (2…) of a conv kernel: a gather with constant indices per dim.
ValueId flip_spatial(Builder& b, ValueId w, const std::vector<int64_t>& ws) {
  for (size_t d = 2; d < ws.size(); ++d) {
    if (ws[d] == 1) continue;
    std::vector<int64_t> idx(static_cast<size_t>(ws[d]));
    for (int64_t i = 0; i < ws[d]; ++i) idx[static_cast<size_t>(i)] = ws[d] - 1 - i;
    w = b.gather(w, b.constant(Tensor::from_vector(idx, {ws[d]})), static_cast<int64_t>(d));
  }
  return w;
}

// Slices the spatial dims of v to [start, start + len); no node when nothing is cut.
ValueId crop_spatial(Builder& b, ValueId v, const Ints& start, const std::vector<int64_t>& len) {
  Shape sh = b.shape(v), lo = {Dim(0), Dim(0)}, hi = {sh[0], sh[1]};
  bool cut = false;
  for (size_t s = 0; s < start.size(); ++s) {
    lo.push_back(Dim(start[s]));
    hi.push_back(Dim(start[s] + len[s]));
    cut = cut || start[s] != 0 || sh[2 + s] != Dim(start[s] + len[s]);
  }
  return cut ? b.slice(v, lo, hi, Ints(sh.size(), 1)) : v;
}

// The gradients of y = conv(x, w) are convolutions too, so every device with a conv kernel
// runs them (G groups, Og = O/G, Cg = C/G output/input channels per group):
// - dx = conv(g with stride-1 zeros between its elements, w's spatially flipped kernel with
//   in/out channels swapped per group), dilation d, padding (K-1)·d - lo: a full correlation.
// - dw = conv(x as [Cg, G·N, …], g as the kernel [O, N, P…]): the batch is the contraction,
//   the forward's stride becomes the dilation and its dilation the stride; the result is
//   [Cg, O, K…], transposed to w's [O, Cg, K…]. On the cpu it runs as oneDNN backward weights.
V conv(Builder& b, const VjpArgs& a) {
  ValueId x = a.in[0], w = a.in[1], g = a.cot[0];
  // Every dim but the batch must be static (the pads and kernel sizes below are sized by them).
  auto static_tail = [&](ValueId v) {
    Shape sh = b.shape(v);
    sh[0] = Dim(1);
    std::vector<int64_t> out;
    for (const auto& d : sh) {
      auto val = d.try_value();
      if (!val) throw Error(ErrorKind::unsupported, cat("autodiff: the gradient of mir.conv needs static channel and spatial sizes, got ", shape_str(b.shape(v))));
      out.push_back(*val);
    }
    return out;
  };
  Dim N = b.shape(x)[0];
  std::vector<int64_t> xs = static_tail(x), ps = static_tail(a.out[0]), ws = static_dims(b, w, "mir.conv");
  const Ints& st = a.attrs.ints("strides");
  const Ints& dil = a.attrs.ints("dilation");
  const Intss& padding = a.attrs.intss("padding");
  int64_t G = a.attrs.i("groups"), O = ws[0], Cg = ws[1], Og = O / G;
  size_t sp = xs.size() - 2, r = xs.size();
  auto conv_attrs = [&](const Ints& strides, const Intss& pad, const Ints& dilation) {
    return Attrs{{"strides", strides}, {"padding", pad}, {"dilation", dilation}, {"groups", G}};
  };
  auto spatial_perm = [&](Ints head) {
    for (size_t s = 0; s < sp; ++s) head.push_back(static_cast<int64_t>(head.size()));
    return head;
  };

  // dx: the kernel [O, Cg, K…] → [G, Og, Cg, K…] → [G, Cg, Og, K…] → [C, Og, K…], flipped.
  ValueId wt = w;
  if (Og > 1 && Cg > 1) {
    Shape split = {Dim(G), Dim(Og), Dim(Cg)}, merged = {Dim(G * Cg), Dim(Og)};
    for (size_t s = 0; s < sp; ++s) {
      split.push_back(Dim(ws[2 + s]));
      merged.push_back(Dim(ws[2 + s]));
    }
    wt = b.reshape(b.transpose(b.reshape(w, split), spatial_perm({0, 2, 1})), merged);
  } else {
    // one of the two is 1: swapping them is a reshape
    Shape merged = {Dim(G * Cg), Dim(Og)};
    for (size_t s = 0; s < sp; ++s) merged.push_back(Dim(ws[2 + s]));
    wt = b.reshape(w, merged);
  }
  std::vector<int64_t> wts = {G * Cg, Og};
  wts.insert(wts.end(), ws.begin() + 2, ws.end());
  wt = flip_spatial(b, wt, wts);
  ValueId gd = g;
  bool strided = false;
  for (int64_t s : st) strided = strided || s > 1;
  if (strided) {
    Ints zero(r, 0), interior = {0, 0};
    for (size_t s = 0; s < sp; ++s) interior.push_back(st[s] - 1);
    gd = b.emit1(Op::pad, {g}, Attrs{{"lo", zero}, {"hi", zero}, {"interior", interior}});
  }
  Intss dx_pad;
  Ints dx_start;
  std::vector<int64_t> x_len;
  for (size_t s = 0; s < sp; ++s) {
    int64_t span = (ws[2 + s] - 1) * dil[s];
    int64_t lo = span - padding[s][0], hi = xs[2 + s] - 1 - (ps[2 + s] - 1) * st[s] + padding[s][0];
    // negative pads become a crop of the (then longer) result
    dx_pad.push_back({std::max<int64_t>(lo, 0), std::max<int64_t>(hi, 0)});
    dx_start.push_back(std::max<int64_t>(-lo, 0));
    x_len.push_back(xs[2 + s]);
  }
  ValueId dx = b.emit1(Op::conv, {gd, wt}, conv_attrs(Ints(sp, 1), dx_pad, dil));
  dx = crop_spatial(b, dx, dx_start, x_len);

  // dw: x [N, C, X…] → [N, G, Cg, X…] → [Cg, G, N, X…] → [Cg, G·N, X…]; g [N, O, P…] → [O, N, P…].
  Shape xsplit = {N, Dim(G), Dim(Cg)}, xmerged = {Dim(Cg), Dim(G) * N}, gsplit = {N, Dim(G), Dim(Og)}, gmerged = {Dim(O), N};
  for (size_t s = 0; s < sp; ++s) {
    xsplit.push_back(Dim(xs[2 + s]));
    xmerged.push_back(Dim(xs[2 + s]));
    gsplit.push_back(Dim(ps[2 + s]));
    gmerged.push_back(Dim(ps[2 + s]));
  }
  ValueId xt = G == 1 ? b.transpose(x, spatial_perm({1, 0})) : b.reshape(b.transpose(b.reshape(x, xsplit), spatial_perm({2, 1, 0})), xmerged);
  ValueId gt = G == 1 ? b.transpose(g, spatial_perm({1, 0})) : b.reshape(b.transpose(b.reshape(g, gsplit), spatial_perm({1, 2, 0})), gmerged);
  // The forward window start is -lo; the end is where the last window of the last output
  // ends. Negative pads crop x instead.
  Intss dw_pad;
  Ints crop_start;
  std::vector<int64_t> crop_len;
  for (size_t s = 0; s < sp; ++s) {
    int64_t lo = padding[s][0], start = std::max<int64_t>(-lo, 0), len = xs[2 + s] - start;
    int64_t hi = (ws[2 + s] - 1) * dil[s] + (ps[2 + s] - 1) * st[s] + 1 - len - std::max<int64_t>(lo, 0);
    if (hi < 0) {
      len += hi;
      hi = 0;
    }
    dw_pad.push_back({std::max<int64_t>(lo, 0), hi});
    crop_start.push_back(start);
    crop_len.push_back(len);
  }
  xt = crop_spatial(b, xt, crop_start, crop_len);
  ValueId dwt = b.emit1(Op::conv, {xt, gt}, conv_attrs(dil, dw_pad, st));
  ValueId dw = b.transpose(dwt, spatial_perm({1, 0}));
  return {dx, dw};
}

}  // namespace

void register_vjp_structural(RuleTable& t) {
  auto set = [&](Op op, VjpFn f) { t[static_cast<size_t>(op)].vjp = f; };
  set(Op::reduce, reduce);
  set(Op::cumsum, cumsum);
  set(Op::dot_general, dot_general);
  set(Op::conv, conv);
  set(Op::reshape, reshape);
  set(Op::transpose, transpose);
  set(Op::broadcast, broadcast);
  set(Op::slice, slice);
  set(Op::concat, concat);
  set(Op::pad, pad);
  set(Op::gather, gather);
  set(Op::scatter, scatter);
}

}  // namespace rlx::ops
