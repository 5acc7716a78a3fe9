// Convolutions of any spatial rank: Conv (auto_pad, groups, dilations) onto mir.conv, and
// ConvTranspose as a convolution of the input dilated by interior padding with the flipped,
// regrouped kernel.
#include "frontends/onnx/ops_nn.h"

#include "frontends/onnx/ops_util.h"
#include "rlx/error.h"

namespace rlx::frontends::onnx {

ConvGeometry conv_geometry(NodeCtx& c, const std::vector<int64_t>& xs, const std::vector<int64_t>& kernel) {
  ConvGeometry g;
  size_t sp = xs.size() - 2;
  g.strides = c.attr_ints("strides", Ints(sp, 1));
  g.dilations = c.attr_ints("dilations", Ints(sp, 1));
  Ints pads = c.attr_ints("pads", Ints(2 * sp, 0));
  if (g.strides.size() != sp || g.dilations.size() != sp || pads.size() != 2 * sp || kernel.size() != sp)
    c.invalid(cat("strides, dilations, pads and the kernel must match the ", sp, " spatial dims"));
  for (size_t i = 0; i < sp; ++i)
    if (g.strides[i] <= 0 || g.dilations[i] <= 0) c.invalid("strides and dilations must be positive");
  std::string auto_pad = c.attr_s("auto_pad", "NOTSET");
  g.lo.assign(sp, 0);
  g.hi.assign(sp, 0);
  for (size_t i = 0; i < sp; ++i) {
    int64_t in = xs[2 + i], k = (kernel[i] - 1) * g.dilations[i] + 1, s = g.strides[i];
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      int64_t out = (in + s - 1) / s;
      int64_t total = std::max<int64_t>((out - 1) * s + k - in, 0);
      int64_t small = total / 2, big = total - small;
      g.lo[i] = auto_pad == "SAME_UPPER" ? small : big;
      g.hi[i] = auto_pad == "SAME_UPPER" ? big : small;
    } else if (auto_pad == "VALID") {
      g.lo[i] = g.hi[i] = 0;
    } else if (auto_pad == "NOTSET" || auto_pad.empty()) {
      g.lo[i] = pads[i];
      g.hi[i] = pads[sp + i];
    } else {
      c.invalid(cat("auto_pad '", auto_pad, "'"));
    }
  }
  return g;
}

ValueId conv_nd(FoldingBuilder& b, ValueId x, ValueId w, const ConvGeometry& g, int64_t groups) {
  ir::Intss padding;
  for (size_t i = 0; i < g.lo.size(); ++i) padding.push_back({g.lo[i], g.hi[i]});
  return b.emit1(Op::conv, {x, w}, Attrs{{"strides", g.strides}, {"padding", padding}, {"dilation", g.dilations}, {"groups", groups}});
}

ValueId add_channel_bias(FoldingBuilder& b, ValueId y, ValueId bias) {
  Shape s(b.rank(y), Dim(1));
  s[1] = b.shape(bias)[0];
  return b.add(y, b.reshape(bias, s));
}

namespace {

std::vector<ValueId> one(ValueId v) { return {v}; }

std::vector<int64_t> kernel_of(NodeCtx& c, ValueId w) {
  c.require_rank(w, 3, 8, "the weight");
  auto ws = c.static_shape(w, "the weight");
  return std::vector<int64_t>(ws.begin() + 2, ws.end());
}

std::vector<ValueId> conv(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0), w = c.in(1);
  c.require_rank(x, 3, 8, "the input");
  Shape xs_sym = c.shape(x);
  std::vector<int64_t> xs;
  for (size_t i = 0; i < xs_sym.size(); ++i) xs.push_back(xs_sym[i].is_static() ? xs_sym[i].value() : 1);
  ConvGeometry g = conv_geometry(c, xs, kernel_of(c, w));
  if (!shape_is_static(Shape(xs_sym.begin() + 2, xs_sym.end())) && c.attr_s("auto_pad", "NOTSET").rfind("SAME", 0) == 0)
    c.fail("auto_pad SAME over symbolic spatial dims");
  ValueId y = conv_nd(b, x, w, g, c.attr_i("group", 1));
  if (c.has(2)) y = add_channel_bias(b, y, c.in(2));
  return one(y);
}

