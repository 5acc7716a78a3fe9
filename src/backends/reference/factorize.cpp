// Dense linear algebra by the textbook: Cholesky–Banachiewicz, substitution, Doolittle with
// partial pivoting, Householder QR, cyclic Jacobi for eigh, one-sided Jacobi for svd, Taylor with
// scaling and squaring for matrix_exp — in f64, one matrix of the batch at a time. Independent of
// LAPACK on purpose: it is what the cpu device's LAPACK calls are checked against.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "backends/reference/kernels.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::backends::reference {

namespace {

using ir::Op;

// A row-major matrix.
struct Mat {
  int64_t rows = 0, cols = 0;
  std::vector<double> v;
  Mat(int64_t r, int64_t c) : rows(r), cols(c), v(static_cast<size_t>(r * c), 0.0) {}
  double& operator()(int64_t i, int64_t j) { return v[static_cast<size_t>(i * cols + j)]; }
  double operator()(int64_t i, int64_t j) const { return v[static_cast<size_t>(i * cols + j)]; }
  static Mat identity(int64_t n) {
    Mat m(n, n);
    for (int64_t i = 0; i < n; ++i) m(i, i) = 1;
    return m;
  }
};

int64_t rows_of(const HostView& v) { return v.shape[v.shape.size() - 2]; }
int64_t cols_of(const HostView& v) { return v.shape.back(); }
int64_t batch_of(const HostView& v) { return v.numel / std::max<int64_t>(1, rows_of(v) * cols_of(v)); }

Mat load(const HostView& v, int64_t item) {
  Mat m(rows_of(v), cols_of(v));
  for (size_t i = 0; i < m.v.size(); ++i) m.v[i] = rd(v, item * m.rows * m.cols + static_cast<int64_t>(i));
  return m;
}

void store(const HostView& v, int64_t item, const Mat& m) {
  for (size_t i = 0; i < m.v.size(); ++i) wd(v, item * m.rows * m.cols + static_cast<int64_t>(i), m.v[i]);
}

Mat transposed(const Mat& a) {
  Mat t(a.cols, a.rows);
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t j = 0; j < a.cols; ++j) t(j, i) = a(i, j);
  return t;
}

Mat product(const Mat& a, const Mat& b) {
  Mat c(a.rows, b.cols);
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t j = 0; j < b.cols; ++j) {
      double s = 0;
      for (int64_t k = 0; k < a.cols; ++k) s += a(i, k) * b(k, j);
      c(i, j) = s;
    }
  return c;
}

// The symmetric matrix whose lower triangle is a's.
Mat symmetric_from_lower(const Mat& a) {
  Mat s = a;
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t j = i + 1; j < a.cols; ++j) s(i, j) = a(j, i);
  return s;
}

[[noreturn]] void fail(Op op, int64_t item, const std::string& what) {
  throw Error(ErrorKind::runtime, cat(ir::op_keyword(op), ": matrix ", item, " of the batch ", what));
}

// X with T X = B for a triangular T (lower or upper as given; its other half is ignored).
Mat substitute(const Mat& t, bool lower, const Mat& b) {
  Mat x = b;
  int64_t n = t.rows;
  for (int64_t c = 0; c < b.cols; ++c)
    for (int64_t s = 0; s < n; ++s) {
      int64_t i = lower ? s : n - 1 - s;
      double v = b(i, c);
      if (lower)
        for (int64_t k = 0; k < i; ++k) v -= t(i, k) * x(k, c);
      else
        for (int64_t k = i + 1; k < n; ++k) v -= t(i, k) * x(k, c);
      x(i, c) = v / t(i, i);
    }
  return x;
}

