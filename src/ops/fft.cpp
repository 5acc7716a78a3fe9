// Discrete Fourier transforms: type rules and gradients. Each transform is linear, so its
// gradient is its adjoint: the transform the other way with the dual norm (fft), the inverse of
// the zero-padded spectrum's real part (rfft), and rfft with the doubly counted bins doubled
// (irfft).
#include "ops/fft.h"

#include "ops/builder.h"
#include "ops/infer_util.h"
#include "ops/rules.h"
#include "util/scalar.h"

namespace rlx::ops {

namespace {

using V = std::vector<ValueId>;

// The normalized axes; the last one must have a static length when `static_last`.
Ints fft_axes(Op op, const Type& x, const Attrs& a, bool static_last) {
  Ints axes = normalize_axes(op, a.ints("axes"), x.shape.size());
  if (axes.empty()) type_error(op, "needs at least one axis");
  if (static_last && !x.shape[static_cast<size_t>(axes.back())].is_static())
    type_error(op, cat("the last transformed axis (", axes.back(), ") needs a static length, got ", shape_str(x.shape)));
  return axes;
}

std::vector<Type> infer_fft(Op op, const std::vector<Type>& in, const Attrs& a) {
  if (!is_complex(in[0].dtype)) type_error(op, cat("transforms a complex tensor (c64 or c128), got ", dtype_name(in[0].dtype), "; rfft takes real ones"));
  fft_axes(op, in[0], a, false);
  return {in[0]};
}

std::vector<Type> infer_rfft(Op op, const std::vector<Type>& in, const Attrs& a) {
  auto c = complex_dtype_of(in[0].dtype);
  if (!c) type_error(op, cat("transforms a real f32 or f64 tensor, got ", dtype_name(in[0].dtype)));
  Ints axes = fft_axes(op, in[0], a, true);
  Shape s = in[0].shape;
  Dim& last = s[static_cast<size_t>(axes.back())];
  if (last.value() < 1) type_error(op, cat("axis ", axes.back(), " is empty"));
  last = Dim(rfft_bins(last.value()));
  return {{*c, s}};
}

std::vector<Type> infer_irfft(Op op, const std::vector<Type>& in, const Attrs& a) {
  if (!is_complex(in[0].dtype)) type_error(op, cat("inverts a complex spectrum (c64 or c128), got ", dtype_name(in[0].dtype)));
  Ints axes = fft_axes(op, in[0], a, true);
  int64_t n = a.i("n");
  if (n < 1) type_error(op, cat("n (the output length) must be positive, got ", n));
  Shape s = in[0].shape;
  Dim& last = s[static_cast<size_t>(axes.back())];
  if (last.value() != rfft_bins(n))
    type_error(op, cat("an output of ", n, " points needs ", rfft_bins(n), " bins along axis ", axes.back(), ", got ", shape_str(in[0].shape)));
  last = Dim(n);
  return {{real_part_dtype(in[0].dtype), s}};
}

Attrs transform_attrs(const Attrs& a, const char* norm) { return Attrs{{"axes", a.ints("axes")}, {"norm", std::string(norm)}}; }

V vjp_fft(Builder& b, const VjpArgs& a) {
  Attrs at = transform_attrs(a.attrs, fft_dual_norm(a.attrs.s("norm")));
  at.set("inverse", !a.attrs.b("inverse"));
  return {b.emit1(Op::fft, {a.cot[0]}, at)};
}

// x̄ = Re(F^H · pad(ȳ)): the spectrum completed with zeros for the bins rfft drops.
V vjp_rfft(Builder& b, const VjpArgs& a) {
  ValueId g = a.cot[0];
  Ints axes = normalize_axes(Op::rfft, a.attrs.ints("axes"), b.rank(g));
  int64_t axis = axes.back();
  int64_t n = b.shape(a.in[0])[static_cast<size_t>(axis)].value(), m = rfft_bins(n);
  if (n > m) {
    Shape zs = b.shape(g);
    zs[static_cast<size_t>(axis)] = Dim(n - m);
    g = b.concat({g, b.broadcast(b.scalar_like(g, 0), zs)}, axis);
  }
  Attrs at = transform_attrs(a.attrs, fft_dual_norm(a.attrs.s("norm")));
  at.set("inverse", true);
  return {b.unary(Op::real, b.emit1(Op::fft, {g}, at))};
}

// irfft counts every bin but the zero and Nyquist ones twice (once for its mirror image).
V vjp_irfft(Builder& b, const VjpArgs& a) {
  ValueId x = a.in[0];
  Ints axes = normalize_axes(Op::irfft, a.attrs.ints("axes"), b.rank(x));
  int64_t axis = axes.back(), n = a.attrs.i("n"), m = rfft_bins(n);
  ValueId gx = b.emit1(Op::rfft, {a.cot[0]}, transform_attrs(a.attrs, fft_dual_norm(a.attrs.s("norm"))));
  std::vector<int64_t> ws(b.rank(x), 1);
  ws[static_cast<size_t>(axis)] = m;
  Tensor w = Tensor::zeros(b.dtype(x), ws);
  for (int64_t k = 0; k < m; ++k) store_c128(w.data(), w.dtype(), k, {k == 0 || 2 * k == n ? 1.0 : 2.0, 0.0});
  return {b.mul(gx, b.constant(w))};
}

}  // namespace

void register_fft(RuleTable& t) {
  auto set = [&](Op op, InferFn f, VjpFn v) {
    t[static_cast<size_t>(op)].infer = f;
    t[static_cast<size_t>(op)].vjp = v;
  };
  set(Op::fft, infer_fft, vjp_fft);
  set(Op::rfft, infer_rfft, vjp_rfft);
  set(Op::irfft, infer_irfft, vjp_irfft);
}

}  // namespace rlx::ops
