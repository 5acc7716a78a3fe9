// Reductions, cumulative sums and sorting.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "backends/reference/kernels.h"

namespace rlx::backends::reference {

namespace {

using ir::Op;

// NaN compares above everything (numpy's argmax/argmin and sort order).
bool real_less(double a, double b) {
  if (std::isnan(a)) return false;
  if (std::isnan(b)) return true;
  return a < b;
}

void reduce(const KernelArgs& a) {
  const HostView &x = a.in[0], &y = a.out[0];
  const std::string& kind = a.node.attrs.s("kind");
  std::vector<bool> reduced(x.shape.size(), false);
  for (int64_t ax : a.node.attrs.ints("axes")) reduced[static_cast<size_t>(norm_axis(ax, x.shape.size()))] = true;
  // Output index of an input element: its coordinates with the reduced dims dropped.
  std::vector<int64_t> out_dims;
  for (size_t d = 0; d < x.shape.size(); ++d)
    if (!reduced[d]) out_dims.push_back(x.shape[d]);
  std::vector<int64_t> out_st = strides_of(out_dims);
  int64_t n_out = y.numel;
  DType d = x.dtype;
  bool arg = kind == "argmax" || kind == "argmin";
  bool is_max = kind == "max" || kind == "argmax";
  int64_t arg_axis = -1;
  for (size_t k = 0; k < reduced.size(); ++k)
    if (reduced[k]) arg_axis = static_cast<int64_t>(k);
  std::vector<double> accd(static_cast<size_t>(n_out), kind == "prod" ? 1.0 : 0.0);
  std::vector<int64_t> acci(static_cast<size_t>(n_out), kind == "prod" ? 1 : 0);
  std::vector<c128> accc(static_cast<size_t>(n_out), kind == "prod" ? c128(1, 0) : c128(0, 0));
  std::vector<int64_t> best(static_cast<size_t>(n_out), -1);
  std::vector<int64_t> coord;
  for (int64_t i = 0; i < x.numel; ++i) {
    unravel(i, x.shape, coord);
    int64_t o = 0;
    for (size_t k = 0, j = 0; k < coord.size(); ++k)
      if (!reduced[k]) o += coord[k] * out_st[j++];
    size_t oi = static_cast<size_t>(o);
    bool first = best[oi] < 0;
    if (is_complex(d)) {
      c128 v = rc(x, i);
      accc[oi] = kind == "sum" ? accc[oi] + v : accc[oi] * v;
      best[oi] = 0;
    } else if (is_float(d)) {
      double v = rd(x, i);
      if (kind == "sum") accd[oi] += v;
      else if (kind == "prod") accd[oi] *= v;
      else {
        double cur = accd[oi];
        // A NaN wins and stays (first NaN for arg kinds).
        bool take = first || (!std::isnan(cur) && (is_max ? real_less(cur, v) : (std::isnan(v) || v < cur)));
        if (take) {
          accd[oi] = v;
          best[oi] = arg ? coord[static_cast<size_t>(arg_axis)] : 0;
        }
      }
      if (!arg && (kind == "sum" || kind == "prod")) best[oi] = 0;
    } else {
      int64_t v = ri(x, i);
      if (kind == "sum") acci[oi] = wrap_add(acci[oi], v);
      else if (kind == "prod") acci[oi] = wrap_mul(acci[oi], v);
      else if (first || (is_max ? v > acci[oi] : v < acci[oi])) {
        acci[oi] = v;
        best[oi] = arg ? coord[static_cast<size_t>(arg_axis)] : 0;
      }
      if (!arg && (kind == "sum" || kind == "prod")) best[oi] = 0;
    }
  }
  for (int64_t o = 0; o < n_out; ++o) {
    size_t oi = static_cast<size_t>(o);
    if (arg) wi(y, o, best[oi]);
    else if (is_complex(d)) wc(y, o, accc[oi]);
    else if (is_float(d)) {
      // max/min over an empty axis: the identity (-inf / +inf)
      double v = best[oi] < 0 && (kind == "max" || kind == "min") ? (kind == "max" ? -INFINITY : INFINITY) : accd[oi];
      wd(y, o, v);
    } else {
      int64_t v = acci[oi];
      if (best[oi] < 0 && kind == "max") v = d == DType::boolean ? 0 : std::numeric_limits<int64_t>::min();
      if (best[oi] < 0 && kind == "min") v = d == DType::boolean ? 1 : std::numeric_limits<int64_t>::max();
      wi(y, o, v);
    }
  }
}

void cumsum(const KernelArgs& a) {
  const HostView &x = a.in[0], &y = a.out[0];
  int64_t axis = norm_axis(a.node.attrs.i("axis"), x.shape.size());
  bool exclusive = a.node.attrs.b("exclusive"), reverse = a.node.attrs.b("reverse");
  for_each_line(x.shape, axis, [&](int64_t base, int64_t stride, int64_t n) {
    double sd = 0;
    int64_t si = 0;
    c128 sc = 0;
    for (int64_t k = 0; k < n; ++k) {
      int64_t j = base + (reverse ? n - 1 - k : k) * stride;
      if (is_complex(x.dtype)) {
        if (exclusive) wc(y, j, sc);
        sc += rc(x, j);
        if (!exclusive) wc(y, j, sc);
      } else if (is_float(x.dtype)) {
        double v = rd(x, j);
        if (exclusive) wd(y, j, sd);
        sd += v;
        if (!exclusive) wd(y, j, sd);
      } else {
        int64_t v = ri(x, j);
        if (exclusive) wi(y, j, si);
        si = wrap_add(si, v);
        if (!exclusive) wi(y, j, si);
      }
    }
  });
}

// Stable order of a line: ascending or descending, NaN above everything.
std::vector<int64_t> line_order(const HostView& x, int64_t base, int64_t stride, int64_t n, bool descending) {
  std::vector<int64_t> idx(static_cast<size_t>(n));
  std::iota(idx.begin(), idx.end(), 0);
  if (is_float(x.dtype)) {
    std::stable_sort(idx.begin(), idx.end(), [&](int64_t p, int64_t q) {
      double u = rd(x, base + p * stride), v = rd(x, base + q * stride);
      return descending ? real_less(v, u) : real_less(u, v);
    });
  } else {
    std::stable_sort(idx.begin(), idx.end(), [&](int64_t p, int64_t q) {
      int64_t u = ri(x, base + p * stride), v = ri(x, base + q * stride);
      return descending ? v < u : u < v;
    });
  }
  return idx;
}

void sort(const KernelArgs& a) {
  const HostView &x = a.in[0], &vals = a.out[0], &inds = a.out[1];
  int64_t axis = norm_axis(a.node.attrs.i("axis"), x.shape.size());
  bool desc = a.node.attrs.b("descending");
  for_each_line(x.shape, axis, [&](int64_t base, int64_t stride, int64_t n) {
    std::vector<int64_t> order = line_order(x, base, stride, n, desc);
    for (int64_t k = 0; k < n; ++k) {
      copy_element(vals, base + k * stride, x, base + order[static_cast<size_t>(k)] * stride);
      wi(inds, base + k * stride, order[static_cast<size_t>(k)]);
    }
  });
}

void topk(const KernelArgs& a) {
  const HostView &x = a.in[0], &vals = a.out[0], &inds = a.out[1];
  int64_t axis = norm_axis(a.node.attrs.i("axis"), x.shape.size());
  int64_t k = a.node.attrs.i("k");
  bool largest = a.node.attrs.b("largest");
  std::vector<int64_t> ost = strides_of(vals.shape);
  std::vector<int64_t> coord;
  for_each_line(x.shape, axis, [&](int64_t base, int64_t stride, int64_t n) {
    std::vector<int64_t> order = line_order(x, base, stride, n, largest);
    unravel(base, x.shape, coord);
    int64_t obase = 0;
    for (size_t d = 0; d < coord.size(); ++d) obase += coord[d] * ost[d];
    int64_t ostride = ost[static_cast<size_t>(axis)];
    for (int64_t j = 0; j < k; ++j) {
      copy_element(vals, obase + j * ostride, x, base + order[static_cast<size_t>(j)] * stride);
      wi(inds, obase + j * ostride, order[static_cast<size_t>(j)]);
    }
  });
}

}  // namespace

void register_reduce(KernelTable& t) {
  t[static_cast<size_t>(Op::reduce)] = reduce;
  t[static_cast<size_t>(Op::cumsum)] = cumsum;
  t[static_cast<size_t>(Op::sort)] = sort;
  t[static_cast<size_t>(Op::topk)] = topk;
}

}  // namespace rlx::backends::reference
