// Dense linear algebra through LAPACK (LAPACKE over Debian's OpenBLAS, the library NumPy uses),
// f32 and f64, one matrix of the batch after another with every thread given to OpenBLAS.
// Row-major data is LAPACK's column-major transpose, so symmetric factorizations and the SVD run
// on the buffers as they are (lower ↔ upper, U ↔ Vᵀ); lu, qr and solves let LAPACKE transpose.
// The results follow the IR's conventions (ops.def): sorted values, sign-fixed vectors.
#include <cblas.h>
#include <lapacke.h>

#include <cmath>
#include <limits>
#include <numeric>

#include "backends/cpu/kernels.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::backends::cpu {

namespace {

using ir::Op;

// The s/d names of the routines used, by element type.
template <class T>
struct Lapack;

template <>
struct Lapack<float> {
  static int potrf(char u, int n, float* a, int lda) { return LAPACKE_spotrf_work(LAPACK_COL_MAJOR, u, n, a, lda); }
  static int getrf(int m, int n, float* a, int lda, int* ipiv) { return LAPACKE_sgetrf_work(LAPACK_ROW_MAJOR, m, n, a, lda, ipiv); }
  static int getrs(int n, int nrhs, const float* a, int lda, const int* ipiv, float* b, int ldb) {
    return LAPACKE_sgetrs_work(LAPACK_ROW_MAJOR, 'N', n, nrhs, a, lda, ipiv, b, ldb);
  }
  static int geqrf(int m, int n, float* a, int lda, float* tau) { return LAPACKE_sgeqrf(LAPACK_ROW_MAJOR, m, n, a, lda, tau); }
  static int orgqr(int m, int n, int k, float* a, int lda, const float* tau) { return LAPACKE_sorgqr(LAPACK_ROW_MAJOR, m, n, k, a, lda, tau); }
  static int syevd(int n, float* a, int lda, float* w) { return LAPACKE_ssyevd(LAPACK_COL_MAJOR, 'V', 'U', n, a, lda, w); }
  static int gesdd(int m, int n, float* a, int lda, float* s, float* u, int ldu, float* vt, int ldvt) {
    return LAPACKE_sgesdd(LAPACK_COL_MAJOR, 'S', m, n, a, lda, s, u, ldu, vt, ldvt);
  }
  static void trsm(CBLAS_SIDE side, CBLAS_UPLO uplo, CBLAS_TRANSPOSE t, CBLAS_DIAG d, int m, int n, const float* a, int lda, float* b, int ldb) {
    cblas_strsm(CblasRowMajor, side, uplo, t, d, m, n, 1.0f, a, lda, b, ldb);
  }
  static void gemm(int n, const float* a, const float* b, float* c) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
  }
};

template <>
struct Lapack<double> {
  static int potrf(char u, int n, double* a, int lda) { return LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, u, n, a, lda); }
  static int getrf(int m, int n, double* a, int lda, int* ipiv) { return LAPACKE_dgetrf_work(LAPACK_ROW_MAJOR, m, n, a, lda, ipiv); }
  static int getrs(int n, int nrhs, const double* a, int lda, const int* ipiv, double* b, int ldb) {
    return LAPACKE_dgetrs_work(LAPACK_ROW_MAJOR, 'N', n, nrhs, a, lda, ipiv, b, ldb);
  }
  static int geqrf(int m, int n, double* a, int lda, double* tau) { return LAPACKE_dgeqrf(LAPACK_ROW_MAJOR, m, n, a, lda, tau); }
  static int orgqr(int m, int n, int k, double* a, int lda, const double* tau) { return LAPACKE_dorgqr(LAPACK_ROW_MAJOR, m, n, k, a, lda, tau); }
  static int syevd(int n, double* a, int lda, double* w) { return LAPACKE_dsyevd(LAPACK_COL_MAJOR, 'V', 'U', n, a, lda, w); }
  static int gesdd(int m, int n, double* a, int lda, double* s, double* u, int ldu, double* vt, int ldvt) {
    return LAPACKE_dgesdd(LAPACK_COL_MAJOR, 'S', m, n, a, lda, s, u, ldu, vt, ldvt);
  }
  static void trsm(CBLAS_SIDE side, CBLAS_UPLO uplo, CBLAS_TRANSPOSE t, CBLAS_DIAG d, int m, int n, const double* a, int lda, double* b, int ldb) {
    cblas_dtrsm(CblasRowMajor, side, uplo, t, d, m, n, 1.0, a, lda, b, ldb);
  }
  static void gemm(int n, const double* a, const double* b, double* c) {
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a, n, b, n, 0.0, c, n);
  }
};

