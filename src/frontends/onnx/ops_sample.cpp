// Sampling at run-time coordinates: GridSample (nearest/bilinear/bicubic, zeros/border/
// reflection padding, align_corners — ONNX Runtime's rules) and RoiAlign (avg/max, fixed
// sampling_ratio). Coordinates, weights and indices are computed in the graph; pixels are
// gathered from the flattened input.
#include "frontends/onnx/ops_util.h"
#include "rlx/error.h"

namespace rlx::frontends::onnx {

namespace {

struct Plane {
  ValueId flat;   // X as [N·C·H·W]
  ValueId base;   // [N, C, 1, 1] (or [R, C, 1, 1]): offset of each (n, c) plane
  int64_t H, W;
};

ValueId sc(FoldingBuilder& b, ValueId like_v, double v) { return like(b, like_v, v); }

// Reflects x into [lo, hi] (ONNX Runtime's GsReflect), elementwise.
ValueId reflect(FoldingBuilder& b, ValueId x, double lo, double hi) {
  double range = hi - lo;
  auto fold = [&](ValueId dx, bool below) {
    ValueId n = b.unary(Op::floor, b.div(dx, sc(b, x, range)));
    ValueId r = b.sub(dx, b.mul(n, sc(b, x, range)));
    ValueId even = b.binary(Op::eq, b.binary(Op::rem, n, sc(b, x, 2.0)), sc(b, x, 0.0));
    ValueId a = below ? b.add(sc(b, x, lo), r) : b.sub(sc(b, x, hi), r);
    ValueId o = below ? b.sub(sc(b, x, hi), r) : b.add(sc(b, x, lo), r);
    return b.select(even, a, o);
  };
  ValueId under = b.binary(Op::lt, x, sc(b, x, lo)), over = b.binary(Op::gt, x, sc(b, x, hi));
  ValueId fu = fold(b.sub(sc(b, x, lo), x), true), fo = fold(b.sub(x, sc(b, x, hi)), false);
  return b.select(under, fu, b.select(over, fo, x));
}

// The pixel at integer coordinates (yi, xi) [N, Ho, Wo] (floats holding integers) of every
// channel, with the padding mode's rule for coordinates outside the image.
ValueId pixel(FoldingBuilder& b, const Plane& p, ValueId yi, ValueId xi, const std::string& pad, double xmin, double ymin, double xmax, double ymax) {
  ValueId inside = kNoValue;
  if (pad == "zeros") {
    inside = b.binary(Op::logical_and, b.binary(Op::logical_and, b.binary(Op::ge, xi, sc(b, xi, 0.0)), b.binary(Op::le, xi, sc(b, xi, static_cast<double>(p.W - 1)))),
                      b.binary(Op::logical_and, b.binary(Op::ge, yi, sc(b, yi, 0.0)), b.binary(Op::le, yi, sc(b, yi, static_cast<double>(p.H - 1)))));
  } else if (pad == "reflection") {
    xi = b.unary(Op::floor, reflect(b, xi, xmin, xmax));
    yi = b.unary(Op::floor, reflect(b, yi, ymin, ymax));
  }
  xi = b.max(b.min(xi, sc(b, xi, static_cast<double>(p.W - 1))), sc(b, xi, 0.0));
  yi = b.max(b.min(yi, sc(b, yi, static_cast<double>(p.H - 1))), sc(b, yi, 0.0));
  ValueId off = b.cast(b.add(b.mul(yi, sc(b, yi, static_cast<double>(p.W))), xi), DType::i64);
  ValueId idx = b.add(p.base, insert_axes(b, off, {1}));
  ValueId v = b.gather(p.flat, idx, 0);
  if (inside != kNoValue) v = b.select(insert_axes(b, inside, {1}), v, like(b, v, 0.0));
  return v;
}

// The four cubic coefficients of a run-time fraction t, as graph values.
std::vector<ValueId> cubic_of(FoldingBuilder& b, ValueId t) {
  const double a = -0.75;
  auto k = [&](double v) { return sc(b, t, v); };
  ValueId t1 = b.add(t, k(1)), u = b.sub(k(1), t), u1 = b.sub(k(2), t);
  ValueId c0 = b.sub(b.mul(b.add(b.mul(b.sub(b.mul(t1, k(a)), k(5 * a)), t1), k(8 * a)), t1), k(4 * a));
  ValueId c1 = b.add(b.mul(b.mul(b.sub(b.mul(t, k(a + 2)), k(a + 3)), t), t), k(1));
  ValueId c2 = b.add(b.mul(b.mul(b.sub(b.mul(u, k(a + 2)), k(a + 3)), u), u), k(1));
  ValueId c3 = b.sub(b.mul(b.add(b.mul(b.sub(b.mul(u1, k(a)), k(5 * a)), u1), k(8 * a)), u1), k(4 * a));
  return {c0, c1, c2, c3};
}

std::vector<ValueId> grid_sample(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0), grid = c.in(1);
  c.require_rank(grid, 4, 4, "the grid");
  auto xs = c.static_shape(x, "the input");
  if (xs.size() != 4) c.fail("only 4-D inputs (2-D sampling)");
  std::string mode = c.attr_s("mode", "bilinear"), pad = c.attr_s("padding_mode", "zeros");
  bool align = c.attr_i("align_corners", 0) != 0;
  int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3];
  Plane p{reshape_to(b, x, {N * C * H * W}), kNoValue, H, W};
  p.base = b.mul(b.add(b.mul(b.iota({Dim(N), Dim(C), Dim(1), Dim(1)}, DType::i64, 0), b.scalar(DType::i64, static_cast<double>(C))),
                       b.iota({Dim(N), Dim(C), Dim(1), Dim(1)}, DType::i64, 1)),
                 b.scalar(DType::i64, static_cast<double>(H * W)));
  ValueId gx = remove_axes(b, b.slice_axis(grid, 3, Dim(0), Dim(1)), {3});
  ValueId gy = remove_axes(b, b.slice_axis(grid, 3, Dim(1), Dim(2)), {3});
  auto denorm = [&](ValueId g, int64_t n) {
    if (align) return b.mul(b.mul(b.add(g, sc(b, g, 1.0)), sc(b, g, 0.5)), sc(b, g, static_cast<double>(n - 1)));
    return b.mul(b.sub(b.mul(b.add(g, sc(b, g, 1.0)), sc(b, g, static_cast<double>(n))), sc(b, g, 1.0)), sc(b, g, 0.5));
  };
  ValueId fx = denorm(gx, W), fy = denorm(gy, H);
  if (mode == "nearest") {
    fx = b.unary(Op::round, fx);
    fy = b.unary(Op::round, fy);
  }
  double xmin = align ? 0 : -0.5, xmax = align ? static_cast<double>(W - 1) : static_cast<double>(W) - 0.5;
  double ymin = align ? 0 : -0.5, ymax = align ? static_cast<double>(H - 1) : static_cast<double>(H) - 0.5;
  if (pad == "border" || pad == "reflection") {
    ValueId oob = b.binary(Op::logical_or, b.binary(Op::logical_or, b.binary(Op::lt, fx, sc(b, fx, xmin)), b.binary(Op::gt, fx, sc(b, fx, xmax))),
                           b.binary(Op::logical_or, b.binary(Op::lt, fy, sc(b, fy, ymin)), b.binary(Op::gt, fy, sc(b, fy, ymax))));
    ValueId nx, ny;
    if (pad == "border") {
      nx = b.max(b.min(fx, sc(b, fx, static_cast<double>(W - 1))), sc(b, fx, 0.0));
      ny = b.max(b.min(fy, sc(b, fy, static_cast<double>(H - 1))), sc(b, fy, 0.0));
    } else {
      nx = reflect(b, fx, xmin, xmax);
      ny = reflect(b, fy, ymin, ymax);
    }
    fx = b.select(oob, nx, fx);
    fy = b.select(oob, ny, fy);
  } else if (pad != "zeros") {
    c.fail(cat("padding_mode '", pad, "'"));
  }
  auto px = [&](ValueId yi, ValueId xi) { return pixel(b, p, yi, xi, pad, xmin, ymin, xmax, ymax); };
  auto w4 = [&](ValueId v) { return insert_axes(b, v, {1}); };
  if (mode == "nearest") return {px(fy, fx)};
  ValueId x0 = b.unary(Op::floor, fx), y0 = b.unary(Op::floor, fy);
  if (mode == "bilinear" || mode == "linear") {
    ValueId x1 = b.add(x0, sc(b, x0, 1.0)), y1 = b.add(y0, sc(b, y0, 1.0));
    ValueId dx1 = b.sub(fx, x0), dx2 = b.sub(x1, fx), dy1 = b.sub(fy, y0), dy2 = b.sub(y1, fy);
    ValueId top = b.add(b.mul(w4(dx2), px(y0, x0)), b.mul(w4(dx1), px(y0, x1)));
    ValueId bot = b.add(b.mul(w4(dx2), px(y1, x0)), b.mul(w4(dx1), px(y1, x1)));
    return {b.add(b.mul(w4(dy2), top), b.mul(w4(dy1), bot))};
  }
  if (mode != "bicubic" && mode != "cubic") c.fail(cat("mode '", mode, "'"));
  std::vector<ValueId> cx = cubic_of(b, b.sub(fx, x0)), cy = cubic_of(b, b.sub(fy, y0));
  ValueId acc = kNoValue;
  for (int i = 0; i < 4; ++i) {
    ValueId yi = b.add(y0, sc(b, y0, i - 1.0));
    ValueId row = kNoValue;
    for (int j = 0; j < 4; ++j) {
      ValueId xi = b.add(x0, sc(b, x0, j - 1.0));
      ValueId t = b.mul(w4(cx[static_cast<size_t>(j)]), px(yi, xi));
      row = row == kNoValue ? t : b.add(row, t);
    }
    ValueId t = b.mul(w4(cy[static_cast<size_t>(i)]), row);
    acc = acc == kNoValue ? t : b.add(acc, t);
  }
  return {acc};
}