void cholesky(const KernelArgs& a) {
  for (int64_t item = 0; item < batch_of(a.in[0]); ++item) {
    Mat s = load(a.in[0], item);
    int64_t n = s.rows;
    Mat l(n, n);
    for (int64_t j = 0; j < n; ++j) {
      double d = s(j, j);
      for (int64_t k = 0; k < j; ++k) d -= l(j, k) * l(j, k);
      if (!(d > 0)) fail(Op::cholesky, item, cat("is not positive definite (its leading minor of order ", j + 1, " is not positive)"));
      l(j, j) = std::sqrt(d);
      for (int64_t i = j + 1; i < n; ++i) {
        double v = s(i, j);
        for (int64_t k = 0; k < j; ++k) v -= l(i, k) * l(j, k);
        l(i, j) = v / l(j, j);
      }
    }
    store(a.out[0], item, l);
  }
}

void triangular_solve(const KernelArgs& a) {
  bool lower = a.node.attrs.b("lower"), left = a.node.attrs.b("left"), tr = a.node.attrs.b("transpose"), unit = a.node.attrs.b("unit_diagonal");
  for (int64_t item = 0; item < batch_of(a.in[0]); ++item) {
    Mat m = load(a.in[0], item), rhs = load(a.in[1], item);
    int64_t n = m.rows;
    Mat t(n, n);  // op(A) with its unread half zero
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j)
        if (i == j) t(i, j) = unit ? 1.0 : m(i, i);
        else if ((i > j) == lower) t(i, j) = m(i, j);
    if (tr) t = transposed(t);
    bool t_lower = lower != tr;
    // X op(A) = B is op(A)ᵀ Xᵀ = Bᵀ.
    Mat x = left ? substitute(t, t_lower, rhs) : transposed(substitute(transposed(t), !t_lower, transposed(rhs)));
    store(a.out[0], item, x);
  }
}

// P A = L U packed in one matrix; perm[i]: the row of A that is row i of P A.
struct Lu {
  Mat lu;
  std::vector<int64_t> pivots, perm;
  int swaps = 0;
  bool singular = false;
};

Lu factor_lu(const Mat& a) {
  Lu f{a, {}, {}, 0, false};
  Mat& m = f.lu;
  f.perm.resize(static_cast<size_t>(a.rows));
  std::iota(f.perm.begin(), f.perm.end(), 0);
  for (int64_t k = 0; k < std::min(a.rows, a.cols); ++k) {
    int64_t p = k;
    for (int64_t i = k + 1; i < a.rows; ++i)
      if (std::fabs(m(i, k)) > std::fabs(m(p, k))) p = i;
    f.pivots.push_back(p);
    if (p != k) {
      for (int64_t j = 0; j < a.cols; ++j) std::swap(m(k, j), m(p, j));
      std::swap(f.perm[static_cast<size_t>(k)], f.perm[static_cast<size_t>(p)]);
      ++f.swaps;
    }
    if (m(k, k) == 0) {
      f.singular = true;
      continue;
    }
    for (int64_t i = k + 1; i < a.rows; ++i) {
      m(i, k) /= m(k, k);
      for (int64_t j = k + 1; j < a.cols; ++j) m(i, j) -= m(i, k) * m(k, j);
    }
  }
  return f;
}

// A⁻¹ B from A's LU factors.
Mat lu_solve(const Lu& f, const Mat& b) {
  Mat pb(b.rows, b.cols);
  for (int64_t i = 0; i < b.rows; ++i)
    for (int64_t j = 0; j < b.cols; ++j) pb(i, j) = b(f.perm[static_cast<size_t>(i)], j);
  Mat l = f.lu;
  for (int64_t i = 0; i < l.rows; ++i) l(i, i) = 1;
  return substitute(f.lu, false, substitute(l, true, pb));
}

void lu(const KernelArgs& a) {
  for (int64_t item = 0; item < batch_of(a.in[0]); ++item) {
    Lu f = factor_lu(load(a.in[0], item));
    store(a.out[0], item, f.lu);
    int64_t k = static_cast<int64_t>(f.pivots.size()), m = static_cast<int64_t>(f.perm.size());
    for (int64_t i = 0; i < k; ++i) wi(a.out[1], item * k + i, f.pivots[static_cast<size_t>(i)]);
    for (int64_t i = 0; i < m; ++i) wi(a.out[2], item * m + i, f.perm[static_cast<size_t>(i)]);
  }
}

