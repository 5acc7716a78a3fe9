// Dense linear algebra on the cuda device through cuSOLVER (cusolver.h), f32 and f64, one call
// per matrix of the batch on the run's stream. Tensors are row-major and cuSOLVER column-major:
// a row-major buffer read column-major is the transpose, which each kernel uses where it can and
// transposes (a strided copy) where it cannot. Results follow the IR's conventions (ops.def) by
// linalg.cu's kernels; a factorization that fails (not positive definite, singular, no
// convergence) is reported through the error word, so nothing here waits for the device.
#include <algorithm>

#include "backends/cuda/cusolver.h"
#include "backends/cuda/device.h"
#include "backends/cuda/kernels.h"
#include "ops/matrix_exp_pade.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::backends::cuda {

namespace {

using ir::Op;

// A batch of matrices: the leading dims of a value's static shape are the batch.
struct Mat {
  int64_t batch = 1, rows = 1, cols = 1;
};
Mat mat_of(const ir::Graph& g, ir::ValueId v) {
  std::vector<int64_t> s = static_shape(g, v);
  Mat m;
  for (size_t d = 0; d + 2 < s.size(); ++d) m.batch *= s[d];
  m.rows = s[s.size() - 2];
  m.cols = s.back();
  return m;
}

// Offsets of a kernel's scratch areas, each 256-byte aligned.
struct Layout {
  size_t bytes = 0;
  size_t take(size_t n) {
    size_t at = bytes;
    bytes += (n + 255) / 256 * 256;
    return at;
  }
};
char* at(const LaunchArgs& a, size_t offset) { return static_cast<char*>(a.scratch) + offset; }
char* item_of(void* base, int64_t item, int64_t elems, size_t es) { return static_cast<char*>(base) + static_cast<size_t>(item * elems) * es; }

// The calling thread's host workspace for cuSOLVER's 64-bit API (most routines need none).
void* host_work(size_t bytes) {
  thread_local std::vector<char> buffer;
  if (buffer.size() < bytes) buffer.resize(bytes);
  return buffer.data();
}

// dst [batch, cols, rows] = src [batch, rows, cols] transposed per matrix.
void transpose_batch(size_t es, const void* src, void* dst, int64_t batch, int64_t rows, int64_t cols, cudaStream_t s) {
  Space sp = make_space({batch, rows, cols});
  launch_strided_copy(static_cast<int>(es), src, 0, make_strides({rows * cols, cols, 1}), dst, 0, make_strides({rows * cols, 1, rows}), sp, s);
}

void copy_async(void* dst, const void* src, size_t bytes, cudaStream_t s) {
  if (bytes) check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s), "copying a matrix");
}

struct Typed {
  bool f64;
  size_t es;
  cudaDataType dt;
};
Typed typed(const ir::Graph& g, const ir::Node& n) {
  bool f64 = in_type(g, n, 0).dtype == DType::f64;
  return {f64, f64 ? size_t{8} : size_t{4}, f64 ? CUDA_R_64F : CUDA_R_32F};
}

Kernel make_cholesky(const ir::Node& n, const ir::Graph& g) {
  Mat m = mat_of(g, n.inputs[0]);
  Typed t = typed(g, n);
  int64_t N = m.rows;
  size_t dev = 0, host = 0;
  DnHandle h = dn_handle(nullptr);
  check_solver(cusolver().potrf_size(h.handle, h.params, CUBLAS_FILL_MODE_UPPER, N, t.dt, nullptr, N, t.dt, &dev, &host), "sizing potrf");
  Layout l;
  size_t info_at = l.take(sizeof(int) * static_cast<size_t>(m.batch)), work_at = l.take(dev);
  return Kernel(
      [=](const LaunchArgs& a) {
        DnHandle h = dn_handle(a.stream);
        int* info = reinterpret_cast<int*>(at(a, info_at));
        copy_async(a.out[0].data, a.in[0].data, static_cast<size_t>(a.out[0].numel) * t.es, a.stream);
        // the row-major lower triangle is the column-major upper one
        for (int64_t item = 0; item < m.batch; ++item)
          check_solver(cusolver().potrf(h.handle, h.params, CUBLAS_FILL_MODE_UPPER, N, t.dt, item_of(a.out[0].data, item, N * N, t.es), N, t.dt,
                                        at(a, work_at), dev, host_work(host), host, info + item),
                       "in potrf");
        launch_factor_info(info, m.batch, kNotPositiveDefinite, a.error, a.node_index, a.stream);
        launch_lower_triangle(t.f64, a.out[0].data, m.batch, N, a.stream);
      },
      l.bytes, "cuSOLVER potrf");
}

