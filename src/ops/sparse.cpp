// Sparse matrices in CSR: products and direct solves that never densify, with gradients for the
// values (on the stored pattern only) and the dense operand. A's row of each stored entry comes
// from csr_row_ids, so a values gradient is two row gathers and a dot product per entry.
#include "ops/builder.h"
#include "ops/infer_util.h"
#include "ops/matrix.h"
#include "ops/rules.h"

namespace rlx::ops {

namespace {

// Checks the CSR triple and the dense operand; returns A's row count.
Dim csr_rows(Op op, const std::vector<Type>& in) {
  const Type &ptr = in[0], &cols = in[1], &vals = in[2], &x = in[3];
  if (ptr.dtype != DType::i64 || ptr.shape.size() != 1) type_error(op, cat("row_ptr must be i64[rows + 1], got ", ir::type_str(ptr)));
  if (cols.dtype != DType::i64 || cols.shape.size() != 1) type_error(op, cat("col_idx must be i64[nnz], got ", ir::type_str(cols)));
  if (vals.dtype != DType::f32 && vals.dtype != DType::f64) type_error(op, cat("values must be f32 or f64, got ", dtype_name(vals.dtype)));
  if (vals.shape.size() != 1 || vals.shape[0] != cols.shape[0])
    type_error(op, cat("values ", ir::type_str(vals), " must match col_idx ", ir::type_str(cols), " entry for entry"));
  if (x.dtype != vals.dtype) type_error(op, cat("the dense operand is ", dtype_name(x.dtype), ", the values ", dtype_name(vals.dtype)));
  if (x.shape.size() != 2) type_error(op, cat("the dense operand must be a matrix [rows, k], got ", shape_str(x.shape)));
  if (ptr.shape[0].is_static() && ptr.shape[0].value() < 1) type_error(op, "row_ptr needs at least one entry");
  return ptr.shape[0] - Dim(1);
}

std::vector<Type> infer_csr_matmul(Op op, const std::vector<Type>& in, const Attrs& a) {
  Dim m = csr_rows(op, in), n(a.i("n"));
  if (a.i("n") < 0) type_error(op, cat("n (A's column count) must not be negative, got ", a.i("n")));
  bool t = a.b("transpose");
  const Shape& x = in[3].shape;
  if (x[0] != (t ? m : n))
    type_error(op, cat(t ? "Aᵀ x" : "A x", " for A [", m.str(), ", ", n.str(), "] needs ", (t ? m : n).str(), " rows in x, got ", shape_str(x)));
  return {{in[2].dtype, {t ? n : m, x[1]}}};
}

std::vector<Type> infer_csr_solve(Op op, const std::vector<Type>& in, const Attrs&) {
  Dim m = csr_rows(op, in);
  if (in[3].shape[0] != m) type_error(op, cat("A has ", m.str(), " rows and columns; the right-hand side ", shape_str(in[3].shape), " does not fit"));
  return {in[3]};
}

std::vector<Type> infer_csr_row_ids(Op op, const std::vector<Type>& in, const Attrs& a) {
  if (in[0].dtype != DType::i64 || in[0].shape.size() != 1) type_error(op, cat("row_ptr must be i64[rows + 1], got ", ir::type_str(in[0])));
  if (a.i("nnz") < 0) type_error(op, cat("nnz must not be negative, got ", a.i("nnz")));
  return {{DType::i64, {Dim(a.i("nnz"))}}};
}

ValueId row_ids(Builder& b, const VjpArgs& a) {
  Dim nnz = b.shape(a.in[1])[0];
  if (!nnz.is_static()) type_error(Op::csr_row_ids, "a sparse gradient needs a static entry count");
  return b.emit1(Op::csr_row_ids, {a.in[0]}, Attrs{{"nnz", nnz.value()}});
}

// Σ_j u[i_p, j] · v[c_p, j] for every stored entry p = (i_p, c_p).
ValueId entry_products(Builder& b, ValueId u, ValueId rows, ValueId v, ValueId cols) {
  return b.reduce(b.mul(b.gather(u, rows, 0), b.gather(v, cols, 0)), "sum", {1}, false);
}

// y = A x: x̄ = Aᵀ ȳ, Ā[i, c] = ȳ[i] · x[c]; y = Aᵀ x: x̄ = A ȳ, Ā[i, c] = x[i] · ȳ[c].
std::vector<ValueId> vjp_csr_matmul(Builder& b, const VjpArgs& a) {
  bool t = a.attrs.b("transpose");
  ValueId ybar = matrix::or_zeros(b, a.cot[0], a.out[0]);
  Attrs flipped = a.attrs;
  flipped.set("transpose", !t);
  ValueId xbar = b.emit1(Op::csr_matmul, {a.in[0], a.in[1], a.in[2], ybar}, flipped);
  ValueId rows = row_ids(b, a);
  ValueId vbar = t ? entry_products(b, a.in[3], rows, ybar, a.in[1]) : entry_products(b, ybar, rows, a.in[3], a.in[1]);
  return {ir::kNoValue, ir::kNoValue, vbar, xbar};
}

// A x = b: b̄ = A⁻ᵀ x̄, Ā[i, c] = −b̄[i] · x[c]; Aᵀ x = b: b̄ = A⁻¹ x̄, Ā[i, c] = −x[i] · b̄[c].
std::vector<ValueId> vjp_csr_solve(Builder& b, const VjpArgs& a) {
  bool t = a.attrs.b("transpose");
  ValueId x = a.out[0], xbar = matrix::or_zeros(b, a.cot[0], x);
  Attrs flipped = a.attrs;
  flipped.set("transpose", !t);
  ValueId bbar = b.emit1(Op::csr_solve, {a.in[0], a.in[1], a.in[2], xbar}, flipped);
  ValueId rows = row_ids(b, a), cols = a.in[1];
  ValueId vbar = t ? entry_products(b, x, rows, bbar, cols) : entry_products(b, bbar, rows, x, cols);
  if (a.attrs.s("method") == "cholesky") {
    // A is read from its lower triangle: an entry below the diagonal stands for both (r, c) and
    // (c, r), the diagonal for itself, and entries above it for nothing.
    ValueId mirrored = b.add(vbar, entry_products(b, bbar, cols, x, rows));
    ValueId zero = b.scalar_like(vbar, 0);
    vbar = b.select(b.binary(Op::gt, rows, cols), mirrored, b.select(b.binary(Op::eq, rows, cols), vbar, zero));
  }
  return {ir::kNoValue, ir::kNoValue, b.unary(Op::neg, vbar), bbar};
}

}  // namespace

void register_sparse(RuleTable& t) {
  t[static_cast<size_t>(Op::csr_matmul)].infer = infer_csr_matmul;
  t[static_cast<size_t>(Op::csr_matmul)].vjp = vjp_csr_matmul;
  t[static_cast<size_t>(Op::csr_solve)].infer = infer_csr_solve;
  t[static_cast<size_t>(Op::csr_solve)].vjp = vjp_csr_solve;
  t[static_cast<size_t>(Op::csr_row_ids)].infer = infer_csr_row_ids;
  t[static_cast<size_t>(Op::csr_row_ids)].no_gradient = true;
}

}  // namespace rlx::ops