void solve(const KernelArgs& a) {
  for (int64_t item = 0; item < batch_of(a.in[0]); ++item) {
    Lu f = factor_lu(load(a.in[0], item));
    if (f.singular) fail(Op::solve, item, "is singular");
    store(a.out[0], item, lu_solve(f, load(a.in[1], item)));
  }
}

void inv(const KernelArgs& a) {
  for (int64_t item = 0; item < batch_of(a.in[0]); ++item) {
    Lu f = factor_lu(load(a.in[0], item));
    if (f.singular) fail(Op::inv, item, "is singular");
    store(a.out[0], item, lu_solve(f, Mat::identity(f.lu.rows)));
  }
}

void slogdet(const KernelArgs& a) {
  for (int64_t item = 0; item < batch_of(a.in[0]); ++item) {
    Lu f = factor_lu(load(a.in[0], item));
    double sign = f.swaps % 2 ? -1 : 1, logabs = 0;
    for (int64_t i = 0; i < f.lu.rows; ++i) {
      double d = f.lu(i, i);
      sign *= d > 0 ? 1 : d < 0 ? -1 : 0;
      logabs += std::log(std::fabs(d));
    }
    if (sign == 0) logabs = -std::numeric_limits<double>::infinity();
    wd(a.out[0], item, sign);
    wd(a.out[1], item, logabs);
  }
}

// Flips the sign of column c of x (and of row c of y, when given) unless its entry of largest
// magnitude (the first on ties) is positive.
void make_column_positive(Mat& x, int64_t c, Mat* y_rows) {
  int64_t at = 0;
  for (int64_t i = 1; i < x.rows; ++i)
    if (std::fabs(x(i, c)) > std::fabs(x(at, c))) at = i;
  if (x(at, c) >= 0) return;
  for (int64_t i = 0; i < x.rows; ++i) x(i, c) = -x(i, c);
  if (y_rows)
    for (int64_t j = 0; j < y_rows->cols; ++j) (*y_rows)(c, j) = -(*y_rows)(c, j);
}

void qr(const KernelArgs& a) {
  for (int64_t item = 0; item < batch_of(a.in[0]); ++item) {
    Mat r = load(a.in[0], item);
    int64_t m = r.rows, n = r.cols, k = std::min(m, n);
    Mat q = Mat::identity(m);
    for (int64_t j = 0; j < k; ++j) {
      // The reflector I − 2vvᵀ taking R[j:, j] to (α, 0, …, 0).
      double norm = 0;
      for (int64_t i = j; i < m; ++i) norm += r(i, j) * r(i, j);
      norm = std::sqrt(norm);
      if (norm == 0) continue;
      double alpha = r(j, j) > 0 ? -norm : norm;
      std::vector<double> v(static_cast<size_t>(m), 0.0);
      for (int64_t i = j; i < m; ++i) v[static_cast<size_t>(i)] = r(i, j);
      v[static_cast<size_t>(j)] -= alpha;
      double vn = 0;
      for (double x : v) vn += x * x;
      if (vn == 0) continue;
      for (int64_t c = 0; c < n; ++c) {
        double d = 0;
        for (int64_t i = j; i < m; ++i) d += v[static_cast<size_t>(i)] * r(i, c);
        for (int64_t i = j; i < m; ++i) r(i, c) -= 2 * d / vn * v[static_cast<size_t>(i)];
      }
      for (int64_t row = 0; row < m; ++row) {
        double d = 0;
        for (int64_t i = j; i < m; ++i) d += q(row, i) * v[static_cast<size_t>(i)];
        for (int64_t i = j; i < m; ++i) q(row, i) -= 2 * d / vn * v[static_cast<size_t>(i)];
      }
    }
    Mat qk(m, k), rk(k, n);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < k; ++j) qk(i, j) = q(i, j);
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = i; j < n; ++j) rk(i, j) = r(i, j);
    for (int64_t i = 0; i < k; ++i)
      if (rk(i, i) < 0) {
        for (int64_t j = 0; j < n; ++j) rk(i, j) = -rk(i, j);
        for (int64_t row = 0; row < m; ++row) qk(row, i) = -qk(row, i);
      }
    store(a.out[0], item, qk);
    store(a.out[1], item, rk);
  }
}