Kernel make_triangular_solve(const ir::Node& n, const ir::Graph& g) {
  Mat am = mat_of(g, n.inputs[0]), bm = mat_of(g, n.inputs[1]);
  Typed t = typed(g, n);
  TriangularSolve ts{bm.batch, am.rows, bm.rows, bm.cols, n.attrs.b("lower"), n.attrs.b("left"), n.attrs.b("transpose"), n.attrs.b("unit_diagonal")};
  return {[=](const LaunchArgs& a) {
    copy_async(a.out[0].data, a.in[1].data, static_cast<size_t>(a.out[0].numel) * t.es, a.stream);
    launch_triangular_solve(t.f64, a.in[0].data, a.out[0].data, ts, a.stream);
  }};
}

// getrf's workspace for an m × n matrix of the type.
size_t getrf_work(const Typed& t, int64_t m, int64_t n, size_t& host) {
  size_t dev = 0;
  DnHandle h = dn_handle(nullptr);
  check_solver(cusolver().getrf_size(h.handle, h.params, m, n, t.dt, nullptr, m, t.dt, &dev, &host), "sizing getrf");
  return dev;
}

// The packed L\U of A (transposed in and out: the one kernel that factors A itself), its row
// swaps and permutation.
Kernel make_lu(const ir::Node& n, const ir::Graph& g) {
  Mat m = mat_of(g, n.inputs[0]);
  Typed t = typed(g, n);
  int64_t M = m.rows, N = m.cols, K = std::min(M, N);
  size_t host = 0, dev = getrf_work(t, M, N, host);
  Layout l;
  size_t col_at = l.take(static_cast<size_t>(m.batch * M * N) * t.es), ipiv_at = l.take(8 * static_cast<size_t>(m.batch * K)),
         info_at = l.take(sizeof(int) * static_cast<size_t>(m.batch)), work_at = l.take(dev);
  return Kernel(
      [=](const LaunchArgs& a) {
        DnHandle h = dn_handle(a.stream);
        void* col = at(a, col_at);
        int64_t* ipiv = reinterpret_cast<int64_t*>(at(a, ipiv_at));
        int* info = reinterpret_cast<int*>(at(a, info_at));
        transpose_batch(t.es, a.in[0].data, col, m.batch, M, N, a.stream);
        for (int64_t item = 0; item < m.batch; ++item)
          check_solver(cusolver().getrf(h.handle, h.params, M, N, t.dt, item_of(col, item, M * N, t.es), M, ipiv + item * K, t.dt, at(a, work_at), dev,
                                        host_work(host), host, info + item),
                       "in getrf");
        transpose_batch(t.es, col, a.out[0].data, m.batch, N, M, a.stream);
        launch_lu_pivots(ipiv, static_cast<int32_t*>(a.out[1].data), static_cast<int64_t*>(a.out[2].data), m.batch, M, K, a.stream);
      },
      l.bytes, "cuSOLVER getrf");
}

