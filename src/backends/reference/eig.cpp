// The general eigendecomposition by the textbook, in complex<double>: Householder reduction to
// Hessenberg form, then the shifted QR algorithm (Wilkinson shifts, Givens rotations applied to
// the whole matrix so that A = Q T Qᴴ holds throughout) down to the upper triangular Schur form
// T; each eigenvector solves (T − t_kk I) y = 0 by back substitution and is Q y. Independent of
// LAPACK's geev; util/eig_order.h puts both in one canonical form.
#include <cmath>

#include "backends/reference/kernels.h"
#include "rlx/error.h"
#include "util/eig_order.h"
#include "util/strings.h"

namespace rlx::backends::reference {

namespace {

using ir::Op;

struct Matrix {
  int64_t n;
  std::vector<c128> a;
  c128& operator()(int64_t i, int64_t j) { return a[static_cast<size_t>(i * n + j)]; }
};

// T ← H T H and Q ← Q H for the reflector H = I − 2 u uᴴ (u zero before `from`).
void reflect(Matrix& t, Matrix& q, const std::vector<c128>& u, int64_t from) {
  int64_t n = t.n;
  for (int64_t j = 0; j < n; ++j) {  // rows: T ← H T
    c128 s{};
    for (int64_t i = from; i < n; ++i) s += std::conj(u[static_cast<size_t>(i)]) * t(i, j);
    for (int64_t i = from; i < n; ++i) t(i, j) -= 2.0 * u[static_cast<size_t>(i)] * s;
  }
  for (Matrix* m : {&t, &q})  // columns: T ← T H, Q ← Q H
    for (int64_t i = 0; i < n; ++i) {
      c128 s{};
      for (int64_t j = from; j < n; ++j) s += (*m)(i, j) * u[static_cast<size_t>(j)];
      for (int64_t j = from; j < n; ++j) (*m)(i, j) -= 2.0 * s * std::conj(u[static_cast<size_t>(j)]);
    }
}

void hessenberg(Matrix& t, Matrix& q) {
  int64_t n = t.n;
  for (int64_t k = 0; k + 2 < n; ++k) {
    double norm = 0;
    for (int64_t i = k + 1; i < n; ++i) norm += std::norm(t(i, k));
    norm = std::sqrt(norm);
    if (norm == 0) continue;
    c128 x0 = t(k + 1, k);
    c128 alpha = (std::abs(x0) > 0 ? x0 / std::abs(x0) : c128(1)) * -norm;
    std::vector<c128> u(static_cast<size_t>(n));
    for (int64_t i = k + 1; i < n; ++i) u[static_cast<size_t>(i)] = t(i, k);
    u[static_cast<size_t>(k + 1)] -= alpha;
    double un = 0;
    for (int64_t i = k + 1; i < n; ++i) un += std::norm(u[static_cast<size_t>(i)]);
    un = std::sqrt(un);
    if (un == 0) continue;
    for (auto& x : u) x /= un;
    reflect(t, q, u, k + 1);
  }
}

bool negligible(Matrix& t, int64_t i) {
  return std::abs(t(i, i - 1)) <= 1e-15 * (std::abs(t(i, i)) + std::abs(t(i - 1, i - 1)));
}

// Hessenberg T → upper triangular, Q accumulating every rotation.
void schur(Matrix& t, Matrix& q, int64_t item) {
  int64_t n = t.n;
  int64_t m = n - 1, iterations = 0;
  while (m > 0) {
    if (negligible(t, m)) {
      t(m, m - 1) = 0;
      --m;
      iterations = 0;
      continue;
    }
    if (++iterations > 60 * n)
      throw Error(ErrorKind::invalid_argument, cat("mir.eig: the QR algorithm did not converge for matrix ", item, " of the batch"));
    int64_t l = m;
    while (l > 0 && !negligible(t, l)) --l;
    if (l > 0) t(l, l - 1) = 0;
    // Wilkinson's shift: the eigenvalue of the trailing 2×2 nearer its last entry (an exceptional
    // shift every 11 iterations breaks cycles)
    c128 a = t(m - 1, m - 1), b = t(m - 1, m), c = t(m, m - 1), d = t(m, m);
    c128 half = (a - d) / 2.0, root = std::sqrt(half * half + b * c);
    c128 mu1 = d - b * c / (half + root), mu2 = d - b * c / (half - root);
    c128 mu = std::abs(half + root) > std::abs(half - root) ? mu1 : mu2;
    if (!std::isfinite(mu.real()) || !std::isfinite(mu.imag())) mu = d;
    if (iterations % 11 == 10) mu = d + std::abs(c);
    for (int64_t i = l; i <= m; ++i) t(i, i) -= mu;
    std::vector<std::pair<double, c128>> rotations;
    for (int64_t k = l; k < m; ++k) {  // Gᵏ zeroes T[k+1][k]: [c s; −s̄ c] with c real
      c128 x = t(k, k), y = t(k + 1, k);
      double r = std::hypot(std::abs(x), std::abs(y));
      double cs = r > 0 ? std::abs(x) / r : 1;
      c128 sn = r == 0 ? c128(0) : std::abs(x) > 0 ? (x / std::abs(x)) * std::conj(y) / r : std::conj(y) / std::abs(y);
      rotations.push_back({cs, sn});
      for (int64_t j = 0; j < n; ++j) {
        c128 p = t(k, j), s = t(k + 1, j);
        t(k, j) = cs * p + sn * s;
        t(k + 1, j) = -std::conj(sn) * p + cs * s;
      }
    }
    for (int64_t k = l; k < m; ++k) {  // T ← T Gᴴ, Q ← Q Gᴴ
      auto [cs, sn] = rotations[static_cast<size_t>(k - l)];
      for (Matrix* mm : {&t, &q})
        for (int64_t i = 0; i < n; ++i) {
          c128 p = (*mm)(i, k), s = (*mm)(i, k + 1);
          (*mm)(i, k) = p * cs + s * std::conj(sn);
          (*mm)(i, k + 1) = -p * sn + s * cs;
        }
    }
    for (int64_t i = l; i <= m; ++i) t(i, i) += mu;
  }
}

void eig(const KernelArgs& a) {
  const HostView& x = a.in[0];
  int64_t n = x.shape.back(), batch = n ? x.numel / (n * n) : 0;
  for (int64_t item = 0; item < batch; ++item) {
    Matrix t{n, std::vector<c128>(static_cast<size_t>(n * n))}, q{n, std::vector<c128>(static_cast<size_t>(n * n))};
    double scale = 0;
    for (int64_t i = 0; i < n * n; ++i) {
      t.a[static_cast<size_t>(i)] = rc(x, item * n * n + i);
      scale = std::max(scale, std::abs(t.a[static_cast<size_t>(i)]));
    }
    for (int64_t i = 0; i < n; ++i) q(i, i) = 1;
    hessenberg(t, q);
    schur(t, q, item);
    std::vector<c128> w(static_cast<size_t>(n)), v(static_cast<size_t>(n * n));
    double tiny = 1e-300 + 1e-15 * scale;
    for (int64_t k = 0; k < n; ++k) {
      c128 lambda = t(k, k);
      w[static_cast<size_t>(k)] = lambda;
      std::vector<c128> y(static_cast<size_t>(n));
      y[static_cast<size_t>(k)] = 1;
      for (int64_t j = k - 1; j >= 0; --j) {
        c128 s{};
        for (int64_t m = j + 1; m <= k; ++m) s += t(j, m) * y[static_cast<size_t>(m)];
        c128 den = t(j, j) - lambda;
        if (std::abs(den) < tiny) den = tiny;
        y[static_cast<size_t>(j)] = -s / den;
      }
      for (int64_t i = 0; i < n; ++i) {
        c128 s{};
        for (int64_t j = 0; j <= k; ++j) s += q(i, j) * y[static_cast<size_t>(j)];
        v[static_cast<size_t>(i * n + k)] = s;
      }
    }
    canonical_eig(w.data(), v.data(), n);
    for (int64_t k = 0; k < n; ++k) wc(a.out[0], item * n + k, w[static_cast<size_t>(k)]);
    for (int64_t i = 0; i < n * n; ++i) wc(a.out[1], item * n * n + i, v[static_cast<size_t>(i)]);
  }
}

}  // namespace

void register_eig(KernelTable& t) { t[static_cast<size_t>(Op::eig)] = eig; }

}  // namespace rlx::backends::reference