// OpenBLAS threads for the length of one kernel: the pool is idle while LAPACK runs, and the
// factorizations' blocked updates are where the cores pay off (register.cpp keeps it at 1 otherwise).
struct BlasThreads {
  BlasThreads() { openblas_set_num_threads(num_threads()); }
  ~BlasThreads() { openblas_set_num_threads(1); }
};

int64_t rows_of(const HostView& v) { return v.shape[v.shape.size() - 2]; }
int64_t cols_of(const HostView& v) { return v.shape.back(); }
int64_t batch_of(const HostView& v) { return v.numel / std::max<int64_t>(1, rows_of(v) * cols_of(v)); }

int lapack_dim(Op op, int64_t v) {
  if (v > std::numeric_limits<int>::max()) throw Error(ErrorKind::invalid_argument, cat(ir::op_keyword(op), ": a dimension of ", v, " exceeds LAPACK's 32-bit indices"));
  return static_cast<int>(v);
}

[[noreturn]] void fail(Op op, int64_t item, const std::string& what) {
  throw Error(ErrorKind::runtime, cat(ir::op_keyword(op), ": matrix ", item, " of the batch ", what));
}

void check_info(Op op, int64_t item, int info, const char* routine) {
  if (info < 0) throw Error(ErrorKind::internal, cat(ir::op_keyword(op), ": LAPACK's ", routine, " rejected argument ", -info));
  if (info > 0) fail(op, item, cat("did not converge (", routine, " info ", info, ")"));
}

// Applies f(x_in, x_out, item) to each matrix of the batch, calling it with typed pointers.
template <class F>
void for_float(const KernelArgs& a, F f) {
  BlasThreads threads;
  if (a.in[0].dtype == DType::f32) f(float{});
  else f(double{});
}

// Flips column c of x (rows × cols, row-major), and row c of y when given, unless x's entry of
// largest magnitude in that column (the first on ties) is positive.
template <class T>
void make_column_positive(T* x, int64_t rows, int64_t cols, int64_t c, T* y_rows = nullptr, int64_t y_cols = 0) {
  int64_t at = 0;
  for (int64_t i = 1; i < rows; ++i)
    if (std::fabs(x[i * cols + c]) > std::fabs(x[at * cols + c])) at = i;
  if (x[at * cols + c] >= 0) return;
  for (int64_t i = 0; i < rows; ++i) x[i * cols + c] = -x[i * cols + c];
  if (y_rows)
    for (int64_t j = 0; j < y_cols; ++j) y_rows[c * y_cols + j] = -y_rows[c * y_cols + j];
}

HostKernel make_cholesky(const ir::Node&, const ir::Graph&) {
  return [](const KernelArgs& a) {
    for_float(a, [&](auto tag) {
      using T = decltype(tag);
      int64_t n = rows_of(a.in[0]);
      for (int64_t item = 0; item < batch_of(a.in[0]); ++item) {
        T* l = a.out[0].as<T>() + item * n * n;
        std::copy_n(a.in[0].as<T>() + item * n * n, n * n, l);
        int info = Lapack<T>::potrf('U', lapack_dim(Op::cholesky, n), l, static_cast<int>(n));
        if (info > 0) fail(Op::cholesky, item, cat("is not positive definite (its leading minor of order ", info, " is not positive)"));
        check_info(Op::cholesky, item, info, "potrf");
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = i + 1; j < n; ++j) l[i * n + j] = 0;
      }
    });
  };
}