// solve, inv and slogdet factor A's buffer as it lies — Aᵀ column-major, the same determinant —
// into scratch: [factor][pivots][info][work], then `finish` does the rest.
struct Factored {
  size_t lu_at, ipiv_at, info_at, work_at, dev, host;
};
Factored factored_layout(Layout& l, const Typed& t, const Mat& m) {
  Factored f{};
  f.dev = getrf_work(t, m.rows, m.rows, f.host);
  f.lu_at = l.take(static_cast<size_t>(m.batch * m.rows * m.rows) * t.es);
  f.ipiv_at = l.take(8 * static_cast<size_t>(m.batch * m.rows));
  f.info_at = l.take(sizeof(int) * static_cast<size_t>(m.batch));
  f.work_at = l.take(f.dev);
  return f;
}
// getrf on the factor area as it lies (singular_fails: a zero pivot is reported as an error)
void factor_in_place(const LaunchArgs& a, const Factored& f, const Typed& t, const Mat& m, bool singular_fails) {
  DnHandle h = dn_handle(a.stream);
  int64_t N = m.rows;
  void* lu = at(a, f.lu_at);
  int* info = reinterpret_cast<int*>(at(a, f.info_at));
  for (int64_t item = 0; item < m.batch; ++item)
    check_solver(cusolver().getrf(h.handle, h.params, N, N, t.dt, item_of(lu, item, N * N, t.es), N, reinterpret_cast<int64_t*>(at(a, f.ipiv_at)) + item * N,
                                  t.dt, at(a, f.work_at), f.dev, host_work(f.host), f.host, info + item),
                 "in getrf");
  if (singular_fails) launch_factor_info(info, m.batch, kSingular, a.error, a.node_index, a.stream);
}
// ... of a copy of the node's first input
void factor(const LaunchArgs& a, const Factored& f, const Typed& t, const Mat& m, bool singular_fails) {
  copy_async(at(a, f.lu_at), a.in[0].data, static_cast<size_t>(m.batch * m.rows * m.rows) * t.es, a.stream);
  factor_in_place(a, f, t, m, singular_fails);
}
// op(LUᵀ-factor) X = B on column-major B of nrhs columns, per matrix
void solve_factored(const LaunchArgs& a, const Factored& f, const Typed& t, const Mat& m, cublasOperation_t op, void* b, int64_t nrhs) {
  DnHandle h = dn_handle(a.stream);
  int64_t N = m.rows;
  int* info = reinterpret_cast<int*>(at(a, f.info_at));
  for (int64_t item = 0; item < m.batch; ++item)
    check_solver(cusolver().getrs(h.handle, h.params, op, N, nrhs, t.dt, item_of(at(a, f.lu_at), item, N * N, t.es), N,
                                  reinterpret_cast<int64_t*>(at(a, f.ipiv_at)) + item * N, t.dt, item_of(b, item, N * nrhs, t.es), N, info + item),
                 "in getrs");
}

// A X = B: with the factors of Aᵀ, getrs(ᵀ) solves A X = B on B transposed to column-major.
Kernel make_solve(const ir::Node& n, const ir::Graph& g) {
  Mat m = mat_of(g, n.inputs[0]), bm = mat_of(g, n.inputs[1]);
  Typed t = typed(g, n);
  Layout l;
  Factored f = factored_layout(l, t, m);
  size_t bc_at = l.take(static_cast<size_t>(bm.batch * bm.rows * bm.cols) * t.es);
  int64_t K = bm.cols;
  return Kernel(
      [=](const LaunchArgs& a) {
        factor(a, f, t, m, true);
        void* bc = at(a, bc_at);
        transpose_batch(t.es, a.in[1].data, bc, bm.batch, bm.rows, K, a.stream);
        solve_factored(a, f, t, m, CUBLAS_OP_T, bc, K);
        transpose_batch(t.es, bc, a.out[0].data, bm.batch, K, bm.rows, a.stream);
      },
      l.bytes, "cuSOLVER getrf + getrs");
}

// (Aᵀ)⁻¹ column-major is A⁻¹ row-major: getrs on the identity as it lies.
Kernel make_inv(const ir::Node& n, const ir::Graph& g) {
  Mat m = mat_of(g, n.inputs[0]);
  Typed t = typed(g, n);
  Layout l;
  Factored f = factored_layout(l, t, m);
  return Kernel(
      [=](const LaunchArgs& a) {
        factor(a, f, t, m, true);
        launch_identity(t.f64, a.out[0].data, m.batch, m.rows, a.stream);
        solve_factored(a, f, t, m, CUBLAS_OP_N, a.out[0].data, m.rows);
      },
      l.bytes, "cuSOLVER getrf + getrs");
}

Kernel make_slogdet(const ir::Node& n, const ir::Graph& g) {
  Mat m = mat_of(g, n.inputs[0]);
  Typed t = typed(g, n);
  Layout l;
  Factored f = factored_layout(l, t, m);
  return Kernel(
      [=](const LaunchArgs& a) {
        factor(a, f, t, m, false);
        launch_slogdet(t.f64, at(a, f.lu_at), reinterpret_cast<int64_t*>(at(a, f.ipiv_at)), a.out[0].data, a.out[1].data, m.batch, m.rows, a.stream);
      },
      l.bytes, "cuSOLVER getrf");
}