// The Jacobi rotation (c, s) that zeroes the off-diagonal of [[app, apq], [apq, aqq]].
void jacobi_rotation(double app, double aqq, double apq, double& c, double& s) {
  double tau = (aqq - app) / (2 * apq);
  double t = (tau >= 0 ? 1.0 : -1.0) / (std::fabs(tau) + std::sqrt(1 + tau * tau));
  c = 1 / std::sqrt(1 + t * t);
  s = t * c;
}

// Column order by the given values (ascending or descending), stable.
std::vector<int64_t> order_by(const std::vector<double>& w, bool ascending) {
  std::vector<int64_t> idx(w.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](int64_t x, int64_t y) {
    return ascending ? w[static_cast<size_t>(x)] < w[static_cast<size_t>(y)] : w[static_cast<size_t>(x)] > w[static_cast<size_t>(y)];
  });
  return idx;
}

void eigh(const KernelArgs& a) {
  for (int64_t item = 0; item < batch_of(a.in[0]); ++item) {
    Mat s = symmetric_from_lower(load(a.in[0], item));
    int64_t n = s.rows;
    Mat v = Mat::identity(n);
    for (int sweep = 0; sweep < 100; ++sweep) {
      double off = 0, all = 0;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j) (i == j ? all : off) += s(i, j) * s(i, j);
      if (off <= 1e-32 * (all + off)) break;
      for (int64_t p = 0; p < n; ++p)
        for (int64_t q = p + 1; q < n; ++q) {
          if (s(p, q) == 0) continue;
          double c, sn;
          jacobi_rotation(s(p, p), s(q, q), s(p, q), c, sn);
          for (int64_t k = 0; k < n; ++k) {  // S J, then Jᵀ (S J), V J
            double kp = s(k, p), kq = s(k, q);
            s(k, p) = c * kp - sn * kq;
            s(k, q) = sn * kp + c * kq;
          }
          for (int64_t k = 0; k < n; ++k) {
            double pk = s(p, k), qk = s(q, k);
            s(p, k) = c * pk - sn * qk;
            s(q, k) = sn * pk + c * qk;
          }
          for (int64_t k = 0; k < n; ++k) {
            double kp = v(k, p), kq = v(k, q);
            v(k, p) = c * kp - sn * kq;
            v(k, q) = sn * kp + c * kq;
          }
        }
    }
    std::vector<double> w(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) w[static_cast<size_t>(i)] = s(i, i);
    std::vector<int64_t> order = order_by(w, true);
    Mat vs(n, n);
    for (int64_t j = 0; j < n; ++j) {
      int64_t from = order[static_cast<size_t>(j)];
      wd(a.out[0], item * n + j, w[static_cast<size_t>(from)]);
      for (int64_t i = 0; i < n; ++i) vs(i, j) = v(i, from);
      make_column_positive(vs, j, nullptr);
    }
    store(a.out[1], item, vs);
  }
}

// One-sided Jacobi on the columns of w (m ≥ n): rotations until every pair is orthogonal; then
// w = U diag(s) and the rotations' product is V.
void one_sided_jacobi(Mat& w, Mat& v) {
  int64_t m = w.rows, n = w.cols;
  for (int sweep = 0; sweep < 100; ++sweep) {
    bool rotated = false;
    for (int64_t p = 0; p < n; ++p)
      for (int64_t q = p + 1; q < n; ++q) {
        double alpha = 0, beta = 0, gamma = 0;
        for (int64_t i = 0; i < m; ++i) {
          alpha += w(i, p) * w(i, p);
          beta += w(i, q) * w(i, q);
          gamma += w(i, p) * w(i, q);
        }
        if (gamma == 0 || std::fabs(gamma) <= 1e-17 * std::sqrt(alpha * beta)) continue;
        rotated = true;
        double c, s;
        jacobi_rotation(alpha, beta, gamma, c, s);
        for (Mat* x : {&w, &v})
          for (int64_t i = 0; i < x->rows; ++i) {
            double xp = (*x)(i, p), xq = (*x)(i, q);
            (*x)(i, p) = c * xp - s * xq;
            (*x)(i, q) = s * xp + c * xq;
          }
      }
    if (!rotated) break;
  }
}