// RoiAlign with a fixed sampling_ratio: for each output bin, the average (or max) of
// sampling_ratio² bilinear samples, with ONNX Runtime's boundary rules.
std::vector<ValueId> roi_align(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0), rois = c.in(1), bidx = c.in(2);
  c.require_rank(x, 4, 4, "the input");
  c.require_rank(rois, 2, 2, "rois");
  auto xs = c.static_shape(x, "the input");
  auto rs = c.static_shape(rois, "rois");
  if (rs[1] != 4) c.invalid("rois must be [num_rois, 4]");
  int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3], R = rs[0];
  int64_t oh = c.attr_i("output_height", 1), ow = c.attr_i("output_width", 1), sr = c.attr_i("sampling_ratio", 0);
  double scale = c.attr_f("spatial_scale", 1.0f);
  std::string mode = c.attr_s("mode", "avg");
  bool half = c.attr_s("coordinate_transformation_mode", "half_pixel") == "half_pixel";
  if (sr <= 0) c.fail("sampling_ratio 0 (adaptive sample counts depend on the roi values)");
  if (sr > 64) c.fail(cat("sampling_ratio ", sr, " (the unrolled sampling stops at 64)"));
  if (oh <= 0 || ow <= 0) c.invalid("output_height and output_width must be positive");
  (void)N;
  DType d = c.dtype(x);
  ValueId r = b.cast(rois, d);
  auto col = [&](int k) { return b.reshape(b.slice_axis(r, 1, Dim(k), Dim(k + 1)), {Dim(R), Dim(1), Dim(1)}); };
  double off = half ? 0.5 : 0.0;
  ValueId x1 = b.sub(b.mul(col(0), like(b, r, scale)), like(b, r, off)), y1 = b.sub(b.mul(col(1), like(b, r, scale)), like(b, r, off));
  ValueId x2 = b.sub(b.mul(col(2), like(b, r, scale)), like(b, r, off)), y2 = b.sub(b.mul(col(3), like(b, r, scale)), like(b, r, off));
  ValueId rw = b.sub(x2, x1), rh = b.sub(y2, y1);
  if (!half) {
    rw = b.max(rw, like(b, rw, 1.0));
    rh = b.max(rh, like(b, rh, 1.0));
  }
  ValueId bw = b.div(rw, like(b, rw, static_cast<double>(ow))), bh = b.div(rh, like(b, rh, static_cast<double>(oh)));
  Plane p{reshape_to(b, x, {xs[0] * C * H * W}), kNoValue, H, W};
  ValueId bi = b.reshape(b.cast(bidx, DType::i64), {Dim(R), Dim(1), Dim(1), Dim(1)});
  p.base = b.mul(b.add(b.mul(bi, b.scalar(DType::i64, static_cast<double>(C))), b.iota({Dim(R), Dim(C), Dim(1), Dim(1)}, DType::i64, 1)),
                 b.scalar(DType::i64, static_cast<double>(H * W)));
  ValueId iy = b.iota({Dim(R), Dim(oh), Dim(ow)}, d, 1), ix = b.iota({Dim(R), Dim(oh), Dim(ow)}, d, 2);
  ValueId acc = kNoValue;
  for (int64_t sy = 0; sy < sr; ++sy)
    for (int64_t sx = 0; sx < sr; ++sx) {
      ValueId yy = b.add(y1, b.add(b.mul(iy, bh), b.mul(bh, like(b, bh, (static_cast<double>(sy) + 0.5) / static_cast<double>(sr)))));
      ValueId xx = b.add(x1, b.add(b.mul(ix, bw), b.mul(bw, like(b, bw, (static_cast<double>(sx) + 0.5) / static_cast<double>(sr)))));
      ValueId empty = b.binary(Op::logical_or, b.binary(Op::logical_or, b.binary(Op::lt, yy, like(b, yy, -1.0)), b.binary(Op::gt, yy, like(b, yy, static_cast<double>(H)))),
                               b.binary(Op::logical_or, b.binary(Op::lt, xx, like(b, xx, -1.0)), b.binary(Op::gt, xx, like(b, xx, static_cast<double>(W)))));
      yy = b.max(yy, like(b, yy, 0.0));
      xx = b.max(xx, like(b, xx, 0.0));
      ValueId ylo = b.unary(Op::floor, yy), xlo = b.unary(Op::floor, xx);
      ValueId ylast = b.binary(Op::ge, ylo, like(b, ylo, static_cast<double>(H - 1))), xlast = b.binary(Op::ge, xlo, like(b, xlo, static_cast<double>(W - 1)));
      ylo = b.select(ylast, like(b, ylo, static_cast<double>(H - 1)), ylo);
      xlo = b.select(xlast, like(b, xlo, static_cast<double>(W - 1)), xlo);
      yy = b.select(ylast, ylo, yy);
      xx = b.select(xlast, xlo, xx);
      ValueId yhi = b.select(ylast, ylo, b.add(ylo, like(b, ylo, 1.0))), xhi = b.select(xlast, xlo, b.add(xlo, like(b, xlo, 1.0)));
      ValueId ly = b.sub(yy, ylo), lx = b.sub(xx, xlo), hy = b.sub(like(b, ly, 1.0), ly), hx = b.sub(like(b, lx, 1.0), lx);
      auto w4 = [&](ValueId v) { return insert_axes(b, b.select(empty, like(b, v, 0.0), v), {1}); };
      auto pix = [&](ValueId yi, ValueId xi) { return pixel(b, p, yi, xi, "border", 0, 0, 0, 0); };
      ValueId t1 = b.mul(w4(b.mul(hy, hx)), pix(ylo, xlo)), t2 = b.mul(w4(b.mul(hy, lx)), pix(ylo, xhi));
      ValueId t3 = b.mul(w4(b.mul(ly, hx)), pix(yhi, xlo)), t4 = b.mul(w4(b.mul(ly, lx)), pix(yhi, xhi));
      ValueId v;
      if (mode == "max") v = b.max(b.max(t1, t2), b.max(t3, t4));
      else v = b.add(b.add(t1, t2), b.add(t3, t4));
      acc = acc == kNoValue ? v : (mode == "max" ? b.max(acc, v) : b.add(acc, v));
    }
  if (mode != "max") acc = b.div(acc, like(b, acc, static_cast<double>(sr * sr)));
  return {acc};
}

}  // namespace

void register_sample(OpTable& t) {
  t.insert(t.end(), {
                        {"", "GridSample", 16, grid_sample},
                        {"", "RoiAlign", 10, roi_align},
                    });
}

}  // namespace rlx::frontends::onnx