// geqrf and orgqr on A transposed in; R read off, Q transposed out, then R's diagonal made
// non-negative.
Kernel make_qr(const ir::Node& n, const ir::Graph& g) {
  Mat m = mat_of(g, n.inputs[0]);
  Typed t = typed(g, n);
  int64_t M = m.rows, N = m.cols, K = std::min(M, N);
  const Cusolver& c = cusolver();
  DnHandle h = dn_handle(nullptr);
  size_t dev = 0, host = 0;
  check_solver(c.geqrf_size(h.handle, h.params, M, N, t.dt, nullptr, M, t.dt, nullptr, t.dt, &dev, &host), "sizing geqrf");
  int lwork = 0;
  if (t.f64) check_solver(c.dorgqr_size(h.handle, static_cast<int>(M), static_cast<int>(K), static_cast<int>(K), nullptr, static_cast<int>(M), nullptr, &lwork), "sizing orgqr");
  else check_solver(c.sorgqr_size(h.handle, static_cast<int>(M), static_cast<int>(K), static_cast<int>(K), nullptr, static_cast<int>(M), nullptr, &lwork), "sizing orgqr");
  size_t work = std::max(dev, static_cast<size_t>(lwork) * t.es);
  Layout l;
  size_t col_at = l.take(static_cast<size_t>(m.batch * M * N) * t.es), tau_at = l.take(static_cast<size_t>(m.batch * K) * t.es),
         info_at = l.take(sizeof(int) * static_cast<size_t>(m.batch)), work_at = l.take(work);
  return Kernel(
      [=](const LaunchArgs& a) {
        const Cusolver& c = cusolver();
        DnHandle h = dn_handle(a.stream);
        void* col = at(a, col_at);
        int* info = reinterpret_cast<int*>(at(a, info_at));
        transpose_batch(t.es, a.in[0].data, col, m.batch, M, N, a.stream);
        for (int64_t item = 0; item < m.batch; ++item)
          check_solver(c.geqrf(h.handle, h.params, M, N, t.dt, item_of(col, item, M * N, t.es), M, t.dt, item_of(at(a, tau_at), item, K, t.es), t.dt,
                               at(a, work_at), dev, host_work(host), host, info + item),
                       "in geqrf");
        launch_take_r(t.f64, col, a.out[1].data, m.batch, M, N, K, a.stream);
        for (int64_t item = 0; item < m.batch; ++item) {
          void* q = item_of(col, item, M * N, t.es);
          void* tau = item_of(at(a, tau_at), item, K, t.es);
          int mi = static_cast<int>(M), ki = static_cast<int>(K);
          if (t.f64)
            check_solver(c.dorgqr(h.handle, mi, ki, ki, static_cast<double*>(q), mi, static_cast<double*>(tau), reinterpret_cast<double*>(at(a, work_at)), lwork, info + item),
                         "in orgqr");
          else
            check_solver(c.sorgqr(h.handle, mi, ki, ki, static_cast<float*>(q), mi, static_cast<float*>(tau), reinterpret_cast<float*>(at(a, work_at)), lwork, info + item),
                         "in orgqr");
        }
        // Q's column-major m × k (leading dim m) inside each m·n block, to row-major [m, k]
        launch_strided_copy(static_cast<int>(t.es), col, 0, make_strides({M * N, 1, M}), a.out[0].data, 0, make_strides({M * K, K, 1}),
                            make_space({m.batch, M, K}), a.stream);
        launch_qr_signs(t.f64, a.out[0].data, a.out[1].data, m.batch, M, N, K, a.stream);
      },
      l.bytes, "cuSOLVER geqrf + orgqr");
}

// syevd on the row-major lower triangle (column-major upper); the vectors come back as
// column-major columns, i.e. rows of the buffer: one transpose out.
Kernel make_eigh(const ir::Node& n, const ir::Graph& g) {
  Mat m = mat_of(g, n.inputs[0]);
  Typed t = typed(g, n);
  int64_t N = m.rows;
  size_t dev = 0, host = 0;
  DnHandle h = dn_handle(nullptr);
  check_solver(cusolver().syevd_size(h.handle, h.params, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER, N, t.dt, nullptr, N, t.dt, nullptr, t.dt, &dev, &host),
               "sizing syevd");
  Layout l;
  size_t z_at = l.take(static_cast<size_t>(m.batch * N * N) * t.es), info_at = l.take(sizeof(int) * static_cast<size_t>(m.batch)), work_at = l.take(dev);
  return Kernel(
      [=](const LaunchArgs& a) {
        DnHandle h = dn_handle(a.stream);
        void* z = at(a, z_at);
        int* info = reinterpret_cast<int*>(at(a, info_at));
        copy_async(z, a.in[0].data, static_cast<size_t>(m.batch * N * N) * t.es, a.stream);
        for (int64_t item = 0; item < m.batch; ++item)
          check_solver(cusolver().syevd(h.handle, h.params, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER, N, t.dt, item_of(z, item, N * N, t.es), N, t.dt,
                                        item_of(a.out[0].data, item, N, t.es), t.dt, at(a, work_at), dev, host_work(host), host, info + item),
                       "in syevd");
        launch_factor_info(info, m.batch, kNotConverged, a.error, a.node_index, a.stream);
        transpose_batch(t.es, z, a.out[1].data, m.batch, N, N, a.stream);
        launch_positive_columns(t.f64, a.out[1].data, m.batch, N, N, nullptr, 0, 0, a.stream);
      },
      l.bytes, "cuSOLVER syevd");
}