HostKernel make_triangular_solve(const ir::Node& node, const ir::Graph&) {
  bool lower = node.attrs.b("lower"), left = node.attrs.b("left"), tr = node.attrs.b("transpose"), unit = node.attrs.b("unit_diagonal");
  return [=](const KernelArgs& a) {
    for_float(a, [&](auto tag) {
      using T = decltype(tag);
      int64_t n = rows_of(a.in[0]), m = rows_of(a.in[1]), k = cols_of(a.in[1]);
      for (int64_t item = 0; item < batch_of(a.in[0]); ++item) {
        T* x = a.out[0].as<T>() + item * m * k;
        std::copy_n(a.in[1].as<T>() + item * m * k, m * k, x);
        Lapack<T>::trsm(left ? CblasLeft : CblasRight, lower ? CblasLower : CblasUpper, tr ? CblasTrans : CblasNoTrans,
                        unit ? CblasUnit : CblasNonUnit, lapack_dim(Op::triangular_solve, m), lapack_dim(Op::triangular_solve, k),
                        a.in[0].as<T>() + item * n * n, static_cast<int>(n), x, static_cast<int>(k));
      }
    });
  };
}

// getrf of one matrix into `lu`; LAPACK's 1-based pivots in ipiv. Returns whether it is singular.
template <class T>
bool factor(Op op, int64_t item, const T* a, int64_t m, int64_t n, T* lu, std::vector<int>& ipiv) {
  std::copy_n(a, m * n, lu);
  ipiv.assign(static_cast<size_t>(std::min(m, n)), 0);
  int info = Lapack<T>::getrf(lapack_dim(op, m), lapack_dim(op, n), lu, static_cast<int>(n), ipiv.data());
  if (info < 0) check_info(op, item, info, "getrf");
  return info > 0;
}

HostKernel make_lu(const ir::Node&, const ir::Graph&) {
  return [](const KernelArgs& a) {
    for_float(a, [&](auto tag) {
      using T = decltype(tag);
      int64_t m = rows_of(a.in[0]), n = cols_of(a.in[0]), k = std::min(m, n);
      std::vector<int> ipiv;
      for (int64_t item = 0; item < batch_of(a.in[0]); ++item) {
        factor(Op::lu, item, a.in[0].as<T>() + item * m * n, m, n, a.out[0].as<T>() + item * m * n, ipiv);
        int32_t* piv = a.out[1].as<int32_t>() + item * k;
        int64_t* perm = a.out[2].as<int64_t>() + item * m;
        std::iota(perm, perm + m, int64_t{0});
        for (int64_t i = 0; i < k; ++i) {
          piv[i] = ipiv[static_cast<size_t>(i)] - 1;
          std::swap(perm[i], perm[piv[i]]);
        }
      }
    });
  };
}

HostKernel make_solve(const ir::Node&, const ir::Graph&) {
  return [](const KernelArgs& a) {
    for_float(a, [&](auto tag) {
      using T = decltype(tag);
      int64_t n = rows_of(a.in[0]), k = cols_of(a.in[1]);
      std::vector<T> lu(static_cast<size_t>(n * n));
      std::vector<int> ipiv;
      for (int64_t item = 0; item < batch_of(a.in[0]); ++item) {
        if (factor(Op::solve, item, a.in[0].as<T>() + item * n * n, n, n, lu.data(), ipiv)) fail(Op::solve, item, "is singular");
        T* x = a.out[0].as<T>() + item * n * k;
        std::copy_n(a.in[1].as<T>() + item * n * k, n * k, x);
        check_info(Op::solve, item, Lapack<T>::getrs(static_cast<int>(n), lapack_dim(Op::solve, k), lu.data(), static_cast<int>(n), ipiv.data(), x, static_cast<int>(k)), "getrs");
      }
    });
  };
}

