// The general eigendecomposition: type rule and gradient. For distinct eigenvalues, with
// A = V diag(w) V⁻¹ and V's columns of unit length (the formula PyTorch and JAX use):
//   Ā = V⁻ᴴ (diag(w̄) + (Vᴴ Ū − Vᴴ V diag(Re diag(Vᴴ Ū))) ∘ F) Vᴴ,  F[i][j] = 1 / conj(w[j] − w[i]),
// real for a real A. Ū is the cotangent of the eigenvectors before RLX's phase convention: fixing
// the phase (the largest entry real and positive) adds i·Im(vᴴ v̄)/v_j at that entry j of each
// column, the part of v̄ the phase rotation would otherwise swallow. Like eigh's, the gradient is
// undefined at repeated eigenvalues.
#include "ops/builder.h"
#include "ops/infer_util.h"
#include "ops/matrix.h"
#include "ops/rules.h"
#include "ops/vjp_util.h"

namespace rlx::ops {

namespace {

using V = std::vector<ValueId>;
using namespace matrix;

std::vector<Type> infer_eig(Op op, const std::vector<Type>& in, const Attrs&) {
  const Type& a = in[0];
  std::optional<DType> c = is_complex(a.dtype) ? std::optional<DType>(a.dtype) : complex_dtype_of(a.dtype);
  if (!c) type_error(op, cat("takes f32, f64, c64 or c128 matrices, got ", dtype_name(a.dtype)));
  if (a.shape.size() < 2) type_error(op, cat("takes matrices [.., n, n], got ", shape_str(a.shape)));
  const Dim &rows = a.shape[a.shape.size() - 2], &cols = a.shape.back();
  if (rows != cols) type_error(op, cat("takes square matrices, got ", shape_str(a.shape)));
  Shape w(a.shape.begin(), a.shape.end() - 1);
  return {{*c, w}, {*c, a.shape}};
}

ValueId adjoint(Builder& b, ValueId x) { return conj_if_complex(b, transpose(b, x)); }

// X with M X = B for complex M, B: the real system [[Re M, −Im M], [Im M, Re M]] of twice the size.
ValueId complex_solve(Builder& b, ValueId m, ValueId rhs) {
  int64_t r = static_cast<int64_t>(b.rank(m));
  ValueId mr = b.unary(Op::real, m), mi = b.unary(Op::imag, m);
  ValueId big = b.concat({b.concat({mr, b.unary(Op::neg, mi)}, r - 1), b.concat({mi, mr}, r - 1)}, r - 2);
  ValueId x = b.emit1(Op::solve, {big, b.concat({b.unary(Op::real, rhs), b.unary(Op::imag, rhs)}, r - 2)});
  Dim n = b.shape(m)[static_cast<size_t>(r - 2)];
  return b.emit1(Op::complex, {b.slice_axis(x, r - 2, Dim(0), n), b.slice_axis(x, r - 2, n, n * Dim(2))});
}

V vjp_eig(Builder& b, const VjpArgs& a) {
  ValueId w = a.out[0], v = a.out[1];
  ValueId gv = or_zeros(b, a.cot[1], v);
  int64_t r = static_cast<int64_t>(b.rank(v));
  Shape vs = b.shape(v);
  DType real_t = real_part_dtype(b.dtype(v));
  ValueId zero = b.scalar(real_t, 0);
  // the phase convention's part: at each column's pivot j, + i·Im(Σᵢ conj(v̄ᵢ) vᵢ) / v_j
  ValueId pivot_row = b.reduce(b.unary(Op::abs, v), "argmax", {r - 2}, true);  // [.., 1, n]
  ValueId at_pivot = b.binary(Op::eq, b.iota(vs, DType::i64, r - 2), b.broadcast(pivot_row, vs));
  ValueId phase = b.unary(Op::imag, b.reduce(b.mul(b.unary(Op::conj, gv), v), "sum", {r - 2}, true));
  ValueId pivot = b.reduce(b.select(at_pivot, b.unary(Op::real, v), zero), "sum", {r - 2}, true);
  ValueId correction = b.select(at_pivot, b.broadcast(b.div(phase, pivot), vs), zero);
  ValueId gu = b.add(gv, b.emit1(Op::complex, {b.broadcast(zero, vs), correction}));
  ValueId vh = adjoint(b, v);
  ValueId vhgu = matmul(b, vh, gu);
  ValueId on_diagonal = b.binary(Op::eq, b.iota(vs, DType::i64, r - 1), b.iota(vs, DType::i64, r - 2));
  ValueId diag_re = b.reduce(b.select(on_diagonal, b.unary(Op::real, vhgu), zero), "sum", {r - 2}, true);  // Re diag(Vᴴ Ū) as a row [.., 1, n]
  ValueId normalization = matmul(b, vh, b.mul(v, b.emit1(Op::complex, {diag_re, b.broadcast(zero, b.shape(diag_re))})));
  ValueId inner = b.mul(b.sub(vhgu, normalization), inverse_gaps(b, b.unary(Op::conj, w)));
  if (a.cot[0] != ir::kNoValue) inner = b.add(inner, diag_embed(b, a.cot[0]));
  ValueId ga = complex_solve(b, vh, matmul(b, inner, vh));
  DType in_t = b.dtype(a.in[0]);
  return {is_complex(in_t) ? ga : b.cast(b.unary(Op::real, ga), in_t)};
}

}  // namespace

void register_eig(RuleTable& t) {
  t[static_cast<size_t>(Op::eig)].infer = infer_eig;
  t[static_cast<size_t>(Op::eig)].vjp = vjp_eig;
}

}  // namespace rlx::ops