// gesvd takes rows ≥ columns. A wide or square A's buffer as it lies is Aᵀ (n × m, n ≥ m):
// Aᵀ = U' S V'ᵀ makes U = V' and Vh = U'ᵀ, whose column-major buffers are exactly our row-major
// U and Vh. A tall A is transposed to column-major first, and its factors transposed back.
Kernel make_svd(const ir::Node& n, const ir::Graph& g) {
  Mat m = mat_of(g, n.inputs[0]);
  Typed t = typed(g, n);
  int64_t M = m.rows, N = m.cols, K = std::min(M, N);
  bool tall = M > N;
  int64_t rows = tall ? M : N, cols = tall ? N : M;  // the column-major matrix cuSOLVER factors
  size_t dev = 0, host = 0;
  DnHandle h = dn_handle(nullptr);
  check_solver(cusolver().gesvd_size(h.handle, h.params, 'S', 'S', rows, cols, t.dt, nullptr, rows, t.dt, nullptr, t.dt, nullptr, rows, t.dt, nullptr, K, t.dt,
                                     &dev, &host),
               "sizing gesvd");
  Layout l;
  size_t a_at = l.take(static_cast<size_t>(m.batch * M * N) * t.es), u_at = l.take(tall ? static_cast<size_t>(m.batch * M * K) * t.es : 0),
         vt_at = l.take(tall ? static_cast<size_t>(m.batch * K * N) * t.es : 0), info_at = l.take(sizeof(int) * static_cast<size_t>(m.batch)),
         work_at = l.take(dev);
  return Kernel(
      [=](const LaunchArgs& a) {
        DnHandle h = dn_handle(a.stream);
        void* c = at(a, a_at);
        int* info = reinterpret_cast<int*>(at(a, info_at));
        void* u = tall ? at(a, u_at) : a.out[2].data;    // cuSOLVER's U: rows × k
        void* vt = tall ? at(a, vt_at) : a.out[0].data;  // cuSOLVER's Vᵀ: k × cols
        if (tall) transpose_batch(t.es, a.in[0].data, c, m.batch, M, N, a.stream);
        else copy_async(c, a.in[0].data, static_cast<size_t>(m.batch * M * N) * t.es, a.stream);
        for (int64_t item = 0; item < m.batch; ++item)
          check_solver(cusolver().gesvd(h.handle, h.params, 'S', 'S', rows, cols, t.dt, item_of(c, item, M * N, t.es), rows, t.dt,
                                        item_of(a.out[1].data, item, K, t.es), t.dt, item_of(u, item, rows * K, t.es), rows, t.dt,
                                        item_of(vt, item, K * cols, t.es), K, t.dt, at(a, work_at), dev, host_work(host), host, info + item),
                       "in gesvd");
        launch_factor_info(info, m.batch, kNotConverged, a.error, a.node_index, a.stream);
        if (tall) {
          transpose_batch(t.es, u, a.out[0].data, m.batch, K, M, a.stream);   // U: column-major m × k → row-major
          transpose_batch(t.es, vt, a.out[2].data, m.batch, N, K, a.stream);  // Vh: column-major k × n → row-major
        }
        launch_positive_columns(t.f64, a.out[0].data, m.batch, M, K, a.out[2].data, K, N, a.stream);
      },
      l.bytes, "cuSOLVER gesvd");
}