// Reverses every spatial axis of a kernel.
ValueId flip_spatial(FoldingBuilder& b, ValueId w) {
  Shape s = b.shape(w);
  for (size_t a = 2; a < s.size(); ++a) {
    int64_t n = s[a].value();
    std::vector<int64_t> idx;
    for (int64_t i = n - 1; i >= 0; --i) idx.push_back(i);
    w = b.gather(w, b.constant(Tensor::from_vector(idx, {n})), static_cast<int64_t>(a));
  }
  return w;
}

std::vector<ValueId> conv_transpose(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0), w = c.in(1);
  c.require_rank(x, 3, 8, "the input");
  c.require_rank(w, c.rank(x), c.rank(x), "the weight");
  auto xs = c.static_shape(x, "the input");
  auto ws = c.static_shape(w, "the weight");
  size_t sp = xs.size() - 2;
  int64_t groups = c.attr_i("group", 1);
  if (groups <= 0 || ws[0] % groups) c.invalid(cat("group ", groups, " does not divide the weight's ", ws[0], " input channels"));
  Ints kernel(ws.begin() + 2, ws.end());
  Ints strides = c.attr_ints("strides", Ints(sp, 1)), dil = c.attr_ints("dilations", Ints(sp, 1));
  Ints out_pad = c.attr_ints("output_padding", Ints(sp, 0));
  Ints pads = c.attr_ints("pads", Ints(2 * sp, 0));
  Ints out_shape = c.attr_ints("output_shape");
  std::string auto_pad = c.attr_s("auto_pad", "NOTSET");
  if (strides.size() != sp || dil.size() != sp || out_pad.size() != sp || pads.size() != 2 * sp)
    c.invalid(cat("strides, dilations, output_padding and pads must match the ", sp, " spatial dims"));
  for (size_t i = 0; i < sp; ++i)
    if (strides[i] <= 0 || dil[i] <= 0) c.invalid("strides and dilations must be positive");
  if (out_shape.size() > sp) out_shape = Ints(out_shape.end() - static_cast<int64_t>(sp), out_shape.end());
  for (size_t i = 0; i < sp; ++i) {
    int64_t k = (kernel[i] - 1) * dil[i] + 1;
    int64_t full = strides[i] * (xs[2 + i] - 1) + out_pad[i] + k;
    if (!out_shape.empty() || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      int64_t target = !out_shape.empty() ? out_shape[i] : xs[2 + i] * strides[i];
      // The spec's floor division: a negative total extends the end with zeros.
      int64_t total = full - target;
      int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
      if (auto_pad == "SAME_UPPER") {
        pads[i] = half;
        pads[sp + i] = total - half;
      } else {
        pads[i] = total - half;
        pads[sp + i] = half;
      }
    } else if (auto_pad == "VALID") {
      pads[i] = pads[sp + i] = 0;
    }
  }
  // W [Cin, Cout/g, k…] → [Cout, Cin/g, k…], flipped.
  int64_t cin = ws[0], cout_g = ws[1];
  std::vector<int64_t> split = {groups, cin / groups, cout_g};
  split.insert(split.end(), kernel.begin(), kernel.end());
  Ints perm = {0, 2, 1};
  for (size_t i = 0; i < sp; ++i) perm.push_back(static_cast<int64_t>(3 + i));
  std::vector<int64_t> regroup = {groups * cout_g, cin / groups};
  regroup.insert(regroup.end(), kernel.begin(), kernel.end());
  ValueId wt = flip_spatial(b, reshape_to(b, b.transpose(reshape_to(b, w, split), perm), regroup));
  Ints lo = {0, 0}, hi = {0, 0}, interior = {0, 0};
  for (size_t i = 0; i < sp; ++i) {
    int64_t k = (kernel[i] - 1) * dil[i];
    lo.push_back(k - pads[i]);
    hi.push_back(k - pads[sp + i] + out_pad[i]);
    interior.push_back(strides[i] - 1);
  }
  ValueId xd = b.emit1(Op::pad, {x}, Attrs{{"lo", lo}, {"hi", hi}, {"interior", interior}, {"value", 0.0}});
  ConvGeometry g;
  g.strides = Ints(sp, 1);
  g.dilations = dil;
  g.lo = g.hi = Ints(sp, 0);
  ValueId y = conv_nd(b, xd, wt, g, groups);
  if (c.has(2)) y = add_channel_bias(b, y, c.in(2));
  return one(y);
}

}  // namespace

void register_nn(OpTable& t) {
  t.insert(t.end(), {
                        {"", "Conv", 1, conv},
                        {"", "ConvTranspose", 1, conv_transpose},
                    });
}

}  // namespace rlx::frontends::onnx
