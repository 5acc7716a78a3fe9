// Dense linear algebra: the factorizations (cholesky, lu, qr, eigh, svd), the solves
// (triangular_solve, solve, inv, lstsq), determinants and matrix_exp. Each works on the last two
// axes and batches over the leading ones; the conventions that make results unique are in ops.def.
#include "ops/builder.h"
#include "ops/infer_util.h"
#include "ops/matrix.h"
#include "ops/rules.h"

namespace rlx::ops {

void register_vjp_factorize(RuleTable& t);

namespace {

// The batch axes and the matrix axes [m, n] of a linear algebra operand.
struct MatrixType {
  Shape batch;
  Dim m, n;
};

MatrixType matrix_type(Op op, const Type& t, const char* role = "input") {
  if (t.dtype != DType::f32 && t.dtype != DType::f64)
    type_error(op, cat("the ", role, " must be f32 or f64, got ", dtype_name(t.dtype)));
  if (t.shape.size() < 2) type_error(op, cat("the ", role, " must be a matrix (rank ≥ 2), got ", shape_str(t.shape)));
  MatrixType m;
  m.batch.assign(t.shape.begin(), t.shape.end() - 2);
  m.m = t.shape[t.shape.size() - 2];
  m.n = t.shape.back();
  return m;
}

MatrixType square(Op op, const Type& t, const char* role = "input") {
  MatrixType m = matrix_type(op, t, role);
  if (m.m != m.n) type_error(op, cat("the ", role, " must be square, got ", shape_str(t.shape)));
  return m;
}

Shape with(Shape batch, std::initializer_list<Dim> tail) {
  batch.insert(batch.end(), tail);
  return batch;
}

Dim min_dim(Op op, const Dim& a, const Dim& b) {
  if (a == b) return a;
  if (a.is_static() && b.is_static()) return Dim(std::min(a.value(), b.value()));
  type_error(op, cat("min(", a.str(), ", ", b.str(), ") of a symbolic matrix shape is unknown"));
}

// A right-hand side: same dtype and batch as A, `rows` rows (left) or columns (right).
void require_rhs(Op op, const MatrixType& a, const std::vector<Type>& in, const Dim& along, bool rows) {
  require_same_dtype(op, in, 0, 1);
  MatrixType r = matrix_type(op, in[1], "right-hand side");
  if (r.batch != a.batch) type_error(op, cat("the operands' batch axes differ: ", shape_str(in[0].shape), " and ", shape_str(in[1].shape)));
  if ((rows ? r.m : r.n) != along)
    type_error(op, cat("the right-hand side ", shape_str(in[1].shape), " does not fit the matrix ", shape_str(in[0].shape)));
}

std::vector<Type> infer_same_square(Op op, const std::vector<Type>& in, const Attrs&) {
  square(op, in[0]);
  return {in[0]};
}

std::vector<Type> infer_triangular_solve(Op op, const std::vector<Type>& in, const Attrs& a) {
  MatrixType m = square(op, in[0], "matrix");
  require_rhs(op, m, in, m.n, a.b("left"));
  return {in[1]};
}

std::vector<Type> infer_solve(Op op, const std::vector<Type>& in, const Attrs&) {
  MatrixType m = square(op, in[0], "matrix");
  require_rhs(op, m, in, m.n, true);
  return {in[1]};
}

std::vector<Type> infer_lu(Op op, const std::vector<Type>& in, const Attrs&) {
  MatrixType m = matrix_type(op, in[0]);
  Dim k = min_dim(op, m.m, m.n);
  return {in[0], {DType::i32, with(m.batch, {k})}, {DType::i64, with(m.batch, {m.m})}};
}

std::vector<Type> infer_slogdet(Op op, const std::vector<Type>& in, const Attrs&) {
  MatrixType m = square(op, in[0]);
  return {{in[0].dtype, m.batch}, {in[0].dtype, m.batch}};
}

std::vector<Type> infer_det(Op op, const std::vector<Type>& in, const Attrs&) {
  MatrixType m = square(op, in[0]);
  return {{in[0].dtype, m.batch}};
}

std::vector<Type> infer_qr(Op op, const std::vector<Type>& in, const Attrs&) {
  MatrixType m = matrix_type(op, in[0]);
  Dim k = min_dim(op, m.m, m.n);
  return {{in[0].dtype, with(m.batch, {m.m, k})}, {in[0].dtype, with(m.batch, {k, m.n})}};
}

std::vector<Type> infer_eigh(Op op, const std::vector<Type>& in, const Attrs&) {
  MatrixType m = square(op, in[0]);
  return {{in[0].dtype, with(m.batch, {m.n})}, in[0]};
}

std::vector<Type> infer_svd(Op op, const std::vector<Type>& in, const Attrs&) {
  MatrixType m = matrix_type(op, in[0]);
  Dim k = min_dim(op, m.m, m.n);
  DType d = in[0].dtype;
  return {{d, with(m.batch, {m.m, k})}, {d, with(m.batch, {k})}, {d, with(m.batch, {k, m.n})}};
}

std::vector<Type> infer_lstsq(Op op, const std::vector<Type>& in, const Attrs&) {
  MatrixType m = matrix_type(op, in[0], "matrix");
  if (m.m.is_static() && m.n.is_static() && m.m.value() < m.n.value())
    type_error(op, cat("needs at least as many rows as columns (an overdetermined or square system), got ", shape_str(in[0].shape)));
  require_rhs(op, m, in, m.m, true);
  MatrixType r = matrix_type(op, in[1]);
  return {{in[0].dtype, with(m.batch, {m.n, r.n})}};
}

std::vector<ValueId> decompose_det(Builder& b, const std::vector<ValueId>& in, const Attrs&) {
  std::vector<ValueId> sl = b.emit(Op::slogdet, {in[0]});
  return {b.mul(sl[0], b.unary(Op::exp, sl[1]))};
}

// X = R⁻¹ Qᵀ B: the normal equations' solution without forming AᵀA.
std::vector<ValueId> decompose_lstsq(Builder& b, const std::vector<ValueId>& in, const Attrs&) {
  std::vector<ValueId> qr = b.emit(Op::qr, {in[0]});
  ValueId qtb = matrix::matmul(b, matrix::transpose(b, qr[0]), in[1]);
  return {b.emit1(Op::triangular_solve, {qr[1], qtb}, Attrs{{"lower", false}})};
}

}  // namespace

void register_factorize(RuleTable& t) {
  auto set = [&](Op op, InferFn f) { t[static_cast<size_t>(op)].infer = f; };
  set(Op::cholesky, infer_same_square);
  set(Op::triangular_solve, infer_triangular_solve);
  set(Op::lu, infer_lu);
  set(Op::solve, infer_solve);
  set(Op::inv, infer_same_square);
  set(Op::slogdet, infer_slogdet);
  set(Op::qr, infer_qr);
  set(Op::eigh, infer_eigh);
  set(Op::svd, infer_svd);
  set(Op::matrix_exp, infer_same_square);
  set(Op::det, infer_det);
  set(Op::lstsq, infer_lstsq);
  t[static_cast<size_t>(Op::det)].decompose = decompose_det;
  t[static_cast<size_t>(Op::lstsq)].decompose = decompose_lstsq;
  register_vjp_factorize(t);
}

}  // namespace rlx::ops
