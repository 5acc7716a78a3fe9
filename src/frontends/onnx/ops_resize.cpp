// Resize (opset 10, 11, 13, 18) and Upsample: separable per-axis interpolation. For every
// resized axis the importer computes, from the static shapes, the source index and weight of
// each tap (1 for nearest, 2 for linear, 4 for cubic) as constants; the graph gathers the taps
// and sums them weighted. All coordinate transformation and nearest modes of the spec.
#include <cmath>

#include "frontends/onnx/ops_util.h"
#include "rlx/error.h"

namespace rlx::frontends::onnx {

namespace {

struct ResizeSpec {
  std::string mode = "nearest";                  // nearest | linear | cubic
  std::string transform = "half_pixel";          // coordinate_transformation_mode
  std::string nearest = "round_prefer_floor";    // nearest_mode ("simple": opset < 11)
  double cubic_a = -0.75;
  bool exclude_outside = false;
  double extrapolation = 0.0;
};

// Source coordinate of output index x along an axis of `in` elements resized to `out`.
// `out` is the output length as the spec's formulas see it: in·scale (not rounded) when scales
// are given, the requested size otherwise.
double source_coord(const ResizeSpec& s, double x, int64_t in, double out, double scale, double roi_lo, double roi_hi) {
  const std::string& t = s.transform;
  if (t == "half_pixel") return (x + 0.5) / scale - 0.5;
  if (t == "pytorch_half_pixel") return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  if (t == "align_corners") return out == 1 ? 0.0 : x * static_cast<double>(in - 1) / (out - 1);
  if (t == "asymmetric") return x / scale;
  if (t == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
  // tf_crop_and_resize
  if (out > 1) return roi_lo * static_cast<double>(in - 1) + x * (roi_hi - roi_lo) * static_cast<double>(in - 1) / (out - 1);
  return 0.5 * (roi_lo + roi_hi) * static_cast<double>(in - 1);
}

int64_t nearest_index(const ResizeSpec& s, double x, bool downsampling) {
  const std::string& m = s.nearest;
  if (m == "simple") return downsampling ? static_cast<int64_t>(std::ceil(x)) : static_cast<int64_t>(x);
  if (m == "floor") return static_cast<int64_t>(std::floor(x));
  if (m == "ceil") return static_cast<int64_t>(std::ceil(x));
  double f = std::floor(x);
  if (x - f == 0.5) return static_cast<int64_t>(m == "round_prefer_ceil" ? f + 1 : f);
  return static_cast<int64_t>(std::round(x));
}

std::vector<double> cubic_coeffs(double r, double a) {
  return {((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a, ((a + 2) * r - (a + 3)) * r * r + 1,
          ((a + 2) * (1 - r) - (a + 3)) * (1 - r) * (1 - r) + 1, ((a * ((1 - r) + 1) - 5 * a) * ((1 - r) + 1) + 8 * a) * ((1 - r) + 1) - 4 * a};
}

struct AxisTaps {
  std::vector<std::vector<int64_t>> idx;  // [tap][out]
  std::vector<std::vector<double>> w;     // [tap][out]
  std::vector<double> inside;             // [out]: 0 where tf_crop_and_resize extrapolates
};

AxisTaps axis_taps(const ResizeSpec& s, int64_t in, int64_t out, double out_len, double scale, double roi_lo, double roi_hi) {
  int taps = s.mode == "nearest" ? 1 : s.mode == "linear" ? 2 : 4;
  AxisTaps t;
  t.idx.assign(static_cast<size_t>(taps), std::vector<int64_t>(static_cast<size_t>(out)));
  t.w.assign(static_cast<size_t>(taps), std::vector<double>(static_cast<size_t>(out)));
  t.inside.assign(static_cast<size_t>(out), 1.0);
  auto clamp = [&](int64_t i) { return std::clamp<int64_t>(i, 0, in - 1); };
  for (int64_t o = 0; o < out; ++o) {
    double x = source_coord(s, static_cast<double>(o), in, out_len, scale, roi_lo, roi_hi);
    size_t k = static_cast<size_t>(o);
    if (s.transform == "tf_crop_and_resize" && (x < 0 || x > static_cast<double>(in - 1))) t.inside[k] = 0.0;
    if (taps == 1) {
      t.idx[0][k] = clamp(nearest_index(s, x, scale < 1.0));
      t.w[0][k] = 1.0;
      continue;
    }
    double f = std::floor(x), r = x - f;
    int64_t base = static_cast<int64_t>(f);
    std::vector<double> c = taps == 2 ? std::vector<double>{1 - r, r} : cubic_coeffs(r, s.cubic_a);
    int64_t first = taps == 2 ? base : base - 1;
    double total = 0;
    for (int j = 0; j < taps; ++j) {
      int64_t i = first + j;
      if (s.exclude_outside && (i < 0 || i >= in)) c[static_cast<size_t>(j)] = 0;
      total += c[static_cast<size_t>(j)];
    }
    for (int j = 0; j < taps; ++j) {
      t.idx[static_cast<size_t>(j)][k] = clamp(first + j);
      t.w[static_cast<size_t>(j)][k] = s.exclude_outside && total != 0 ? c[static_cast<size_t>(j)] / total : c[static_cast<size_t>(j)];
    }
  }
  return t;
}

ValueId resize_axis(FoldingBuilder& b, ValueId x, int64_t axis, const AxisTaps& t) {
  int64_t out = static_cast<int64_t>(t.w[0].size());
  size_t r = b.rank(x);
  DType d = b.dtype(x);
  DType cd = is_float(d) ? d : DType::f32;
  Shape ws(r, Dim(1));
  ws[static_cast<size_t>(axis)] = Dim(out);
  ValueId acc = kNoValue;
  for (size_t j = 0; j < t.idx.size(); ++j) {
    ValueId g = b.gather(x, b.constant(Tensor::from_vector(t.idx[j], {out})), axis);
    if (t.idx.size() == 1) return g;  // nearest: a pure gather, any dtype
    ValueId w = b.reshape(b.constant(Tensor::from_f64(cd, {out}, t.w[j])), ws);
    ValueId term = b.mul(b.cast(g, cd), w);
    acc = acc == kNoValue ? term : b.add(acc, term);
  }
  return b.cast(acc, d);
}

ValueId resize(NodeCtx& c, const ResizeSpec& s, std::vector<double> scales, std::vector<int64_t> sizes, std::vector<double> roi) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0);
  Shape xshape = c.shape(x);
  size_t r = xshape.size();
  std::vector<int64_t> xs;
  for (size_t a = 0; a < r; ++a) {
    // A symbolic dim may only pass through unresized.
    bool kept = sizes.empty() ? (a < scales.size() && scales[a] == 1.0) : false;
    if (!xshape[a].is_static() && !kept) c.fail(cat("resizing symbolic dim ", a, " of ", shape_str(xshape)));
    xs.push_back(xshape[a].is_static() ? xshape[a].value() : -1);
  }
  if (!sizes.empty() && sizes.size() != r) c.invalid(cat("sizes has ", sizes.size(), " entries for rank ", r));
  if (sizes.empty() && scales.size() != r) c.invalid(cat("scales has ", scales.size(), " entries for rank ", r));
  if (s.mode != "nearest" && s.mode != "linear" && s.mode != "cubic") c.fail(cat("mode '", s.mode, "'"));
  std::vector<double> inside_total;
  std::vector<std::pair<int64_t, std::vector<double>>> masks;
  for (size_t a = 0; a < r; ++a) {
    double lo = roi.size() == 2 * r ? roi[a] : 0.0, hi = roi.size() == 2 * r ? roi[r + a] : 1.0;
    if (xs[a] < 0) continue;
    int64_t in = xs[a], out;
    double scale, out_len;
    if (!sizes.empty()) {
      out = sizes[a];
      scale = static_cast<double>(out) / static_cast<double>(in);
      out_len = static_cast<double>(out);
    } else {
      scale = scales[a];
      double span = s.transform == "tf_crop_and_resize" ? (hi - lo) : 1.0;
      out = static_cast<int64_t>(std::floor(static_cast<double>(in) * span * scale));
      out_len = static_cast<double>(in) * scale;
    }
    if (out == in && scale == 1.0 && s.transform != "tf_crop_and_resize") continue;
    checked_table(c, out * 4, "resize tap table");
    if (in <= 0) c.invalid(cat("resizing an empty axis ", a));
    AxisTaps t = axis_taps(s, in, out, out_len, scale, lo, hi);
    x = resize_axis(b, x, static_cast<int64_t>(a), t);
    bool any_out = false;
    for (double v : t.inside) any_out = any_out || v == 0.0;
    if (any_out) masks.emplace_back(static_cast<int64_t>(a), t.inside);
  }
  if (!masks.empty()) {
    // Outside the crop box the value is extrapolation_value (tf_crop_and_resize).
    ValueId m = kNoValue;
    DType d = b.dtype(x);
    for (auto& [a, v] : masks) {
      Shape ms(r, Dim(1));
      ms[static_cast<size_t>(a)] = Dim(static_cast<int64_t>(v.size()));
      ValueId mv = b.reshape(b.constant(Tensor::from_f64(d, {static_cast<int64_t>(v.size())}, v)), ms);
      m = m == kNoValue ? mv : b.mul(m, mv);
    }
    ValueId ev = like(b, x, s.extrapolation);
    x = b.add(b.mul(x, m), b.mul(ev, b.sub(like(b, x, 1.0), m)));
  }
  return x;
}

std::vector<double> doubles(NodeCtx& c, size_t i, const char* what) {
  if (!c.has(i)) return {};
  Tensor t = c.value(i, what);
  return t.to_f64();
}

std::vector<ValueId> resize_op(NodeCtx& c) {
  ResizeSpec s;
  s.mode = c.attr_s("mode", "nearest");
  if (c.opset < 11) {
    s.transform = "asymmetric";
    s.nearest = "simple";
    return {resize(c, s, doubles(c, 1, "scales"), {}, {})};
  }
  s.transform = c.attr_s("coordinate_transformation_mode", "half_pixel");
  s.nearest = c.attr_s("nearest_mode", "round_prefer_floor");
  s.cubic_a = c.attr_f("cubic_coeff_a", -0.75f);
  s.exclude_outside = c.attr_i("exclude_outside", 0) != 0;
  s.extrapolation = c.attr_f("extrapolation_value", 0.0f);
  if (c.opset >= 18 && c.attr_i("antialias", 0)) c.fail("antialias");
  if (c.opset >= 18 && c.has_attr("axes")) c.fail("the axes attribute");
  std::vector<double> roi = doubles(c, 1, "roi");
  std::vector<double> scales = doubles(c, 2, "scales");
  std::vector<int64_t> sizes;
  if (c.has(3)) sizes = c.ints(3, "sizes");
  if (!sizes.empty() && c.opset >= 18 && c.attr_s("keep_aspect_ratio_policy", "stretch") != "stretch") c.fail("keep_aspect_ratio_policy");
  return {resize(c, s, scales, sizes, roi)};
}

std::vector<ValueId> upsample(NodeCtx& c) {
  ResizeSpec s;
  s.mode = c.attr_s("mode", "nearest");
  if (s.mode == "bilinear") s.mode = "linear";
  s.transform = "asymmetric";
  s.nearest = "simple";
  std::vector<double> scales;
  if (c.opset >= 9) scales = doubles(c, 1, "scales");
  else
    for (float f : c.attr_floats("scales")) scales.push_back(f);
  return {resize(c, s, scales, {}, {})};
}

}  // namespace

void register_resize(OpTable& t) {
  t.insert(t.end(), {
                        {"", "Resize", 10, resize_op},
                        {"", "Upsample", 7, upsample},
                    });
}

}  // namespace rlx::frontends::onnx
