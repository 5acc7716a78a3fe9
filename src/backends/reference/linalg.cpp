// dot_general and conv by definition: every output element is a sum over its contraction.
#include <algorithm>

#include "backends/reference/kernels.h"
#include "util/half.h"

namespace rlx::backends::reference {

namespace {

using ir::Op;

bool has(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

std::vector<int64_t> norm_all(const std::vector<int64_t>& axes, size_t rank) {
  std::vector<int64_t> out;
  for (int64_t a : axes) out.push_back(norm_axis(a, rank));
  return out;
}

// Accumulates products in the wide type of the inputs and writes in the output dtype.
struct Acc {
  DType in;
  DType compute = in;  // operands are rounded to this type first (dot_general's compute)
  double d = 0;
  int64_t i = 0;
  c128 c = 0;
  double round(double v) const {
    if (compute == DType::bf16) return bf16_to_f32(f32_to_bf16(static_cast<float>(v)));
    if (compute == DType::f16) return f16_to_f32(f32_to_f16(static_cast<float>(v)));
    if (compute == DType::f32 && in == DType::f64) return static_cast<float>(v);
    return v;
  }
  void add(const HostView& x, int64_t p, const HostView& y, int64_t q) {
    if (is_complex(in)) c += rc(x, p) * rc(y, q);
    else if (is_float(in)) d += round(rd(x, p)) * round(rd(y, q));
    else i = wrap_add(i, wrap_mul(ri(x, p), ri(y, q)));
  }
  void store(const HostView& out, int64_t o) const {
    if (is_complex(in)) wc(out, o, c);
    else if (is_float(in)) wd(out, o, d);
    else if (is_float(out.dtype)) wd(out, o, static_cast<double>(i));
    else wi(out, o, i);
  }
};

void dot_general(const KernelArgs& a) {
  const HostView &x = a.in[0], &w = a.in[1], &y = a.out[0];
  const auto& batch = a.node.attrs.intss("batch");
  const auto& contract = a.node.attrs.intss("contract");
  std::vector<int64_t> lb = norm_all(batch[0], x.shape.size()), rb = norm_all(batch[1], w.shape.size());
  std::vector<int64_t> lc = norm_all(contract[0], x.shape.size()), rc_ = norm_all(contract[1], w.shape.size());
  std::vector<int64_t> xs = strides_of(x.shape), ws = strides_of(w.shape);
  // Output dims in order: batch, lhs free, rhs free — each with its stride in x and in w.
  std::vector<int64_t> out_xs, out_ws;
  for (size_t i = 0; i < lb.size(); ++i) {
    out_xs.push_back(xs[static_cast<size_t>(lb[i])]);
    out_ws.push_back(ws[static_cast<size_t>(rb[i])]);
  }
  for (size_t d = 0; d < x.shape.size(); ++d)
    if (!has(lb, static_cast<int64_t>(d)) && !has(lc, static_cast<int64_t>(d))) {
      out_xs.push_back(xs[d]);
      out_ws.push_back(0);
    }
  for (size_t d = 0; d < w.shape.size(); ++d)
    if (!has(rb, static_cast<int64_t>(d)) && !has(rc_, static_cast<int64_t>(d))) {
      out_xs.push_back(0);
      out_ws.push_back(ws[d]);
    }
  // The contraction index space, as pairs of offsets into x and w.
  std::vector<int64_t> kshape;
  for (int64_t d : lc) kshape.push_back(x.shape[static_cast<size_t>(d)]);
  int64_t K = 1;
  for (int64_t k : kshape) K *= k;
  std::vector<std::pair<int64_t, int64_t>> koff(static_cast<size_t>(K));
  std::vector<int64_t> coord;
  for (int64_t k = 0; k < K; ++k) {
    unravel(k, kshape, coord);
    int64_t px = 0, pw = 0;
    for (size_t j = 0; j < lc.size(); ++j) {
      px += coord[j] * xs[static_cast<size_t>(lc[j])];
      pw += coord[j] * ws[static_cast<size_t>(rc_[j])];
    }
    koff[static_cast<size_t>(k)] = {px, pw};
  }
  for (int64_t o = 0; o < y.numel; ++o) {
    unravel(o, y.shape, coord);
    int64_t bx = 0, bw = 0;
    for (size_t j = 0; j < coord.size(); ++j) {
      bx += coord[j] * out_xs[j];
      bw += coord[j] * out_ws[j];
    }
    Acc acc{x.dtype, a.node.attrs.has("compute") ? a.node.attrs.dtype("compute") : x.dtype};
    for (const auto& [px, pw] : koff) acc.add(x, bx + px, w, bw + pw);
    acc.store(y, o);
  }
}

void conv(const KernelArgs& a) {
  const HostView &x = a.in[0], &w = a.in[1], &y = a.out[0];
  const auto& strides = a.node.attrs.ints("strides");
  const auto& padding = a.node.attrs.intss("padding");
  const auto& dilation = a.node.attrs.ints("dilation");
  int64_t groups = a.node.attrs.i("groups");
  size_t sp = x.shape.size() - 2;
  int64_t C = x.shape[1], O = w.shape[0], Cg = C / groups, Og = O / groups;
  std::vector<int64_t> xs = strides_of(x.shape), ws = strides_of(w.shape);
  std::vector<int64_t> kshape(w.shape.begin() + 2, w.shape.end());
  int64_t K = 1;
  for (int64_t k : kshape) K *= k;
  std::vector<int64_t> oc, kc;
  for (int64_t o = 0; o < y.numel; ++o) {
    unravel(o, y.shape, oc);
    int64_t n = oc[0], oo = oc[1], g = oo / Og;
    Acc acc{x.dtype};
    for (int64_t c = 0; c < Cg; ++c) {
      for (int64_t k = 0; k < K; ++k) {
        unravel(k, kshape, kc);
        int64_t xoff = n * xs[0] + (g * Cg + c) * xs[1], woff = oo * ws[0] + c * ws[1];
        bool inside = true;
        for (size_t s = 0; s < sp && inside; ++s) {
          int64_t pos = oc[2 + s] * strides[s] - padding[s][0] + kc[s] * dilation[s];
          inside = pos >= 0 && pos < x.shape[2 + s];
          xoff += pos * xs[2 + s];
          woff += kc[s] * ws[2 + s];
        }
        if (inside) acc.add(x, xoff, w, woff);
      }
    }
    acc.store(y, o);
  }
}

}  // namespace

void register_linalg(KernelTable& t) {
  t[static_cast<size_t>(Op::dot_general)] = dot_general;
  t[static_cast<size_t>(Op::conv)] = conv;
}

}  // namespace rlx::backends::reference
