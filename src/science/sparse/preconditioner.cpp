#include "science/sparse/preconditioner.h"

#include <cmath>

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::science {

namespace {

class Identity : public Precondition {
 public:
  explicit Identity(int64_t n) : n_(n) {}
  void apply(const double* r, double* z) const override { std::copy(r, r + n_, z); }

 private:
  int64_t n_;
};

class Jacobi : public Precondition {
 public:
  explicit Jacobi(const CsrView& a) : inv_diag_(static_cast<size_t>(a.rows)) {
    for (int64_t i = 0; i < a.rows; ++i) {
      double d = 0;
      for (int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p)
        if (a.col_idx[p] == i) d = a.values[p];
      if (d == 0) throw Error(ErrorKind::invalid_argument, cat("jacobi preconditioner: row ", i, " has no (or a zero) diagonal entry"));
      inv_diag_[static_cast<size_t>(i)] = 1 / d;
    }
  }
  void apply(const double* r, double* z) const override {
    for (size_t i = 0; i < inv_diag_.size(); ++i) z[i] = r[i] * inv_diag_[i];
  }

 private:
  std::vector<double> inv_diag_;
};

// L in CSR over the lower triangle of A (diagonal last in each row, columns ascending).
class IncompleteCholesky : public Precondition {
 public:
  explicit IncompleteCholesky(const CsrView& a) : n_(a.rows) {
    ptr_.push_back(0);
    for (int64_t i = 0; i < n_; ++i) {
      bool diag = false;
      for (int64_t p = a.row_ptr[i]; p < a.row_ptr[i + 1] && a.col_idx[p] <= i; ++p) {
        cols_.push_back(a.col_idx[p]);
        vals_.push_back(a.values[p]);
        diag = a.col_idx[p] == i;
      }
      if (!diag) throw Error(ErrorKind::invalid_argument, cat("ichol preconditioner: row ", i, " has no diagonal entry"));
      ptr_.push_back(static_cast<int64_t>(cols_.size()));
    }
    // Row by row: L[i][k] = (A[i][k] − Σ_{j<k} L[i][j] L[k][j]) / L[k][k] on the pattern, then
    // L[i][i] = √(A[i][i] − Σ_{j<i} L[i][j]²). Both sums merge two sorted rows.
    for (int64_t i = 0; i < n_; ++i) {
      int64_t last = ptr_[i + 1] - 1;  // the diagonal
      for (int64_t p = ptr_[i]; p < last; ++p) {
        int64_t k = cols_[p];
        double s = vals_[p];
        for (int64_t q = ptr_[i], r = ptr_[k]; q < p && r < ptr_[k + 1] - 1;) {
          if (cols_[q] == cols_[r]) s -= vals_[q++] * vals_[r++];
          else if (cols_[q] < cols_[r]) ++q;
          else ++r;
        }
        vals_[p] = s / vals_[ptr_[k + 1] - 1];
      }
      double d = vals_[last];
      for (int64_t p = ptr_[i]; p < last; ++p) d -= vals_[p] * vals_[p];
      if (!(d > 0)) throw Error(ErrorKind::invalid_argument, cat("ichol preconditioner: the pivot of row ", i, " is ", d, " (not positive: A is not symmetric positive definite, or IC(0) breaks down on it)"));
      vals_[last] = std::sqrt(d);
    }
  }
  // z = L⁻ᵀ L⁻¹ r: forward substitution by rows, then backward by scattering each row of L.
  void apply(const double* r, double* z) const override {
    for (int64_t i = 0; i < n_; ++i) {
      double s = r[i];
      int64_t last = ptr_[i + 1] - 1;
      for (int64_t p = ptr_[i]; p < last; ++p) s -= vals_[p] * z[cols_[p]];
      z[i] = s / vals_[last];
    }
    for (int64_t i = n_ - 1; i >= 0; --i) {
      int64_t last = ptr_[i + 1] - 1;
      z[i] /= vals_[last];
      for (int64_t p = ptr_[i]; p < last; ++p) z[cols_[p]] -= vals_[p] * z[i];
    }
  }

 private:
  int64_t n_;
  std::vector<int64_t> ptr_, cols_;
  std::vector<double> vals_;
};

}  // namespace

Preconditioner parse_preconditioner(const std::string& name) {
  if (name == "none") return Preconditioner::none;
  if (name == "jacobi") return Preconditioner::jacobi;
  if (name == "ichol") return Preconditioner::ichol;
  throw Error(ErrorKind::invalid_argument, cat("unknown preconditioner '", name, "' (none, jacobi, ichol)"));
}

const char* preconditioner_name(Preconditioner p) {
  switch (p) {
    case Preconditioner::none: return "none";
    case Preconditioner::jacobi: return "jacobi";
    case Preconditioner::ichol: return "ichol";
  }
  return "?";
}

std::unique_ptr<Precondition> make_preconditioner(Preconditioner kind, const CsrView& a) {
  switch (kind) {
    case Preconditioner::jacobi: return std::make_unique<Jacobi>(a);
    case Preconditioner::ichol: return std::make_unique<IncompleteCholesky>(a);
    case Preconditioner::none: break;
  }
  return std::make_unique<Identity>(a.rows);
}

}  // namespace rlx::science
