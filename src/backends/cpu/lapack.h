// LAPACK (LAPACKE over Debian's OpenBLAS, the library NumPy uses) for the linear algebra kernels:
// the s/d routines by element type, all column-major. RLX's matrices are row-major, i.e. LAPACK's
// transposes, and the kernels are written so that this costs nothing: a symmetric matrix is its own
// transpose (lower ↔ upper), the SVD of Aᵀ swaps U and V, the LQ of Aᵀ is the QR of A, and
// solves factor Aᵀ and solve from the right. lu and qr transpose (lu must return A's row pivots;
// LAPACK's LQ of Aᵀ, which would spare qr the copies, is slower than its QR by more than they cost).
#pragma once
#include <cblas.h>
#include <lapacke.h>

#include <vector>

#include "backends/cpu/kernels.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::backends::cpu::lapack {

template <class T>
struct Routines;

#define RLX_LAPACK_ROUTINES(T, p)                                                                                                  \
  template <>                                                                                                                      \
  struct Routines<T> {                                                                                                             \
    static int potrf(char uplo, int n, T* a, int lda) { return LAPACKE_##p##potrf_work(LAPACK_COL_MAJOR, uplo, n, a, lda); }      \
    static int getrf(int m, int n, T* a, int lda, int* ipiv) { return LAPACKE_##p##getrf_work(LAPACK_COL_MAJOR, m, n, a, lda, ipiv); } \
    static int getrs(int n, int nrhs, const T* a, int lda, const int* ipiv, T* b, int ldb) {                                      \
      return LAPACKE_##p##getrs_work(LAPACK_COL_MAJOR, 'N', n, nrhs, a, lda, ipiv, b, ldb);                                       \
    }                                                                                                                              \
    static int getri(int n, T* a, int lda, const int* ipiv) { return LAPACKE_##p##getri(LAPACK_COL_MAJOR, n, a, lda, ipiv); }      \
    static int geqrf(int m, int n, T* a, int lda, T* tau) { return LAPACKE_##p##geqrf(LAPACK_COL_MAJOR, m, n, a, lda, tau); }      \
    static int orgqr(int m, int n, int k, T* a, int lda, const T* tau) { return LAPACKE_##p##orgqr(LAPACK_COL_MAJOR, m, n, k, a, lda, tau); } \
    static int syevd(int n, T* a, int lda, T* w) { return LAPACKE_##p##syevd(LAPACK_COL_MAJOR, 'V', 'U', n, a, lda, w); }         \
    static int gesdd(int m, int n, T* a, int lda, T* s, T* u, int ldu, T* vt, int ldvt) {                                          \
      return LAPACKE_##p##gesdd(LAPACK_COL_MAJOR, 'S', m, n, a, lda, s, u, ldu, vt, ldvt);                                          \
    }                                                                                                                              \
    static void trsm(CBLAS_ORDER order, CBLAS_SIDE side, CBLAS_UPLO uplo, CBLAS_TRANSPOSE t, CBLAS_DIAG d, int m, int n, const T* a, \
                     int lda, T* b, int ldb) {                                                                                     \
      cblas_##p##trsm(order, side, uplo, t, d, m, n, T(1), a, lda, b, ldb);                                                         \
    }                                                                                                                              \
    /* C = A·B, all n×n row-major */                                                                                               \
    static void gemm(int n, const T* a, const T* b, T* c) {                                                                        \
      cblas_##p##gemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, T(1), a, n, b, n, T(0), c, n);                           \
    }                                                                                                                              \
  };
RLX_LAPACK_ROUTINES(float, s)
RLX_LAPACK_ROUTINES(double, d)
#undef RLX_LAPACK_ROUTINES

// OpenBLAS threads for the length of one kernel: the pool is idle while LAPACK runs, and the
// factorizations' blocked updates are where the cores pay off (register.cpp keeps it at 1
// otherwise). Matrices below ~320² elements stay on one thread: waking OpenBLAS's threads (and the
// pool's, for transposes) costs about what splitting so little work saves (a chosen bound; this
// machine's timing noise hid any difference at 256²).
struct BlasThreads {
  static constexpr int64_t kThreadedElements = 320 * 320;
  bool on;
  explicit BlasThreads(int64_t elements) : on(elements >= kThreadedElements && num_threads() > 1) {
    if (on) openblas_set_num_threads(num_threads());
  }
  ~BlasThreads() {
    if (on) openblas_set_num_threads(1);
  }
};

// Calls f(T{}) for the kernel's element type (f32 or f64), with OpenBLAS threaded by the size of
// one matrix of the first operand.
template <class F>
void with_float_type(const KernelArgs& a, F f) {
  const HostView& x = a.in[0];
  BlasThreads threads(x.shape.size() >= 2 ? x.shape[x.shape.size() - 2] * x.shape.back() : x.numel);
  if (a.in[0].dtype == DType::f32) f(float{});
  else f(double{});
}

// The LAPACK kernels take real floats (f32, f64).
inline bool claims_real_float(ir::Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>&, const ir::Attrs&) {
  return is_one_of(in[0].dtype, {DType::f32, DType::f64});
}

inline int64_t rows_of(const HostView& v) { return v.shape[v.shape.size() - 2]; }
inline int64_t cols_of(const HostView& v) { return v.shape.back(); }
inline int64_t batch_of(const HostView& v) { return v.numel / std::max<int64_t>(1, rows_of(v) * cols_of(v)); }

// A dimension as LAPACK's 32-bit int, or an error naming the op.
inline int dim(ir::Op op, int64_t v) {
  if (v > 0x7fffffff) throw Error(ErrorKind::invalid_argument, cat(ir::op_keyword(op), ": a dimension of ", v, " exceeds LAPACK's 32-bit indices"));
  return static_cast<int>(v);
}

[[noreturn]] inline void fail(ir::Op op, int64_t item, const std::string& what) {
  throw Error(ErrorKind::runtime, cat(ir::op_keyword(op), ": matrix ", item, " of the batch ", what));
}

inline void check(ir::Op op, int64_t item, int info, const char* routine) {
  if (info < 0) throw Error(ErrorKind::internal, cat(ir::op_keyword(op), ": LAPACK's ", routine, " rejected argument ", -info));
  if (info > 0) fail(op, item, cat("did not converge (", routine, " info ", info, ")"));
}

// Scratch space reused across runs by the calling thread (concurrent runs each have their own).
template <class T, int Slot>
T* scratch(size_t n) {
  thread_local std::vector<T> buffer;
  if (buffer.size() < n) buffer.resize(n);
  return buffer.data();
}

// dst (cols × rows) = srcᵀ (rows × cols), row-major both, in tiles across the pool's threads.
template <class T>
void transpose_into(const T* src, int64_t rows, int64_t cols, T* dst) {
  constexpr int64_t kTile = 8;  // 8×8 doubles: both sides stay in L1 even at power-of-two strides (2× faster than 32)
  int64_t grain = std::max<int64_t>(1, BlasThreads::kThreadedElements / (kTile * std::max<int64_t>(1, cols)));  // small: one thread
  parallel_items((rows + kTile - 1) / kTile, grain, [&](int64_t block) {
    int64_t i0 = block * kTile;
    for (int64_t j0 = 0; j0 < cols; j0 += kTile)
      for (int64_t i = i0; i < std::min(rows, i0 + kTile); ++i)
        for (int64_t j = j0; j < std::min(cols, j0 + kTile); ++j) dst[j * rows + i] = src[i * cols + j];
  });
}

}  // namespace rlx::backends::cpu::lapack
