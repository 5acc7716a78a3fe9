// Discrete Fourier transforms by their definition: an O(n²) sum per output along one axis at a
// time (the transform over several axes is separable), in complex<double>. rfft is the full
// transform with the negative frequencies dropped; irfft the inverse over the other axes, then
// the Hermitian sum along the last.
#include <cmath>

#include "backends/reference/kernels.h"
#include "ops/fft.h"

namespace rlx::backends::reference {

namespace {

using ir::Op;

// e^(±2πi·k/n), with k reduced mod n first so large products keep their accuracy.
c128 twiddle(int64_t k, int64_t n, bool inverse) {
  double t = 2.0 * M_PI * static_cast<double>(k % n) / static_cast<double>(n);
  return {std::cos(t), inverse ? std::sin(t) : -std::sin(t)};
}

// In place along `axis` of a row-major complex array of `shape`.
void dft_axis(std::vector<c128>& x, const std::vector<int64_t>& shape, int64_t axis, bool inverse) {
  std::vector<c128> line;
  for_each_line(shape, axis, [&](int64_t base, int64_t stride, int64_t n) {
    line.assign(static_cast<size_t>(n), c128{});
    for (int64_t k = 0; k < n; ++k) {
      c128 s{};
      for (int64_t t = 0; t < n; ++t) s += x[static_cast<size_t>(base + t * stride)] * twiddle(k * t, n, inverse);
      line[static_cast<size_t>(k)] = s;
    }
    for (int64_t k = 0; k < n; ++k) x[static_cast<size_t>(base + k * stride)] = line[static_cast<size_t>(k)];
  });
}

std::vector<c128> load(const HostView& v) {
  std::vector<c128> x(static_cast<size_t>(v.numel));
  for (int64_t i = 0; i < v.numel; ++i) x[static_cast<size_t>(i)] = rc(v, i);
  return x;
}

std::vector<int64_t> axes_of(const KernelArgs& a) {
  std::vector<int64_t> axes;
  for (int64_t ax : a.node.attrs.ints("axes")) axes.push_back(norm_axis(ax, a.in[0].shape.size()));
  return axes;
}

void fft(const KernelArgs& a) {
  bool inverse = a.node.attrs.b("inverse");
  std::vector<int64_t> axes = axes_of(a);
  std::vector<c128> x = load(a.in[0]);
  for (int64_t ax : axes) dft_axis(x, a.in[0].shape, ax, inverse);
  double s = ops::fft_scale(a.node.attrs.s("norm"), inverse, ops::fft_points(a.in[0].shape, axes));
  for (int64_t i = 0; i < a.out[0].numel; ++i) wc(a.out[0], i, x[static_cast<size_t>(i)] * s);
}

void rfft(const KernelArgs& a) {
  std::vector<int64_t> axes = axes_of(a);
  std::vector<c128> x = load(a.in[0]);
  for (int64_t ax : axes) dft_axis(x, a.in[0].shape, ax, false);
  double s = ops::fft_scale(a.node.attrs.s("norm"), false, ops::fft_points(a.in[0].shape, axes));
  // keep bins [0, m) of the last axis
  const std::vector<int64_t>& ys = a.out[0].shape;
  std::vector<int64_t> xst = strides_of(a.in[0].shape), coord;
  for (int64_t i = 0; i < a.out[0].numel; ++i) {
    unravel(i, ys, coord);
    int64_t src = 0;
    for (size_t d = 0; d < coord.size(); ++d) src += coord[d] * xst[d];
    wc(a.out[0], i, x[static_cast<size_t>(src)] * s);
  }
}

void irfft(const KernelArgs& a) {
  std::vector<int64_t> axes = axes_of(a);
  int64_t last = axes.back(), n = a.node.attrs.i("n");
  std::vector<c128> x = load(a.in[0]);
  for (size_t k = 0; k + 1 < axes.size(); ++k) dft_axis(x, a.in[0].shape, axes[k], true);
  const std::vector<int64_t>& ys = a.out[0].shape;
  double s = ops::fft_scale(a.node.attrs.s("norm"), true, ops::fft_points(ys, axes));
  std::vector<int64_t> xst = strides_of(a.in[0].shape), coord;
  int64_t m = a.in[0].shape[static_cast<size_t>(last)], bin_stride = xst[static_cast<size_t>(last)];
  for (int64_t i = 0; i < a.out[0].numel; ++i) {
    unravel(i, ys, coord);
    int64_t t = coord[static_cast<size_t>(last)], base = 0;
    coord[static_cast<size_t>(last)] = 0;
    for (size_t d = 0; d < coord.size(); ++d) base += coord[d] * xst[d];
    // X₀ + Σ 2·Re(X_k e^(2πi·kt/n)) over the bins with a mirror image, + X_(n/2)·(−1)ᵗ for even n
    double y = x[static_cast<size_t>(base)].real();
    for (int64_t k = 1; k < m; ++k) {
      c128 xk = x[static_cast<size_t>(base + k * bin_stride)];
      if (2 * k == n) y += xk.real() * (t % 2 ? -1.0 : 1.0);
      else y += 2.0 * (xk * twiddle(k * t, n, true)).real();
    }
    wd(a.out[0], i, y * s);
  }
}

}  // namespace

void register_fft(KernelTable& t) {
  t[static_cast<size_t>(Op::fft)] = fft;
  t[static_cast<size_t>(Op::rfft)] = rfft;
  t[static_cast<size_t>(Op::irfft)] = irfft;
}

}  // namespace rlx::backends::reference
