// Dense linear algebra through LAPACK (lapack.h), f32 and f64, one matrix of the batch after
// another with every thread given to OpenBLAS. The results follow the IR's conventions (ops.def):
// sorted values, R's diagonal non-negative, sign-fixed vectors.
#include <cmath>
#include <limits>
#include <numeric>

#include "backends/cpu/lapack.h"

namespace rlx::backends::cpu {

using namespace lapack;
using ir::Op;

void register_matrix_exp(KernelTable& t);

namespace {

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

// The row-major lower triangle is LAPACK's upper one.
HostKernel make_cholesky(const ir::Node&, const ir::Graph&) {
  return [](const KernelArgs& a) {
    with_float_type(a, [&](auto tag) {
      using T = decltype(tag);
      int64_t n = rows_of(a.in[0]);
      for (int64_t item = 0; item < batch_of(a.in[0]); ++item) {
        T* l = a.out[0].as<T>() + item * n * n;
        std::copy_n(a.in[0].as<T>() + item * n * n, n * n, l);
        int info = Routines<T>::potrf('U', dim(Op::cholesky, n), l, static_cast<int>(n));
        if (info > 0) fail(Op::cholesky, item, cat("is not positive definite (its leading minor of order ", info, " is not positive)"));
        check(Op::cholesky, item, info, "potrf");
        for (int64_t i = 0; i < n; ++i) std::fill(l + i * n + i + 1, l + (i + 1) * n, T(0));
      }
    });
  };
}

HostKernel make_triangular_solve(const ir::Node& node, const ir::Graph&) {
  bool lower = node.attrs.b("lower"), left = node.attrs.b("left"), tr = node.attrs.b("transpose"), unit = node.attrs.b("unit_diagonal");
  return [=](const KernelArgs& a) {
    with_float_type(a, [&](auto tag) {
      using T = decltype(tag);
      int64_t n = rows_of(a.in[0]), m = rows_of(a.in[1]), k = cols_of(a.in[1]);
      for (int64_t item = 0; item < batch_of(a.in[0]); ++item) {
        T* x = a.out[0].as<T>() + item * m * k;
        std::copy_n(a.in[1].as<T>() + item * m * k, m * k, x);
        Routines<T>::trsm(CblasRowMajor, left ? CblasLeft : CblasRight, lower ? CblasLower : CblasUpper, tr ? CblasTrans : CblasNoTrans,
                          unit ? CblasUnit : CblasNonUnit, dim(Op::triangular_solve, m), dim(Op::triangular_solve, k),
                          a.in[0].as<T>() + item * n * n, static_cast<int>(n), x, static_cast<int>(k));
      }
    });
  };
}

// A's rows pivoted: the one kernel that hands LAPACK A itself (transposed in and out).
HostKernel make_lu(const ir::Node&, const ir::Graph&) {
  return [](const KernelArgs& a) {
    with_float_type(a, [&](auto tag) {
      using T = decltype(tag);
      int64_t m = rows_of(a.in[0]), n = cols_of(a.in[0]), k = std::min(m, n);
      T* col = scratch<T, 0>(static_cast<size_t>(m * n));
      std::vector<int> ipiv(static_cast<size_t>(k));
      for (int64_t item = 0; item < batch_of(a.in[0]); ++item) {
        transpose_into(a.in[0].as<T>() + item * m * n, m, n, col);
        check(Op::lu, item, std::min(0, Routines<T>::getrf(dim(Op::lu, m), dim(Op::lu, n), col, static_cast<int>(m), ipiv.data())), "getrf");
        transpose_into(col, n, m, a.out[0].as<T>() + item * m * n);
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

// Factors the buffer as it lies, i.e. Aᵀ = P L U; returns whether U has a zero pivot.
template <class T>
bool factor_transposed(Op op, int64_t item, T* buf, int64_t n, int* ipiv) {
  int info = Routines<T>::getrf(dim(op, n), static_cast<int>(n), buf, static_cast<int>(n), ipiv);
  if (info < 0) check(op, item, info, "getrf");
  return info > 0;
}

// A X = B as Xᵀ = Bᵀ (Aᵀ)⁻¹ = Bᵀ U⁻¹ L⁻¹ Pᵀ, from the factors of Aᵀ: X's row-major buffer is Xᵀ
// column-major, so the solve runs from the right on B as it lies and Pᵀ swaps whole rows of X.
HostKernel make_solve(const ir::Node&, const ir::Graph&) {
  return [](const KernelArgs& a) {
    with_float_type(a, [&](auto tag) {
      using T = decltype(tag);
      int64_t n = rows_of(a.in[0]), k = cols_of(a.in[1]);
      T* lu = scratch<T, 0>(static_cast<size_t>(n * n));
      std::vector<int> ipiv(static_cast<size_t>(n));
      for (int64_t item = 0; item < batch_of(a.in[0]); ++item) {
        std::copy_n(a.in[0].as<T>() + item * n * n, n * n, lu);
        if (factor_transposed(Op::solve, item, lu, n, ipiv.data())) fail(Op::solve, item, "is singular");
        T* x = a.out[0].as<T>() + item * n * k;
        std::copy_n(a.in[1].as<T>() + item * n * k, n * k, x);
        int ki = dim(Op::solve, k), ni = static_cast<int>(n);
        Routines<T>::trsm(CblasColMajor, CblasRight, CblasUpper, CblasNoTrans, CblasNonUnit, ki, ni, lu, ni, x, ki);
        Routines<T>::trsm(CblasColMajor, CblasRight, CblasLower, CblasNoTrans, CblasUnit, ki, ni, lu, ni, x, ki);
        for (int64_t i = n - 1; i >= 0; --i) {
          int64_t p = ipiv[static_cast<size_t>(i)] - 1;
          if (p != i) std::swap_ranges(x + i * k, x + (i + 1) * k, x + p * k);
        }
      }
    });
  };
}

// (Aᵀ)⁻¹ column-major is A⁻¹ row-major: getrf and getri on the output buffer as it lies.
HostKernel make_inv(const ir::Node&, const ir::Graph&) {
  return [](const KernelArgs& a) {
    with_float_type(a, [&](auto tag) {
      using T = decltype(tag);
      int64_t n = rows_of(a.in[0]);
      std::vector<int> ipiv(static_cast<size_t>(n));
      for (int64_t item = 0; item < batch_of(a.in[0]); ++item) {
        T* x = a.out[0].as<T>() + item * n * n;
        std::copy_n(a.in[0].as<T>() + item * n * n, n * n, x);
        if (factor_transposed(Op::inv, item, x, n, ipiv.data())) fail(Op::inv, item, "is singular");
        check(Op::inv, item, Routines<T>::getri(static_cast<int>(n), x, static_cast<int>(n), ipiv.data()), "getri");
      }
    });
  };
}

// det Aᵀ = det A.
HostKernel make_slogdet(const ir::Node&, const ir::Graph&) {
  return [](const KernelArgs& a) {
    with_float_type(a, [&](auto tag) {
      using T = decltype(tag);
      int64_t n = rows_of(a.in[0]);
      T* lu = scratch<T, 0>(static_cast<size_t>(n * n));
      std::vector<int> ipiv(static_cast<size_t>(n));
      for (int64_t item = 0; item < batch_of(a.in[0]); ++item) {
        std::copy_n(a.in[0].as<T>() + item * n * n, n * n, lu);
        factor_transposed(Op::slogdet, item, lu, n, ipiv.data());
        double sign = 1, logabs = 0;
        for (int64_t i = 0; i < n; ++i) {
          double d = lu[i * n + i];
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

// geqrf and orgqr on A transposed in (column-major), Q transposed back out, R read off.
HostKernel make_qr(const ir::Node&, const ir::Graph&) {
  return [](const KernelArgs& a) {
    with_float_type(a, [&](auto tag) {
      using T = decltype(tag);
      int64_t m = rows_of(a.in[0]), n = cols_of(a.in[0]), k = std::min(m, n);
      T* col = scratch<T, 0>(static_cast<size_t>(m * n));
      std::vector<T> tau(static_cast<size_t>(k));
      for (int64_t item = 0; item < batch_of(a.in[0]); ++item) {
        transpose_into(a.in[0].as<T>() + item * m * n, m, n, col);
        int mi = dim(Op::qr, m), ni = dim(Op::qr, n), ki = static_cast<int>(k);
        check(Op::qr, item, Routines<T>::geqrf(mi, ni, col, mi, tau.data()), "geqrf");
        T* q = a.out[0].as<T>() + item * m * k;
        T* r = a.out[1].as<T>() + item * k * n;
        for (int64_t i = 0; i < k; ++i)
          for (int64_t j = 0; j < n; ++j) r[i * n + j] = j >= i ? col[j * m + i] : T(0);
        check(Op::qr, item, Routines<T>::orgqr(mi, ki, ki, col, mi, tau.data()), "orgqr");
        transpose_into(col, k, m, q);
        for (int64_t i = 0; i < k; ++i)
          if (r[i * n + i] < 0) {
            for (int64_t j = 0; j < n; ++j) r[i * n + j] = -r[i * n + j];
            for (int64_t row = 0; row < m; ++row) q[row * k + i] = -q[row * k + i];
          }
      }
    });
  };
}

// The eigenvectors come back as LAPACK's columns, i.e. rows of the buffer: one transpose out.
HostKernel make_eigh(const ir::Node&, const ir::Graph&) {
  return [](const KernelArgs& a) {
    with_float_type(a, [&](auto tag) {
      using T = decltype(tag);
      int64_t n = rows_of(a.in[0]);
      T* z = scratch<T, 0>(static_cast<size_t>(n * n));
      for (int64_t item = 0; item < batch_of(a.in[0]); ++item) {
        std::copy_n(a.in[0].as<T>() + item * n * n, n * n, z);
        check(Op::eigh, item, Routines<T>::syevd(dim(Op::eigh, n), z, static_cast<int>(n), a.out[0].as<T>() + item * n), "syevd");
        T* v = a.out[1].as<T>() + item * n * n;
        transpose_into(z, n, n, v);
        for (int64_t j = 0; j < n; ++j) make_column_positive(v, n, n, j);
      }
    });
  };
}

// The buffer is Aᵀ (n × m column-major): Aᵀ = V S Uᵀ, so LAPACK's U is our Vh and its Vᵀ our U.
HostKernel make_svd(const ir::Node&, const ir::Graph&) {
  return [](const KernelArgs& a) {
    with_float_type(a, [&](auto tag) {
      using T = decltype(tag);
      int64_t m = rows_of(a.in[0]), n = cols_of(a.in[0]), k = std::min(m, n);
      T* w = scratch<T, 0>(static_cast<size_t>(m * n));
      for (int64_t item = 0; item < batch_of(a.in[0]); ++item) {
        std::copy_n(a.in[0].as<T>() + item * m * n, m * n, w);
        T* u = a.out[0].as<T>() + item * m * k;
        T* vh = a.out[2].as<T>() + item * k * n;
        check(Op::svd, item,
              Routines<T>::gesdd(dim(Op::svd, n), dim(Op::svd, m), w, static_cast<int>(n), a.out[1].as<T>() + item * k, vh, static_cast<int>(n), u,
                                 static_cast<int>(k)),
              "gesdd");
        for (int64_t j = 0; j < k; ++j) make_column_positive(u, m, k, j, vh, n);
      }
    });
  };
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
  register_matrix_exp(t);
}

}  // namespace rlx::backends::cpu