HostKernel make_inv(const ir::Node&, const ir::Graph&) {
  return [](const KernelArgs& a) {
    for_float(a, [&](auto tag) {
      using T = decltype(tag);
      int64_t n = rows_of(a.in[0]);
      std::vector<T> lu(static_cast<size_t>(n * n));
      std::vector<int> ipiv;
      for (int64_t item = 0; item < batch_of(a.in[0]); ++item) {
        if (factor(Op::inv, item, a.in[0].as<T>() + item * n * n, n, n, lu.data(), ipiv)) fail(Op::inv, item, "is singular");
        T* x = a.out[0].as<T>() + item * n * n;
        std::fill_n(x, n * n, T(0));
        for (int64_t i = 0; i < n; ++i) x[i * n + i] = 1;
        check_info(Op::inv, item, Lapack<T>::getrs(static_cast<int>(n), static_cast<int>(n), lu.data(), static_cast<int>(n), ipiv.data(), x, static_cast<int>(n)), "getrs");
      }
    });
  };
}

HostKernel make_slogdet(const ir::Node&, const ir::Graph&) {
  return [](const KernelArgs& a) {
    for_float(a, [&](auto tag) {
      using T = decltype(tag);
      int64_t n = rows_of(a.in[0]);
      std::vector<T> lu(static_cast<size_t>(n * n));
      std::vector<int> ipiv;
      for (int64_t item = 0; item < batch_of(a.in[0]); ++item) {
        factor(Op::slogdet, item, a.in[0].as<T>() + item * n * n, n, n, lu.data(), ipiv);
        double sign = 1, logabs = 0;
        for (int64_t i = 0; i < n; ++i) {
          double d = lu[static_cast<size_t>(i * n + i)];
          if (ipiv[static_cast<size_t>(i)] != i + 1) sign = -sign;
          sign *= d > 0 ? 1 : d < 0 ? -1 : 0;
          logabs += std::log(std::fabs(d));
        }
        if (sign == 0) logabs = -std::numeric_limits<double>::infinity();
        a.out[0].as<T>()[item] = static_cast<T>(sign);
        a.out[1].as<T>()[item] = static_cast<T>(logabs);
      }
    });
  };
}

HostKernel make_qr(const ir::Node&, const ir::Graph&) {
  return [](const KernelArgs& a) {
    for_float(a, [&](auto tag) {
      using T = decltype(tag);
      int64_t m = rows_of(a.in[0]), n = cols_of(a.in[0]), k = std::min(m, n);
      std::vector<T> work(static_cast<size_t>(m * n)), tau(static_cast<size_t>(k));
      for (int64_t item = 0; item < batch_of(a.in[0]); ++item) {
        std::copy_n(a.in[0].as<T>() + item * m * n, m * n, work.data());
        check_info(Op::qr, item, Lapack<T>::geqrf(lapack_dim(Op::qr, m), lapack_dim(Op::qr, n), work.data(), static_cast<int>(n), tau.data()), "geqrf");
        T* q = a.out[0].as<T>() + item * m * k;
        T* r = a.out[1].as<T>() + item * k * n;
        for (int64_t i = 0; i < k; ++i)
          for (int64_t j = 0; j < n; ++j) r[i * n + j] = j >= i ? work[static_cast<size_t>(i * n + j)] : T(0);
        for (int64_t i = 0; i < m; ++i) std::copy_n(work.data() + i * n, k, q + i * k);
        check_info(Op::qr, item, Lapack<T>::orgqr(static_cast<int>(m), static_cast<int>(k), static_cast<int>(k), q, static_cast<int>(k), tau.data()), "orgqr");
        for (int64_t i = 0; i < k; ++i)
          if (r[i * n + i] < 0) {
            for (int64_t j = 0; j < n; ++j) r[i * n + j] = -r[i * n + j];
            for (int64_t row = 0; row < m; ++row) q[row * k + i] = -q[row * k + i];
          }
      }
    });
  };
}