void svd(const KernelArgs& a) {
  for (int64_t item = 0; item < batch_of(a.in[0]); ++item) {
    Mat x = load(a.in[0], item);
    bool wide = x.rows < x.cols;  // the SVD of Aᵀ, read back transposed
    Mat w = wide ? transposed(x) : x;
    Mat v = Mat::identity(w.cols);
    one_sided_jacobi(w, v);
    int64_t k = w.cols;
    std::vector<double> s(static_cast<size_t>(k));
    for (int64_t j = 0; j < k; ++j) {
      double norm = 0;
      for (int64_t i = 0; i < w.rows; ++i) norm += w(i, j) * w(i, j);
      s[static_cast<size_t>(j)] = std::sqrt(norm);
    }
    std::vector<int64_t> order = order_by(s, false);
    Mat left(w.rows, k), right(v.rows, k);  // A's (or Aᵀ's) U and V, sorted
    for (int64_t j = 0; j < k; ++j) {
      int64_t from = order[static_cast<size_t>(j)];
      double sj = s[static_cast<size_t>(from)];
      for (int64_t i = 0; i < w.rows; ++i) left(i, j) = sj > 0 ? w(i, from) / sj : 0;
      for (int64_t i = 0; i < v.rows; ++i) right(i, j) = v(i, from);
      wd(a.out[1], item * k + j, sj);
    }
    Mat u = wide ? right : left, vh = transposed(wide ? left : right);
    for (int64_t j = 0; j < k; ++j) make_column_positive(u, j, &vh);
    store(a.out[0], item, u);
    store(a.out[2], item, vh);
  }
}

// exp(A) = (Σ (A/2ˢ)ᵏ/k!)^(2ˢ), s chosen so that ‖A/2ˢ‖₁ ≤ 1/2; terms until they stop mattering.
void matrix_exp(const KernelArgs& a) {
  for (int64_t item = 0; item < batch_of(a.in[0]); ++item) {
    Mat x = load(a.in[0], item);
    int64_t n = x.rows;
    double norm = 0;
    for (int64_t j = 0; j < n; ++j) {
      double col = 0;
      for (int64_t i = 0; i < n; ++i) col += std::fabs(x(i, j));
      norm = std::max(norm, col);
    }
    int squarings = norm > 0.5 ? static_cast<int>(std::ceil(std::log2(norm / 0.5))) : 0;
    for (double& e : x.v) e = std::ldexp(e, -squarings);
    Mat sum = Mat::identity(n), term = Mat::identity(n);
    for (int k = 1; k < 40; ++k) {
      term = product(term, x);
      double biggest = 0;
      for (double& e : term.v) {
        e /= k;
        biggest = std::max(biggest, std::fabs(e));
      }
      for (size_t i = 0; i < sum.v.size(); ++i) sum.v[i] += term.v[i];
      if (biggest < 1e-20) break;
    }
    for (int i = 0; i < squarings; ++i) sum = product(sum, sum);
    store(a.out[0], item, sum);
  }
}

}  // namespace

void register_factorize(KernelTable& t) {
  t[static_cast<size_t>(Op::cholesky)] = cholesky;
  t[static_cast<size_t>(Op::triangular_solve)] = triangular_solve;
  t[static_cast<size_t>(Op::lu)] = lu;
  t[static_cast<size_t>(Op::solve)] = solve;
  t[static_cast<size_t>(Op::inv)] = inv;
  t[static_cast<size_t>(Op::slogdet)] = slogdet;
  t[static_cast<size_t>(Op::qr)] = qr;
  t[static_cast<size_t>(Op::eigh)] = eigh;
  t[static_cast<size_t>(Op::svd)] = svd;
  t[static_cast<size_t>(Op::matrix_exp)] = matrix_exp;
}

}  // namespace rlx::backends::reference