// exp(A) as the cpu computes it (scaling and squaring, [13/13] Padé; cpu/matrix_exp.cpp): the
// powers by batched products, the scaling per matrix on the device, the Padé quotient through
// getrf/getrs, then the squarings — as many as the batch's largest scaling, read back to the
// host (the one wait), each matrix squared only its own number of times.
Kernel make_matrix_exp(const ir::Node& n, const ir::Graph& g) {
  Mat m = mat_of(g, n.inputs[0]);
  Typed t = typed(g, n);
  int64_t N = m.rows, total = m.batch * N * N;
  size_t mat = static_cast<size_t>(total) * t.es;
  Layout l;
  Factored f = factored_layout(l, t, m);  // the Padé denominator V − U is factored there
  size_t a2_at = l.take(mat), a4_at = l.take(mat), a6_at = l.take(mat), t_at = l.take(mat), u_at = l.take(mat), v_at = l.take(mat),
         s_at = l.take(sizeof(int) * static_cast<size_t>(m.batch)), smax_at = l.take(sizeof(int));
  return Kernel(
      [=](const LaunchArgs& a) {
        const double* b = ops::kPade13;
        const void* x = a.in[0].data;
        void *a2 = at(a, a2_at), *a4 = at(a, a4_at), *a6 = at(a, a6_at), *tt = at(a, t_at), *u = at(a, u_at), *v = at(a, v_at), *q = at(a, f.lu_at);
        void* out = a.out[0].data;
        int* s = reinterpret_cast<int*>(at(a, s_at));
        int* s_max = reinterpret_cast<int*>(at(a, smax_at));
        cudaStream_t st = a.stream;
        auto mul = [&](const void* p, const void* r, void* c) { launch_batched_square(t.f64, p, r, c, m.batch, N, nullptr, 0, st); };
        auto combine = [&](const void* base, void* o, std::initializer_list<double> k, int outer) {
          double kk[4];
          std::copy(k.begin(), k.end(), kk);
          launch_expm_combine(t.f64, base, a2, a4, a6, s, o, m.batch, N, kk, outer, st);
        };
        mul(x, x, a2);
        mul(a2, a2, a4);
        mul(a4, a2, a6);
        launch_expm_scaling(t.f64, x, a4, a6, m.batch, N, ops::kTheta13, s, s_max, st);
        // U = X [X⁶ (b13 X⁶ + b11 X⁴ + b9 X²) + b7 X⁶ + b5 X⁴ + b3 X² + b1 I], X = 2⁻ˢA
        combine(nullptr, tt, {b[13], b[11], b[9], 0}, 6);
        mul(a6, tt, u);
        combine(u, u, {b[7], b[5], b[3], b[1]}, 1);
        mul(x, u, tt);  // U
        // V = X⁶ (b12 X⁶ + b10 X⁴ + b8 X²) + b6 X⁶ + b4 X⁴ + b2 X² + b0 I
        combine(nullptr, v, {b[12], b[10], b[8], 0}, 6);
        mul(a6, v, u);
        combine(u, u, {b[6], b[4], b[2], b[0]}, 0);  // V
        // R = (V − U)⁻¹ (V + U), solved on the buffers as they lie (they commute)
        launch_sum_diff(t.f64, u, tt, out, q, total, st);
        factor_in_place(a, f, t, m, true);
        solve_factored(a, f, t, m, CUBLAS_OP_N, out, N);
        int squarings = 0;
        check(cudaMemcpyAsync(&squarings, s_max, sizeof(int), cudaMemcpyDeviceToHost, st), "reading matrix_exp's scaling");
        check(cudaStreamSynchronize(st), "waiting for matrix_exp's scaling");
        for (int step = 0; step < squarings; ++step) {
          launch_batched_square(t.f64, out, out, tt, m.batch, N, s, step, st);
          copy_async(out, tt, mat, st);
        }
      },
      l.bytes, "cuSOLVER getrf + getrs, batched products");
}

