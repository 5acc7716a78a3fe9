// Gradients of the dense linear algebra ops, written with the ops themselves (solves, not
// inverses, wherever a product with an inverse appears). Symmetric inputs are read from their lower
// triangle, so their gradient lives there too: for a symmetric gradient G of the full matrix, the
// lower entries get G + Gᵀ and the diagonal G's.
#include "ops/builder.h"
#include "ops/infer_util.h"
#include "ops/matrix.h"
#include "ops/rules.h"
#include "ops/vjp_util.h"

namespace rlx::ops {

namespace {

using namespace matrix;

// The gradient of a function of sym(A) read from A's lower triangle, given G with
// d loss = ⟨G, d sym(A)⟩ for any symmetric perturbation (G need not be symmetric itself).
ValueId lower_read(Builder& b, ValueId g) { return b.add(tril(b, b.add(g, transpose(b, g)), -1), diagonal_only(b, g)); }

ValueId tri_solve(Builder& b, ValueId a, ValueId rhs, bool lower, bool left, bool transpose, bool unit = false) {
  return b.emit1(Op::triangular_solve, {a, rhs},
                 Attrs{{"lower", lower}, {"left", left}, {"transpose", transpose}, {"unit_diagonal", unit}});
}

// Ā = sym(L⁻ᵀ Φ(Lᵀ L̄) L⁻¹), Φ: the lower triangle with its diagonal halved.
std::vector<ValueId> vjp_cholesky(Builder& b, const VjpArgs& a) {
  ValueId l = a.out[0], lbar = or_zeros(b, a.cot[0], l);
  ValueId p = matmul(b, transpose(b, l), lbar);
  p = b.sub(tril(b, p), b.mul(diagonal_only(b, p), b.scalar_like(p, 0.5)));
  ValueId s = tri_solve(b, l, tri_solve(b, l, p, true, true, true), true, false, false);
  return {lower_read(b, b.mul(b.add(s, transpose(b, s)), b.scalar_like(s, 0.5)))};
}

// op(A) X = B: B̄ = op(A)⁻ᵀ X̄ and Ā on A's triangle from −B̄ Xᵀ (the right-hand version mirrored).
std::vector<ValueId> vjp_triangular_solve(Builder& b, const VjpArgs& a) {
  bool lower = a.attrs.b("lower"), left = a.attrs.b("left"), tr = a.attrs.b("transpose"), unit = a.attrs.b("unit_diagonal");
  ValueId x = a.out[0], xbar = or_zeros(b, a.cot[0], x);
  ValueId bbar = tri_solve(b, a.in[0], xbar, lower, left, !tr, unit);
  ValueId abar;
  if (left) abar = tr ? matmul(b, x, transpose(b, bbar)) : matmul(b, bbar, transpose(b, x));
  else abar = tr ? matmul(b, transpose(b, bbar), x) : matmul(b, transpose(b, x), bbar);
  abar = b.unary(Op::neg, abar);
  abar = lower ? tril(b, abar, unit ? -1 : 0) : triu(b, abar, unit ? 1 : 0);
  return {abar, bbar};
}

std::vector<ValueId> vjp_solve(Builder& b, const VjpArgs& a) {
  ValueId x = a.out[0], xbar = or_zeros(b, a.cot[0], x);
  ValueId bbar = b.emit1(Op::solve, {transpose(b, a.in[0]), xbar});
  return {b.unary(Op::neg, matmul(b, bbar, transpose(b, x))), bbar};
}

std::vector<ValueId> vjp_inv(Builder& b, const VjpArgs& a) {
  ValueId xt = transpose(b, a.out[0]), xbar = or_zeros(b, a.cot[0], a.out[0]);
  return {b.unary(Op::neg, matmul(b, matmul(b, xt, xbar), xt))};
}

// d log|det A| = tr(A⁻¹ dA): Ā = ḡ A⁻ᵀ (the sign is piecewise constant).
std::vector<ValueId> vjp_slogdet(Builder& b, const VjpArgs& a) {
  if (a.cot[1] == ir::kNoValue) return {zeros_like(b, a.in[0])};
  ValueId g = as_column(b, as_column(b, a.cot[1]));
  return {b.mul(g, transpose(b, b.emit1(Op::inv, {a.in[0]})))};
}

// exp's adjoint derivative at A applied to Ḡ is the top-right block of exp([[Aᵀ, Ḡ], [0, Aᵀ]]).
std::vector<ValueId> vjp_matrix_exp(Builder& b, const VjpArgs& a) {
  ValueId at = transpose(b, a.in[0]), gbar = or_zeros(b, a.cot[0], a.out[0]);
  int64_t r = static_cast<int64_t>(b.rank(at));
  ValueId top = b.concat({at, gbar}, r - 1), bottom = b.concat({zeros_like(b, at), at}, r - 1);
  ValueId e = b.emit1(Op::matrix_exp, {b.concat({top, bottom}, r - 2)});
  Dim n = b.shape(at).back();
  return {b.slice_axis(b.slice_axis(e, r - 2, Dim(0), n), r - 1, n, n * Dim(2))};
}

// P A = L U, square: Ā = Pᵀ L⁻ᵀ (tril(Lᵀ L̄, −1) + triu(Ū Uᵀ)) U⁻ᵀ, with L̄, Ū the strictly lower
// and the upper part of the packed cotangent. Both triangular solves read the packed factors.
std::vector<ValueId> vjp_lu(Builder& b, const VjpArgs& a) {
  Shape s = b.shape(a.in[0]);
  if (s[s.size() - 2] != s.back()) type_error(Op::lu, cat("the gradient of lu needs a square matrix, got ", shape_str(s)));
  ValueId lu = a.out[0], c = or_zeros(b, a.cot[0], lu);
  ValueId l = b.add(tril(b, lu, -1), identity_like(b, lu)), u = triu(b, lu);
  ValueId mid = b.add(tril(b, matmul(b, transpose(b, l), tril(b, c, -1)), -1), triu(b, matmul(b, triu(b, c), transpose(b, u))));
  ValueId y = tri_solve(b, lu, tri_solve(b, lu, mid, true, true, true, true), false, false, true);
  // Pᵀ Y: row perm[i] of the result is row i of Y (a one-hot P[i][j] = (perm[i] == j)).
  Shape ps = b.shape(lu);
  ValueId cols = b.iota({ps[ps.size() - 2], ps.back()}, DType::i64, 1);
  ValueId p = b.cast(b.binary(Op::eq, as_column(b, a.out[2]), cols), b.dtype(lu));
  return {matmul(b, transpose(b, p), y)};
}

// A = Q R (reduced, m ≥ n), as TensorFlow's QrGrad: with M = Qᵀ Q̄ − Q̄ᵀ Q + R R̄ᵀ − R̄ Rᵀ,
// Ā = Q (R̄ + tril(M) R⁻ᵀ) + (Q̄ − Q Qᵀ Q̄) R⁻ᵀ.
std::vector<ValueId> vjp_qr(Builder& b, const VjpArgs& a) {
  Shape s = b.shape(a.in[0]);
  Dim m = s[s.size() - 2], n = s.back();
  if (!(m.is_static() && n.is_static() && m.value() >= n.value()))
    type_error(Op::qr, cat("the gradient of qr needs at least as many rows as columns, got ", shape_str(s)));
  ValueId q = a.out[0], r = a.out[1];
  ValueId qbar = or_zeros(b, a.cot[0], q), rbar = or_zeros(b, a.cot[1], r);
  ValueId qdq = matmul(b, transpose(b, q), qbar), rdr = matmul(b, r, transpose(b, rbar));
  ValueId mm = tril(b, b.add(b.sub(qdq, transpose(b, qdq)), b.sub(rdr, transpose(b, rdr))));
  ValueId ga = matmul(b, q, b.add(rbar, tri_solve(b, r, mm, false, false, true)));
  ValueId gb = tri_solve(b, r, b.sub(qbar, matmul(b, q, qdq)), false, false, true);
  return {b.add(ga, gb)};
}

// A = V diag(w) Vᵀ: Ā = V (diag(w̄) + F ∘ Vᵀ V̄) Vᵀ, F[i][j] = 1 / (w[j] − w[i]).
std::vector<ValueId> vjp_eigh(Builder& b, const VjpArgs& a) {
  ValueId w = a.out[0], v = a.out[1];
  ValueId inner = b.mul(inverse_gaps(b, w), matmul(b, transpose(b, v), or_zeros(b, a.cot[1], v)));
  if (a.cot[0] != ir::kNoValue) inner = b.add(inner, diag_embed(b, a.cot[0]));
  return {lower_read(b, matmul(b, matmul(b, v, inner), transpose(b, v)))};
}

// A = U diag(s) Vᵀ, reduced (Townsend, "Differentiating the singular value decomposition"):
// Ā = U [(J + Jᵀ) S + diag(s̄) + S (K + Kᵀ)] Vᵀ + (I − U Uᵀ) Ū S⁻¹ Vᵀ + U S⁻¹ V̄ᵀ (I − V Vᵀ),
// J = F ∘ Uᵀ Ū, K = F ∘ Vᵀ V̄, F[i][j] = 1 / (s[j]² − s[i]²).
std::vector<ValueId> vjp_svd(Builder& b, const VjpArgs& a) {
  ValueId u = a.out[0], s = a.out[1], vt = a.out[2], v = transpose(b, vt);
  ValueId ubar = or_zeros(b, a.cot[0], u), vbar = transpose(b, or_zeros(b, a.cot[2], vt));
  ValueId f = inverse_gaps(b, b.mul(s, s));
  ValueId j = b.mul(f, matmul(b, transpose(b, u), ubar)), k = b.mul(f, matmul(b, transpose(b, v), vbar));
  ValueId inner = b.add(b.mul(b.add(j, transpose(b, j)), as_row(b, s)), b.mul(as_column(b, s), b.add(k, transpose(b, k))));
  if (a.cot[1] != ir::kNoValue) inner = b.add(inner, diag_embed(b, a.cot[1]));
  ValueId g = matmul(b, matmul(b, u, inner), vt);
  // The parts of Ū and V̄ outside the spans of U and V (zero for a square A).
  ValueId ubar_s = b.div(ubar, as_row(b, s));
  ValueId u_out = b.sub(ubar_s, matmul(b, u, matmul(b, transpose(b, u), ubar_s)));
  ValueId vbar_s = b.div(vbar, as_row(b, s));
  ValueId v_out = b.sub(vbar_s, matmul(b, v, matmul(b, vt, vbar_s)));
  return {b.add(g, b.add(matmul(b, u_out, vt), matmul(b, u, transpose(b, v_out))))};
}

}  // namespace

void register_vjp_factorize(RuleTable& t) {
  auto set = [&](Op op, VjpFn f) { t[static_cast<size_t>(op)].vjp = f; };
  set(Op::cholesky, vjp_cholesky);
  set(Op::triangular_solve, vjp_triangular_solve);
  set(Op::lu, vjp_lu);
  set(Op::solve, vjp_solve);
  set(Op::inv, vjp_inv);
  set(Op::slogdet, vjp_slogdet);
  set(Op::qr, vjp_qr);
  set(Op::eigh, vjp_eigh);
  set(Op::svd, vjp_svd);
  set(Op::matrix_exp, vjp_matrix_exp);
}

}  // namespace rlx::ops