HostKernel make_eigh(const ir::Node&, const ir::Graph&) {
  return [](const KernelArgs& a) {
    for_float(a, [&](auto tag) {
      using T = decltype(tag);
      int64_t n = rows_of(a.in[0]);
      std::vector<T> z(static_cast<size_t>(n * n));
      for (int64_t item = 0; item < batch_of(a.in[0]); ++item) {
        // Row-major lower = column-major upper; the eigenvectors come back as columns, i.e. rows here.
        std::copy_n(a.in[0].as<T>() + item * n * n, n * n, z.data());
        T* w = a.out[0].as<T>() + item * n;
        check_info(Op::eigh, item, Lapack<T>::syevd(lapack_dim(Op::eigh, n), z.data(), static_cast<int>(n), w), "syevd");
        T* v = a.out[1].as<T>() + item * n * n;
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < n; ++j) v[i * n + j] = z[static_cast<size_t>(j * n + i)];
        for (int64_t j = 0; j < n; ++j) make_column_positive(v, n, n, j);
      }
    });
  };
}

HostKernel make_svd(const ir::Node&, const ir::Graph&) {
  return [](const KernelArgs& a) {
    for_float(a, [&](auto tag) {
      using T = decltype(tag);
      int64_t m = rows_of(a.in[0]), n = cols_of(a.in[0]), k = std::min(m, n);
      std::vector<T> work(static_cast<size_t>(m * n));
      for (int64_t item = 0; item < batch_of(a.in[0]); ++item) {
        // The buffer is Aᵀ (n × m) column-major: Aᵀ = V S Uᵀ, so LAPACK's U is our Vh and its Vᵀ our U.
        std::copy_n(a.in[0].as<T>() + item * m * n, m * n, work.data());
        T* u = a.out[0].as<T>() + item * m * k;
        T* s = a.out[1].as<T>() + item * k;
        T* vh = a.out[2].as<T>() + item * k * n;
        check_info(Op::svd, item,
                   Lapack<T>::gesdd(lapack_dim(Op::svd, n), lapack_dim(Op::svd, m), work.data(), static_cast<int>(n), s, vh,
                                    static_cast<int>(n), u, static_cast<int>(k)),
                   "gesdd");
        for (int64_t j = 0; j < k; ++j) make_column_positive(u, m, k, j, vh, n);
      }
    });
  };
}