// The general eigendecomposition in complex double for every input type (as the cpu computes
// it): the matrix transposed into column-major c128, cuSOLVER's geev (right vectors only), then
// util/eig_order's canonical form into the outputs.
Kernel make_eig(const ir::Node& n, const ir::Graph& g) {
  Mat m = mat_of(g, n.inputs[0]);
  int64_t N = m.rows;
  Dt dt = to_dt(in_type(g, n, 0).dtype);
  bool c64 = out_type(g, n, 0).dtype == DType::c64;
  size_t dev = 0, host = 0;
  DnHandle h = dn_handle(nullptr);
  int64_t ld = std::max<int64_t>(N, 1);
  check_solver(cusolver().geev_size(h.handle, h.params, CUSOLVER_EIG_MODE_NOVECTOR, CUSOLVER_EIG_MODE_VECTOR, N, CUDA_C_64F, nullptr, ld, CUDA_C_64F, nullptr,
                                    CUDA_C_64F, nullptr, ld, CUDA_C_64F, nullptr, ld, CUDA_C_64F, &dev, &host),
               "sizing geev");
  size_t mat = static_cast<size_t>(m.batch * N * N) * 16;
  Layout l;
  size_t a_at = l.take(mat), vr_at = l.take(mat), w_at = l.take(static_cast<size_t>(m.batch * N) * 16), order_at = l.take(8 * static_cast<size_t>(m.batch * N)),
         info_at = l.take(sizeof(int) * static_cast<size_t>(m.batch)), work_at = l.take(dev);
  return Kernel(
      [=](const LaunchArgs& a) {
        DnHandle h = dn_handle(a.stream);
        int* info = reinterpret_cast<int*>(at(a, info_at));
        launch_to_c128_transposed(a.in[0].data, dt, at(a, a_at), m.batch, N, a.stream);
        for (int64_t item = 0; item < m.batch; ++item)
          check_solver(cusolver().geev(h.handle, h.params, CUSOLVER_EIG_MODE_NOVECTOR, CUSOLVER_EIG_MODE_VECTOR, N, CUDA_C_64F, item_of(at(a, a_at), item, N * N, 16), ld,
                                       CUDA_C_64F, item_of(at(a, w_at), item, N, 16), CUDA_C_64F, nullptr, ld, CUDA_C_64F, item_of(at(a, vr_at), item, N * N, 16), ld,
                                       CUDA_C_64F, at(a, work_at), dev, host_work(host), host, info + item),
                       "in geev");
        launch_factor_info(info, m.batch, kNotConverged, a.error, a.node_index, a.stream);
        launch_canonical_eig(at(a, w_at), at(a, vr_at), a.out[0].data, a.out[1].data, c64, m.batch, N, reinterpret_cast<int64_t*>(at(a, order_at)), a.stream);
      },
      l.bytes, "cuSOLVER geev");
}

bool claims_eig(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs&) {
  return is_one_of(in[0].dtype, {DType::f32, DType::f64, DType::c64, DType::c128}) && shape_is_static(in[0].shape) && shape_is_static(out[1].shape) &&
         cusolver().error.empty();
}

// f32 and f64 with static shapes.
bool claims_static(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs&) {
  if (in[0].dtype != DType::f32 && in[0].dtype != DType::f64) return false;
  for (const auto& t : in)
    if (!shape_is_static(t.shape)) return false;
  for (const auto& t : out)
    if (!shape_is_static(t.shape)) return false;
  return true;
}
// ... where libcusolver loads
bool claims_dense(Op op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs& a) {
  return claims_static(op, in, out, a) && cusolver().error.empty();
}

}  // namespace

// cuSOLVER's eigen- and singular-value solvers may wait for the device inside the call, which a
// CUDA graph capture does not allow: programs with these ops are not captured.
bool linalg_syncs(Op op) {
  switch (op) {
    case Op::cholesky:
    case Op::lu:
    case Op::solve:
    case Op::inv:
    case Op::slogdet:
    case Op::qr:
    case Op::eigh:
    case Op::svd:
    case Op::matrix_exp:
    case Op::eig: return true;
    default: return false;
  }
}

void register_linalg(KernelTable& t) {
  t[static_cast<size_t>(Op::cholesky)] = {claims_dense, make_cholesky};
  t[static_cast<size_t>(Op::triangular_solve)] = {claims_static, make_triangular_solve};
  t[static_cast<size_t>(Op::lu)] = {claims_dense, make_lu};
  t[static_cast<size_t>(Op::solve)] = {claims_dense, make_solve};
  t[static_cast<size_t>(Op::inv)] = {claims_dense, make_inv};
  t[static_cast<size_t>(Op::slogdet)] = {claims_dense, make_slogdet};
  t[static_cast<size_t>(Op::qr)] = {claims_dense, make_qr};
  t[static_cast<size_t>(Op::eigh)] = {claims_dense, make_eigh};
  t[static_cast<size_t>(Op::svd)] = {claims_dense, make_svd};
  t[static_cast<size_t>(Op::matrix_exp)] = {claims_dense, make_matrix_exp};
  t[static_cast<size_t>(Op::eig)] = {claims_eig, make_eig};
}

}  // namespace rlx::backends::cuda
