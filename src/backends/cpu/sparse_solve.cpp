// csr_solve through SuiteSparse (Debian's libsuitesparse-dev): CHOLMOD's supernodal Cholesky for a
// symmetric positive definite A, UMFPACK's multifrontal LU otherwise — both on OpenBLAS, neither
// ever densifying. RLX's CSR arrays, read as CSC, are Aᵀ: CHOLMOD takes their upper triangle (A's
// lower one, the op's convention), and UMFPACK solves with the transposed system to get A's.
// The 64-bit interfaces (cholmod_l_*, umfpack_dl_*) take RLX's i64 indices as they are; f32 values
// and right-hand sides are solved in f64 (SuiteSparse 5 factors in double only).
#include <suitesparse/cholmod.h>
#include <suitesparse/umfpack.h>

#include "backends/cpu/lapack.h"
#include "util/csr.h"

namespace rlx::backends::cpu {

namespace {

using ir::Op;

static_assert(sizeof(SuiteSparse_long) == sizeof(int64_t), "SuiteSparse's long indices are RLX's i64");

// Whether the CSR matrix equals its transpose (pattern and values); columns ascend in each row.
// Row c's entries left of the diagonal must be met, in order, as the mirrors of the entries right
// of the diagonal in rows i < c: next[c] walks them.
bool is_symmetric(int64_t n, const int64_t* ptr, const int64_t* cols, const double* v) {
  std::vector<int64_t> next(ptr, ptr + n);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t p = ptr[i]; p < ptr[i + 1]; ++p) {
      int64_t c = cols[p];
      if (c <= i) continue;
      int64_t& q = next[static_cast<size_t>(c)];
      if (q >= ptr[c + 1] || cols[q] != i || v[q] != v[p]) return false;
      ++q;
    }
  for (int64_t c = 0; c < n; ++c) {
    int64_t q = next[static_cast<size_t>(c)];
    if (q < ptr[c + 1] && cols[q] < c) return false;  // a lower entry without its mirror
  }
  return true;
}

struct Cholmod {
  cholmod_common c;
  Cholmod() { cholmod_l_start(&c); }
  ~Cholmod() { cholmod_l_finish(&c); }
};

// Solves A X = B for k columns (column-major B, overwritten by X); false when A is not positive
// definite.
bool cholmod_solve(int64_t n, const int64_t* ptr, const int64_t* cols, const double* v, int64_t k, double* b) {
  Cholmod cm;
  cholmod_sparse a{};
  a.nrow = a.ncol = static_cast<size_t>(n);
  a.nzmax = static_cast<size_t>(ptr[n]);
  a.p = const_cast<int64_t*>(ptr);
  a.i = const_cast<int64_t*>(cols);
  a.x = const_cast<double*>(v);
  a.stype = 1;
  a.itype = CHOLMOD_LONG;
  a.xtype = CHOLMOD_REAL;
  a.dtype = CHOLMOD_DOUBLE;
  a.sorted = 1;
  a.packed = 1;
  cholmod_factor* l = cholmod_l_analyze(&a, &cm.c);
  if (!l) throw Error(ErrorKind::out_of_memory, cat("csr_solve: CHOLMOD's analysis failed (status ", cm.c.status, ")"));
  cholmod_l_factorize(&a, l, &cm.c);
  if (cm.c.status == CHOLMOD_NOT_POSDEF) {
    cholmod_l_free_factor(&l, &cm.c);
    return false;
  }
  if (cm.c.status < 0) {
    cholmod_l_free_factor(&l, &cm.c);
    throw Error(ErrorKind::out_of_memory, cat("csr_solve: CHOLMOD's factorization failed (status ", cm.c.status, ")"));
  }
  cholmod_dense rhs{};
  rhs.nrow = static_cast<size_t>(n);
  rhs.ncol = static_cast<size_t>(k);
  rhs.nzmax = rhs.d = static_cast<size_t>(n);
  rhs.nzmax *= static_cast<size_t>(k);
  rhs.x = b;
  rhs.xtype = CHOLMOD_REAL;
  rhs.dtype = CHOLMOD_DOUBLE;
  cholmod_dense* x = cholmod_l_solve(CHOLMOD_A, l, &rhs, &cm.c);
  cholmod_l_free_factor(&l, &cm.c);
  if (!x) throw Error(ErrorKind::out_of_memory, "csr_solve: CHOLMOD's solve failed");
  std::copy_n(static_cast<double*>(x->x), n * k, b);
  cholmod_l_free_dense(&x, &cm.c);
  return true;
}

// Solves A X = B (Aᵀ X = B when `transpose`) with UMFPACK, B column-major, overwritten by X.
void umfpack_solve(int64_t n, const int64_t* ptr, const int64_t* cols, const double* v, int64_t k, double* b, bool transpose) {
  auto* ap = reinterpret_cast<const SuiteSparse_long*>(ptr);
  auto* ai = reinterpret_cast<const SuiteSparse_long*>(cols);
  double control[UMFPACK_CONTROL], info[UMFPACK_INFO];
  umfpack_dl_defaults(control);
  void *symbolic = nullptr, *numeric = nullptr;
  int status = static_cast<int>(umfpack_dl_symbolic(n, n, ap, ai, v, &symbolic, control, info));
  if (status != UMFPACK_OK) throw Error(ErrorKind::runtime, cat("csr_solve: UMFPACK's analysis failed (status ", status, ")"));
  status = static_cast<int>(umfpack_dl_numeric(ap, ai, v, symbolic, &numeric, control, info));
  umfpack_dl_free_symbolic(&symbolic);
  if (status == UMFPACK_WARNING_singular_matrix) {
    umfpack_dl_free_numeric(&numeric);
    throw Error(ErrorKind::runtime, "csr_solve: the matrix is singular");
  }
  if (status != UMFPACK_OK) throw Error(ErrorKind::runtime, cat("csr_solve: UMFPACK's factorization failed (status ", status, ")"));
  std::vector<double> x(static_cast<size_t>(n));
  // The arrays hold Aᵀ as CSC: its transposed system is A's.
  int sys = transpose ? UMFPACK_A : UMFPACK_At;
  for (int64_t j = 0; j < k; ++j) {
    status = static_cast<int>(umfpack_dl_solve(sys, ap, ai, v, x.data(), b + j * n, numeric, control, info));
    if (status != UMFPACK_OK) {
      umfpack_dl_free_numeric(&numeric);
      throw Error(ErrorKind::runtime, cat("csr_solve: UMFPACK's solve failed (status ", status, ")"));
    }
    std::copy(x.begin(), x.end(), b + j * n);
  }
  umfpack_dl_free_numeric(&numeric);
}

HostKernel make_csr_solve(const ir::Node& node, const ir::Graph&) {
  bool transpose = node.attrs.b("transpose");
  std::string method = node.attrs.s("method");
  return [=](const KernelArgs& a) {
    const int64_t* ptr = a.in[0].as<int64_t>();
    const int64_t* cols = a.in[1].as<int64_t>();
    int64_t n = a.in[0].numel - 1, nnz = a.in[1].numel, k = a.in[3].shape[1];
    check_csr("csr_solve", ptr, n, cols, nnz, n, true);
    lapack::BlasThreads threads(nnz);
    // f64 copies: the values (f32 widened) and B column-major.
    std::vector<double> v(static_cast<size_t>(nnz)), b(static_cast<size_t>(n * k));
    dispatch_typed(a.in[2].dtype, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_floating_point_v<T>) {
        std::copy_n(a.in[2].as<T>(), nnz, v.begin());
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < k; ++j) b[static_cast<size_t>(j * n + i)] = a.in[3].as<T>()[i * k + j];
      }
    });
    bool solved = false;
    if (method == "cholesky") {
      if (!cholmod_solve(n, ptr, cols, v.data(), k, b.data())) throw Error(ErrorKind::runtime, "csr_solve: the matrix is not positive definite (method=cholesky)");
      solved = true;
    } else if (method == "auto" && is_symmetric(n, ptr, cols, v.data())) {
      solved = cholmod_solve(n, ptr, cols, v.data(), k, b.data());
    }
    if (!solved) umfpack_solve(n, ptr, cols, v.data(), k, b.data(), transpose);
    dispatch_typed(a.out[0].dtype, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_floating_point_v<T>)
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < k; ++j) a.out[0].as<T>()[i * k + j] = static_cast<T>(b[static_cast<size_t>(j * n + i)]);
    });
  };
}

bool claims_csr_solve(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>&, const ir::Attrs&) {
  return in[0].dtype == DType::i64 && is_one_of(in[2].dtype, {DType::f32, DType::f64});
}

}  // namespace

void register_sparse_solve(KernelTable& t) { t[static_cast<size_t>(Op::csr_solve)] = {claims_csr_solve, make_csr_solve}; }

}  // namespace rlx::backends::cpu
