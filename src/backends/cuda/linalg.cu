// The small kernels around cuSOLVER's factorizations (linalg.cpp): triangles, the IR's sign
// conventions (ops.def: R's diagonal non-negative, each vector's entry of largest magnitude
// positive), pivots, log-determinants, the triangular solve, and the factorizations' failures
// recorded in the error word. Batches of small matrices: a thread a matrix, column or vector.
#include "backends/cuda/complex.cuh"

namespace rlx::backends::cuda {

namespace {

template <class F>
void by_real(bool f64, F&& f) {
  if (f64) f(double{});
  else f(float{});
}

// Zeroes the row-major upper triangle (j > i) of each n × n matrix.
template <class T>
__global__ void lower_triangle_kernel(T* x, int64_t batch, int64_t n) {
  RLX_AFTER_PRODUCERS();
  RLX_GRID_STRIDE(g, batch * n * n) {
    int64_t j = g % n, i = (g / n) % n;
    if (j > i) x[g] = T(0);
  }
}

// Column c of each rows × cols matrix x flipped (and row c of y, cols y_cols) unless its entry
// of largest magnitude — the first on ties — is positive.
template <class T>
__global__ void positive_columns_kernel(T* x, int64_t batch, int64_t rows, int64_t cols, T* y, int64_t y_rows, int64_t y_cols) {
  RLX_AFTER_PRODUCERS();
  RLX_GRID_STRIDE(g, batch * cols) {
    int64_t c = g % cols, item = g / cols;
    T* m = x + item * rows * cols;
    int64_t at = 0;
    for (int64_t i = 1; i < rows; ++i)
      if (fabs(m[i * cols + c]) > fabs(m[at * cols + c])) at = i;
    if (m[at * cols + c] >= 0) continue;
    for (int64_t i = 0; i < rows; ++i) m[i * cols + c] = -m[i * cols + c];
    if (y) {
      T* row = y + item * y_rows * y_cols + c * y_cols;
      for (int64_t j = 0; j < y_cols; ++j) row[j] = -row[j];
    }
  }
}

// R [k, n] row-major read off geqrf's column-major m × n factor, then row i of R and column i of
// Q [m, k] negated where R's diagonal entry is negative.
template <class T>
__global__ void take_r_kernel(const T* col, T* r, int64_t batch, int64_t m, int64_t n, int64_t k) {
  RLX_AFTER_PRODUCERS();
  RLX_GRID_STRIDE(g, batch * k * n) {
    int64_t j = g % n, i = (g / n) % k, item = g / (n * k);
    r[g] = j >= i ? col[item * m * n + j * m + i] : T(0);
  }
}
template <class T>
__global__ void qr_signs_kernel(T* q, T* r, int64_t batch, int64_t m, int64_t n, int64_t k) {
  RLX_AFTER_PRODUCERS();
  RLX_GRID_STRIDE(g, batch * k) {
    int64_t i = g % k, item = g / k;
    T* ri = r + item * k * n + i * n;
    if (!(ri[i] < 0)) continue;
    for (int64_t j = 0; j < n; ++j) ri[j] = -ri[j];
    T* qi = q + item * m * k;
    for (int64_t row = 0; row < m; ++row) qi[row * k + i] = -qi[row * k + i];
  }
}

// getrf's 1-based row swaps → 0-based i32 swaps and the i64 permutation (row i of P A is row
// perm[i] of A), a thread a matrix.
__global__ void lu_pivots_kernel(const int64_t* ipiv, int32_t* piv, int64_t* perm, int64_t batch, int64_t m, int64_t k) {
  RLX_AFTER_PRODUCERS();
  RLX_GRID_STRIDE(item, batch) {
    int64_t* p = perm + item * m;
    for (int64_t i = 0; i < m; ++i) p[i] = i;
    for (int64_t i = 0; i < k; ++i) {
      int64_t s = ipiv[item * k + i] - 1;
      piv[item * k + i] = static_cast<int32_t>(s);
      int64_t t = p[i];
      p[i] = p[s];
      p[s] = t;
    }
  }
}

// (sign, log |det|) from an n × n LU factor and its pivots; (0, −inf) when a pivot is zero.
template <class T>
__global__ void slogdet_kernel(const T* lu, const int64_t* ipiv, T* sign, T* logabs, int64_t batch, int64_t n) {
  RLX_AFTER_PRODUCERS();
  RLX_GRID_STRIDE(item, batch) {
    const T* a = lu + item * n * n;
    double s = 1, l = 0;
    for (int64_t i = 0; i < n; ++i) {
      double d = a[i * n + i];
      if (ipiv[item * n + i] != i + 1) s = -s;
      s *= d > 0 ? 1 : d < 0 ? -1 : 0;
      l += log(fabs(d));
    }
    if (s == 0) l = -INFINITY;
    sign[item] = static_cast<T>(s);
    logabs[item] = static_cast<T>(l);
  }
}

template <class T>
__global__ void identity_kernel(T* x, int64_t batch, int64_t n) {
  RLX_AFTER_PRODUCERS();
  RLX_GRID_STRIDE(g, batch * n * n) x[g] = (g % (n * n)) % (n + 1) == 0 ? T(1) : T(0);
}

// Each vector v of x solved in place by M v = b, M = op(A) (or op(A)ᵀ for a solve from the
// right) read through `swap`; forward substitution when M is lower triangular.
template <class T>
__global__ void triangular_solve_kernel(const T* a, T* x, int64_t batch, int64_t n, int64_t vectors, int64_t vec_step, int64_t elem_step,
                                        bool swap, bool m_lower, bool unit) {
  RLX_AFTER_PRODUCERS();
  RLX_GRID_STRIDE(g, batch * vectors) {
    int64_t v = g % vectors, item = g / vectors;
    const T* A = a + item * n * n;
    T* b = x + item * n * vectors + v * vec_step;
    auto M = [&](int64_t i, int64_t j) { return swap ? A[j * n + i] : A[i * n + j]; };
    for (int64_t t = 0; t < n; ++t) {
      int64_t i = m_lower ? t : n - 1 - t;
      T s = b[i * elem_step];
      if (m_lower)
        for (int64_t j = 0; j < i; ++j) s -= M(i, j) * b[j * elem_step];
      else
        for (int64_t j = i + 1; j < n; ++j) s -= M(i, j) * b[j * elem_step];
      b[i * elem_step] = unit ? s : s / M(i, i);
    }
  }
}

// The first failed matrix of the batch into the error word: code 2 not positive definite, 3
// singular, 4 did not converge; value = the matrix, bound = cuSOLVER's info.
__global__ void factor_info_kernel(const int* info, int64_t batch, int code, ErrorWord* err, int node) {
  RLX_AFTER_PRODUCERS();
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  for (int64_t item = 0; item < batch; ++item)
    if (info[item] > 0) {
      if (atomicCAS(&err->code, 0, code) == 0) {
        err->node = node;
        err->value = item;
        err->bound = info[item];
      }
      return;
    }
}

// c = a·b for each n × n matrix of the batch (a thread an entry); with `s`, only the matrices
// whose s[item] > step, the others copied from a (matrix_exp's squarings).
template <class T>
__global__ void batched_square_kernel(const T* a, const T* b, T* c, int64_t batch, int64_t n, const int* s, int step) {
  RLX_AFTER_PRODUCERS();
  RLX_GRID_STRIDE(g, batch * n * n) {
    int64_t j = g % n, i = (g / n) % n, item = g / (n * n);
    if (s && s[item] <= step) {
      c[g] = a[g];
      continue;
    }
    const T* ai = a + item * n * n + i * n;
    const T* bj = b + item * n * n + j;
    T acc = 0;
    for (int64_t p = 0; p < n; ++p) acc += ai[p] * bj[p * n];
    c[g] = acc;
  }
}

// matrix_exp's scaling (cpu/matrix_exp.cpp's rule): s = ⌈log2(η/θ₁₃)⌉ for η = min(max(‖A⁴‖₁^¼,
// ‖A⁶‖₁^⅙), ‖A‖₁), else 0; s_max gathers the batch's largest.
template <class T>
__device__ double norm1(const T* a, int64_t n) {
  double best = 0;
  for (int64_t j = 0; j < n; ++j) {
    double col = 0;
    for (int64_t i = 0; i < n; ++i) col += fabs(static_cast<double>(a[i * n + j]));
    best = fmax(best, col);
  }
  return best;
}
template <class T>
__global__ void expm_scaling_kernel(const T* a, const T* a4, const T* a6, int64_t batch, int64_t n, double theta, int* s, int* s_max) {
  RLX_AFTER_PRODUCERS();
  RLX_GRID_STRIDE(item, batch) {
    int64_t off = item * n * n;
    double eta = fmax(pow(norm1(a4 + off, n), 0.25), pow(norm1(a6 + off, n), 1.0 / 6));
    eta = fmin(eta, norm1(a + off, n));
    int k = eta > theta ? static_cast<int>(ceil(log2(eta / theta))) : 0;
    s[item] = k;
    atomicMax(s_max, k);
  }
}

// out = outer·(base + k6·c6·A⁶ + k4·c4·A⁴ + k2·c2·A² + k0·I) with c_j = 2^(−j·s[item]) and outer
// one of 1, c1, c6 (`outer_power` 0, 1, 6); base may be null. The Padé sums, in double.
template <class T>
__global__ void expm_combine_kernel(const T* base, const T* a2, const T* a4, const T* a6, const int* s, T* out, int64_t batch, int64_t n, double k6, double k4,
                                    double k2, double k0, int outer_power) {
  RLX_AFTER_PRODUCERS();
  RLX_GRID_STRIDE(g, batch * n * n) {
    int64_t item = g / (n * n), at = g % (n * n);
    int si = s[item];
    double c2 = ldexp(1.0, -2 * si), c4 = ldexp(1.0, -4 * si), c6 = ldexp(1.0, -6 * si);
    double outer = outer_power == 6 ? c6 : outer_power == 1 ? ldexp(1.0, -si) : 1.0;
    double v = k6 * c6 * a6[g] + k4 * c4 * a4[g] + k2 * c2 * a2[g] + (at % (n + 1) == 0 ? k0 : 0.0);
    if (base) v += base[g];
    out[g] = static_cast<T>(outer * v);
  }
}

// p = v + u, q = v − u
template <class T>
__global__ void sum_diff_kernel(const T* v, const T* u, T* p, T* q, int64_t total) {
  RLX_AFTER_PRODUCERS();
  RLX_GRID_STRIDE(g, total) {
    p[g] = v[g] + u[g];
    q[g] = v[g] - u[g];
  }
}

using Z = Cx<double>;

// eig's input as cuSOLVER's column-major c128: out[item][j·n + i] = in[item][i·n + j].
__global__ void to_c128_transposed_kernel(const void* x, Dt dt, Z* out, int64_t batch, int64_t n) {
  RLX_AFTER_PRODUCERS();
  RLX_GRID_STRIDE(g, batch * n * n) {
    int64_t j = g % n, i = (g / n) % n, item = g / (n * n);
    Z v = load_cx(x, dt, g);
    out[item * n * n + j * n + i] = v;
  }
}

// util/eig_order.cpp's canonical form, a thread a matrix: w sorted by real part then imaginary
// part (real parts within 1e-9·max|w| tie; a stable insertion sort), each column of V (from
// cuSOLVER's column-major vr) scaled to unit length with its largest entry (the first within
// 1e-9) real and positive.
__global__ void canonical_eig_kernel(const Z* w_src, const Z* vr, void* w_out, void* v_out, bool c64, int64_t batch, int64_t n, int64_t* order_scratch) {
  RLX_AFTER_PRODUCERS();
  RLX_GRID_STRIDE(item, batch) {
    const Z* w = w_src + item * n;
    const Z* vs = vr + item * n * n;  // vs[from·n + i]: entry i of vector `from`
    int64_t* order = order_scratch + item * n;
    double scale = 1;
    for (int64_t i = 0; i < n; ++i) scale = fmax(scale, ::cuda::std::abs(w[i]));
    double tie = 1e-9 * scale;
    auto before = [&](int64_t a, int64_t b) {
      if (fabs(w[a].real() - w[b].real()) > tie) return w[a].real() < w[b].real();
      return w[a].imag() < w[b].imag();
    };
    for (int64_t k = 0; k < n; ++k) {
      int64_t j = k;
      while (j > 0 && before(k, order[j - 1])) {
        order[j] = order[j - 1];
        --j;
      }
      order[j] = k;
    }
    auto store = [&](void* base, int64_t at, Z v) {
      if (c64) static_cast<Cx<float>*>(base)[at] = Cx<float>(static_cast<float>(v.real()), static_cast<float>(v.imag()));
      else static_cast<Z*>(base)[at] = v;
    };
    for (int64_t k = 0; k < n; ++k) {
      int64_t from = order[k];
      store(w_out, item * n + k, w[from]);
      const Z* col = vs + from * n;
      double largest = 0, norm = 0;
      for (int64_t i = 0; i < n; ++i) {
        largest = fmax(largest, ::cuda::std::abs(col[i]));
        norm += ::cuda::std::norm(col[i]);
      }
      int64_t at = 0;
      while (at < n && ::cuda::std::abs(col[at]) < largest * (1 - 1e-9)) ++at;
      Z pivot = at < n ? col[at] : Z(1);
      Z f = ::cuda::std::abs(pivot) > 0 ? ::cuda::std::conj(pivot) / (::cuda::std::abs(pivot) * sqrt(norm)) : Z(1);
      for (int64_t i = 0; i < n; ++i) {
        Z e = col[i] * f;
        if (i == at) e = Z(e.real(), 0.0);
        store(v_out, item * n * n + i * n + k, e);
      }
    }
  }
}

}  // namespace

void launch_batched_square(bool f64, const void* a, const void* b, void* c, int64_t batch, int64_t n, const int* s, int step, cudaStream_t st) {
  if (batch * n == 0) return;
  by_real(f64, [&](auto t) {
    using T = decltype(t);
    launch_after(batched_square_kernel<T>, grid_for(batch * n * n), kThreads, 0, st, static_cast<const T*>(a), static_cast<const T*>(b), static_cast<T*>(c), batch, n, s,
                 step);
  });
}

void launch_expm_scaling(bool f64, const void* a, const void* a4, const void* a6, int64_t batch, int64_t n, double theta, int* s, int* s_max, cudaStream_t st) {
  if (batch == 0) return;
  cudaMemsetAsync(s_max, 0, sizeof(int), st);
  by_real(f64, [&](auto t) {
    using T = decltype(t);
    launch_after(expm_scaling_kernel<T>, grid_for(batch), kThreads, 0, st, static_cast<const T*>(a), static_cast<const T*>(a4), static_cast<const T*>(a6), batch, n, theta, s,
                 s_max);
  });
}

void launch_expm_combine(bool f64, const void* base, const void* a2, const void* a4, const void* a6, const int* s, void* out, int64_t batch, int64_t n,
                         const double k[4], int outer_power, cudaStream_t st) {
  if (batch * n == 0) return;
  by_real(f64, [&](auto t) {
    using T = decltype(t);
    launch_after(expm_combine_kernel<T>, grid_for(batch * n * n), kThreads, 0, st, static_cast<const T*>(base), static_cast<const T*>(a2), static_cast<const T*>(a4),
                 static_cast<const T*>(a6), s, static_cast<T*>(out), batch, n, k[0], k[1], k[2], k[3], outer_power);
  });
}

void launch_sum_diff(bool f64, const void* v, const void* u, void* p, void* q, int64_t total, cudaStream_t st) {
  if (total == 0) return;
  by_real(f64, [&](auto t) {
    using T = decltype(t);
    launch_after(sum_diff_kernel<T>, grid_for(total), kThreads, 0, st, static_cast<const T*>(v), static_cast<const T*>(u), static_cast<T*>(p), static_cast<T*>(q), total);
  });
}

void launch_to_c128_transposed(const void* x, Dt dt, void* out, int64_t batch, int64_t n, cudaStream_t s) {
  if (batch * n == 0) return;
  launch_after(to_c128_transposed_kernel, grid_for(batch * n * n), kThreads, 0, s, x, dt, static_cast<Z*>(out), batch, n);
}

void launch_canonical_eig(const void* w, const void* vr, void* w_out, void* v_out, bool c64, int64_t batch, int64_t n, int64_t* order, cudaStream_t s) {
  if (batch * n == 0) return;
  launch_after(canonical_eig_kernel, grid_for(batch, 64), 64, 0, s, static_cast<const Z*>(w), static_cast<const Z*>(vr), w_out, v_out, c64, batch, n, order);
}

void launch_lower_triangle(bool f64, void* x, int64_t batch, int64_t n, cudaStream_t s) {
  if (batch * n == 0) return;
  by_real(f64, [&](auto t) {
    using T = decltype(t);
    launch_after(lower_triangle_kernel<T>, grid_for(batch * n * n), kThreads, 0, s, static_cast<T*>(x), batch, n);
  });
}

void launch_positive_columns(bool f64, void* x, int64_t batch, int64_t rows, int64_t cols, void* y, int64_t y_rows, int64_t y_cols, cudaStream_t s) {
  if (batch * cols == 0) return;
  by_real(f64, [&](auto t) {
    using T = decltype(t);
    launch_after(positive_columns_kernel<T>, grid_for(batch * cols), kThreads, 0, s, static_cast<T*>(x), batch, rows, cols, static_cast<T*>(y), y_rows, y_cols);
  });
}

void launch_take_r(bool f64, const void* col, void* r, int64_t batch, int64_t m, int64_t n, int64_t k, cudaStream_t s) {
  if (batch * k * n == 0) return;
  by_real(f64, [&](auto t) {
    using T = decltype(t);
    launch_after(take_r_kernel<T>, grid_for(batch * k * n), kThreads, 0, s, static_cast<const T*>(col), static_cast<T*>(r), batch, m, n, k);
  });
}

void launch_qr_signs(bool f64, void* q, void* r, int64_t batch, int64_t m, int64_t n, int64_t k, cudaStream_t s) {
  if (batch * k == 0) return;
  by_real(f64, [&](auto t) {
    using T = decltype(t);
    launch_after(qr_signs_kernel<T>, grid_for(batch * k), kThreads, 0, s, static_cast<T*>(q), static_cast<T*>(r), batch, m, n, k);
  });
}

void launch_lu_pivots(const int64_t* ipiv, int32_t* piv, int64_t* perm, int64_t batch, int64_t m, int64_t k, cudaStream_t s) {
  if (batch == 0) return;
  launch_after(lu_pivots_kernel, grid_for(batch), kThreads, 0, s, ipiv, piv, perm, batch, m, k);
}

void launch_slogdet(bool f64, const void* lu, const int64_t* ipiv, void* sign, void* logabs, int64_t batch, int64_t n, cudaStream_t s) {
  if (batch == 0) return;
  by_real(f64, [&](auto t) {
    using T = decltype(t);
    launch_after(slogdet_kernel<T>, grid_for(batch), kThreads, 0, s, static_cast<const T*>(lu), ipiv, static_cast<T*>(sign), static_cast<T*>(logabs), batch, n);
  });
}

void launch_identity(bool f64, void* x, int64_t batch, int64_t n, cudaStream_t s) {
  if (batch * n == 0) return;
  by_real(f64, [&](auto t) {
    using T = decltype(t);
    launch_after(identity_kernel<T>, grid_for(batch * n * n), kThreads, 0, s, static_cast<T*>(x), batch, n);
  });
}

void launch_triangular_solve(bool f64, const void* a, void* x, const TriangularSolve& t, cudaStream_t s) {
  int64_t vectors = t.left ? t.cols : t.rows, vec_step = t.left ? 1 : t.n, elem_step = t.left ? t.cols : 1;
  if (t.batch * vectors * t.n == 0) return;
  bool swap = t.left ? t.transpose : !t.transpose;  // M = op(A) from the left, op(A)ᵀ from the right
  bool m_lower = t.lower != swap;
  by_real(f64, [&](auto tag) {
    using T = decltype(tag);
    launch_after(triangular_solve_kernel<T>, grid_for(t.batch * vectors, 64), 64, 0, s, static_cast<const T*>(a), static_cast<T*>(x), t.batch, t.n, vectors,
                 vec_step, elem_step, swap, m_lower, t.unit);
  });
}

void launch_factor_info(const int* info, int64_t batch, int code, ErrorWord* err, int node, cudaStream_t s) {
  if (batch == 0) return;
  launch_after(factor_info_kernel, 1, 32, 0, s, info, batch, code, err, node);
}

}  // namespace rlx::backends::cuda