// exp(A) by Higham's scaling and squaring with the [13/13] Padé approximant (SIAM J. Matrix
// Anal. Appl. 26(4), 2005): A/2ˢ with ‖A/2ˢ‖₁ ≤ θ₁₃, (V − U)⁻¹ (V + U), squared s times.
template <class T>
void expm(int64_t n, const T* a, T* out) {
  static const double b[] = {64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0, 129060195264000.0,
                             10559470521600.0,    670442572800.0,      33522128640.0,      1323241920.0,       40840800.0,
                             960960.0,            16380.0,             182.0,              1.0};
  const double theta13 = 5.371920351148152;
  size_t nn = static_cast<size_t>(n * n);
  double norm = 0;
  for (int64_t j = 0; j < n; ++j) {
    double col = 0;
    for (int64_t i = 0; i < n; ++i) col += std::fabs(a[i * n + j]);
    norm = std::max(norm, col);
  }
  int s = norm > theta13 ? static_cast<int>(std::ceil(std::log2(norm / theta13))) : 0;
  std::vector<T> x(nn), x2(nn), x4(nn), x6(nn), t(nn), u(nn), v(nn);
  for (size_t i = 0; i < nn; ++i) x[i] = static_cast<T>(std::ldexp(static_cast<double>(a[i]), -s));
  Lapack<T>::gemm(static_cast<int>(n), x.data(), x.data(), x2.data());
  Lapack<T>::gemm(static_cast<int>(n), x2.data(), x2.data(), x4.data());
  Lapack<T>::gemm(static_cast<int>(n), x4.data(), x2.data(), x6.data());
  auto eye = [&](size_t i) { return static_cast<T>(i % static_cast<size_t>(n + 1) == 0 ? 1 : 0); };
  // U = X [X6 (b13 X6 + b11 X4 + b9 X2) + b7 X6 + b5 X4 + b3 X2 + b1 I]
  for (size_t i = 0; i < nn; ++i) t[i] = static_cast<T>(b[13] * x6[i] + b[11] * x4[i] + b[9] * x2[i]);
  Lapack<T>::gemm(static_cast<int>(n), x6.data(), t.data(), u.data());
  for (size_t i = 0; i < nn; ++i) u[i] += static_cast<T>(b[7] * x6[i] + b[5] * x4[i] + b[3] * x2[i] + b[1] * eye(i));
  Lapack<T>::gemm(static_cast<int>(n), x.data(), u.data(), t.data());
  std::swap(u, t);
  // V = X6 (b12 X6 + b10 X4 + b8 X2) + b6 X6 + b4 X4 + b2 X2 + b0 I
  for (size_t i = 0; i < nn; ++i) t[i] = static_cast<T>(b[12] * x6[i] + b[10] * x4[i] + b[8] * x2[i]);
  Lapack<T>::gemm(static_cast<int>(n), x6.data(), t.data(), v.data());
  for (size_t i = 0; i < nn; ++i) v[i] += static_cast<T>(b[6] * x6[i] + b[4] * x4[i] + b[2] * x2[i] + b[0] * eye(i));
  // (V − U) R = V + U
  std::vector<T> p(nn), q(nn);
  for (size_t i = 0; i < nn; ++i) {
    p[i] = v[i] + u[i];
    q[i] = v[i] - u[i];
  }
  std::vector<int> ipiv(static_cast<size_t>(n));
  int info = Lapack<T>::getrf(static_cast<int>(n), static_cast<int>(n), q.data(), static_cast<int>(n), ipiv.data());
  if (info != 0) throw Error(ErrorKind::runtime, "matrix_exp: the Padé denominator is singular");
  Lapack<T>::getrs(static_cast<int>(n), static_cast<int>(n), q.data(), static_cast<int>(n), ipiv.data(), p.data(), static_cast<int>(n));
  for (int i = 0; i < s; ++i) {
    Lapack<T>::gemm(static_cast<int>(n), p.data(), p.data(), t.data());
    std::swap(p, t);
  }
  std::copy(p.begin(), p.end(), out);
}

HostKernel make_matrix_exp(const ir::Node&, const ir::Graph&) {
  return [](const KernelArgs& a) {
    for_float(a, [&](auto tag) {
      using T = decltype(tag);
      int64_t n = lapack_dim(Op::matrix_exp, rows_of(a.in[0]));
      for (int64_t item = 0; item < batch_of(a.in[0]); ++item) expm<T>(n, a.in[0].as<T>() + item * n * n, a.out[0].as<T>() + item * n * n);
    });
  };
}

bool claims_real_float(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>&, const ir::Attrs&) {
  return is_one_of(in[0].dtype, {DType::f32, DType::f64});
}

}  // namespace

void register_factorize(KernelTable& t) {
  t[static_cast<size_t>(Op::cholesky)] = {claims_real_float, make_cholesky};
  t[static_cast<size_t>(Op::triangular_solve)] = {claims_real_float, make_triangular_solve};
  t[static_cast<size_t>(Op::lu)] = {claims_real_float, make_lu};
  t[static_cast<size_t>(Op::solve)] = {claims_real_float, make_solve};
  t[static_cast<size_t>(Op::inv)] = {claims_real_float, make_inv};
  t[static_cast<size_t>(Op::slogdet)] = {claims_real_float, make_slogdet};
  t[static_cast<size_t>(Op::qr)] = {claims_real_float, make_qr};
  t[static_cast<size_t>(Op::eigh)] = {claims_real_float, make_eigh};
  t[static_cast<size_t>(Op::svd)] = {claims_real_float, make_svd};
  t[static_cast<size_t>(Op::matrix_exp)] = {claims_real_float, make_matrix_exp};
}

}  // namespace rlx::backends::cpu
