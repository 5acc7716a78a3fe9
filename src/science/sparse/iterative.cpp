#include "science/sparse/iterative.h"

#include <cmath>

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::science {

namespace {

using Vec = std::vector<double>;

double dot(const Vec& a, const Vec& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}
double norm(const Vec& a) { return std::sqrt(dot(a, a)); }

// y += alpha x
void axpy(double alpha, const Vec& x, Vec& y) {
  for (size_t i = 0; i < y.size(); ++i) y[i] += alpha * x[i];
}

struct Context {
  const CsrView& a;
  const Vec& b;
  const IterativeOptions& o;
  const Precondition& m;
  double target;  // the absolute residual to reach
  int64_t max_it;
};

IterativeResult cg(const Context& c) {
  size_t n = c.b.size();
  IterativeResult res;
  res.x.assign(n, 0.0);
  Vec r = c.b, z(n), p(n), q(n);
  double bn = norm(c.b);
  c.m.apply(r.data(), z.data());
  p = z;
  double rz = dot(r, z);
  for (int64_t it = 0; it < c.max_it; ++it) {
    double rn = norm(r);
    if (rn <= c.target) break;
    spmv(c.a, p.data(), q.data());
    double pq = dot(p, q);
    if (pq <= 0) throw Error(ErrorKind::invalid_argument, cat("cg: pᵀAp = ", pq, " at iteration ", it, ": the matrix is not positive definite"));
    double alpha = rz / pq;
    axpy(alpha, p, res.x);
    axpy(-alpha, q, r);
    c.m.apply(r.data(), z.data());
    double rz_next = dot(r, z);
    for (size_t i = 0; i < n; ++i) p[i] = z[i] + rz_next / rz * p[i];
    rz = rz_next;
    res.iterations = it + 1;
    res.history.push_back(norm(r) / bn);
  }
  return res;
}

// Right-preconditioned BiCGSTAB (van der Vorst): x = M⁻¹ y, so r stays the true residual.
IterativeResult bicgstab(const Context& c) {
  size_t n = c.b.size();
  IterativeResult res;
  res.x.assign(n, 0.0);
  Vec r = c.b, r0 = c.b, p(n, 0.0), v(n, 0.0), s(n), t(n), ph(n), sh(n);
  double bn = norm(c.b), rho = 1, alpha = 1, omega = 1;
  for (int64_t it = 0; it < c.max_it; ++it) {
    if (norm(r) <= c.target) break;
    double rho_next = dot(r0, r);
    if (rho_next == 0) throw Error(ErrorKind::runtime, cat("bicgstab: breakdown (r₀ᵀr = 0) at iteration ", it, "; try gmres"));
    double beta = rho_next / rho * alpha / omega;
    for (size_t i = 0; i < n; ++i) p[i] = r[i] + beta * (p[i] - omega * v[i]);
    c.m.apply(p.data(), ph.data());
    spmv(c.a, ph.data(), v.data());
    alpha = rho_next / dot(r0, v);
    for (size_t i = 0; i < n; ++i) s[i] = r[i] - alpha * v[i];
    axpy(alpha, ph, res.x);
    rho = rho_next;
    res.iterations = it + 1;
    if (norm(s) <= c.target) {
      r = s;
      res.history.push_back(norm(r) / bn);
      break;
    }
    c.m.apply(s.data(), sh.data());
    spmv(c.a, sh.data(), t.data());
    double tt = dot(t, t);
    omega = tt > 0 ? dot(t, s) / tt : 0;
    axpy(omega, sh, res.x);
    for (size_t i = 0; i < n; ++i) r[i] = s[i] - omega * t[i];
    res.history.push_back(norm(r) / bn);
    if (omega == 0) throw Error(ErrorKind::runtime, cat("bicgstab: breakdown (ω = 0) at iteration ", it, "; try gmres"));
  }
  return res;
}

// Right-preconditioned GMRES(restart): Arnoldi with modified Gram–Schmidt, the least-squares
// problem kept triangular by Givens rotations, whose last entry is the residual norm.
IterativeResult gmres(const Context& c) {
  size_t n = c.b.size();
  int64_t m = std::max<int64_t>(1, c.o.restart);
  IterativeResult res;
  res.x.assign(n, 0.0);
  double bn = norm(c.b);
  Vec r = c.b, w(n), z(n);
  std::vector<Vec> v(static_cast<size_t>(m + 1), Vec(n));
  std::vector<Vec> h(static_cast<size_t>(m + 1), Vec(static_cast<size_t>(m), 0.0));
  Vec cs(static_cast<size_t>(m)), sn(static_cast<size_t>(m)), g(static_cast<size_t>(m + 1));
  int64_t it = 0;
  while (it < c.max_it) {
    double beta = norm(r);
    if (beta <= c.target) break;
    for (size_t i = 0; i < n; ++i) v[0][i] = r[i] / beta;
    std::fill(g.begin(), g.end(), 0.0);
    g[0] = beta;
    int64_t k = 0;
    for (; k < m && it < c.max_it; ++k, ++it) {
      c.m.apply(v[static_cast<size_t>(k)].data(), z.data());
      spmv(c.a, z.data(), w.data());
      for (int64_t j = 0; j <= k; ++j) {
        double hj = dot(w, v[static_cast<size_t>(j)]);
        h[static_cast<size_t>(j)][static_cast<size_t>(k)] = hj;
        axpy(-hj, v[static_cast<size_t>(j)], w);
      }
      double hk = norm(w);
      h[static_cast<size_t>(k + 1)][static_cast<size_t>(k)] = hk;
      if (hk > 0)
        for (size_t i = 0; i < n; ++i) v[static_cast<size_t>(k + 1)][i] = w[i] / hk;
      for (int64_t j = 0; j < k; ++j) {  // earlier rotations on the new column
        double a = h[static_cast<size_t>(j)][static_cast<size_t>(k)], b = h[static_cast<size_t>(j + 1)][static_cast<size_t>(k)];
        h[static_cast<size_t>(j)][static_cast<size_t>(k)] = cs[static_cast<size_t>(j)] * a + sn[static_cast<size_t>(j)] * b;
        h[static_cast<size_t>(j + 1)][static_cast<size_t>(k)] = -sn[static_cast<size_t>(j)] * a + cs[static_cast<size_t>(j)] * b;
      }
      double a = h[static_cast<size_t>(k)][static_cast<size_t>(k)], b = h[static_cast<size_t>(k + 1)][static_cast<size_t>(k)], d = std::hypot(a, b);
      cs[static_cast<size_t>(k)] = d > 0 ? a / d : 1;
      sn[static_cast<size_t>(k)] = d > 0 ? b / d : 0;
      h[static_cast<size_t>(k)][static_cast<size_t>(k)] = d;
      h[static_cast<size_t>(k + 1)][static_cast<size_t>(k)] = 0;
      g[static_cast<size_t>(k + 1)] = -sn[static_cast<size_t>(k)] * g[static_cast<size_t>(k)];
      g[static_cast<size_t>(k)] *= cs[static_cast<size_t>(k)];
      res.history.push_back(std::fabs(g[static_cast<size_t>(k + 1)]) / bn);
      if (std::fabs(g[static_cast<size_t>(k + 1)]) <= c.target || hk == 0) {
        ++k;
        ++it;
        break;
      }
    }
    // y from the triangular system, then x += M⁻¹ V y.
    Vec y(static_cast<size_t>(k));
    for (int64_t i = k - 1; i >= 0; --i) {
      double s = g[static_cast<size_t>(i)];
      for (int64_t j = i + 1; j < k; ++j) s -= h[static_cast<size_t>(i)][static_cast<size_t>(j)] * y[static_cast<size_t>(j)];
      y[static_cast<size_t>(i)] = s / h[static_cast<size_t>(i)][static_cast<size_t>(i)];
    }
    std::fill(w.begin(), w.end(), 0.0);
    for (int64_t j = 0; j < k; ++j) axpy(y[static_cast<size_t>(j)], v[static_cast<size_t>(j)], w);
    c.m.apply(w.data(), z.data());
    axpy(1, z, res.x);
    spmv(c.a, res.x.data(), w.data());
    for (size_t i = 0; i < n; ++i) r[i] = c.b[i] - w[i];
  }
  res.iterations = it;
  return res;
}

}  // namespace

Krylov parse_krylov(const std::string& name) {
  if (name == "cg") return Krylov::cg;
  if (name == "bicgstab") return Krylov::bicgstab;
  if (name == "gmres") return Krylov::gmres;
  throw Error(ErrorKind::invalid_argument, cat("unknown iterative method '", name, "' (cg, bicgstab, gmres)"));
}

const char* krylov_name(Krylov k) {
  switch (k) {
    case Krylov::cg: return "cg";
    case Krylov::bicgstab: return "bicgstab";
    case Krylov::gmres: return "gmres";
  }
  return "?";
}

IterativeResult solve_iterative(const CsrView& a, const std::vector<double>& b, const IterativeOptions& o) {
  const char* name = krylov_name(o.method);
  if (a.rows != a.cols) throw Error(ErrorKind::invalid_argument, cat(name, ": the matrix must be square, got ", a.rows, " × ", a.cols));
  if (static_cast<int64_t>(b.size()) != a.rows) throw Error(ErrorKind::invalid_argument, cat(name, ": b has ", b.size(), " entries, the matrix ", a.rows, " rows"));
  if (!(o.rtol >= 0) || !(o.atol >= 0) || o.max_iterations < 0) throw Error(ErrorKind::invalid_argument, cat(name, ": tolerances and max_iterations must not be negative"));
  a.check(name);
  std::unique_ptr<Precondition> m = make_preconditioner(o.preconditioner, a);
  double target = std::max(o.rtol * norm(b), o.atol);
  Context c{a, b, o, *m, target, o.max_iterations > 0 ? o.max_iterations : 10 * std::max<int64_t>(1, a.rows)};
  IterativeResult res = o.method == Krylov::cg ? cg(c) : o.method == Krylov::bicgstab ? bicgstab(c) : gmres(c);
  Vec ax(b.size());
  spmv(a, res.x.data(), ax.data());
  for (size_t i = 0; i < ax.size(); ++i) ax[i] = b[i] - ax[i];
  double bn = norm(b);
  res.residual = bn > 0 ? norm(ax) / bn : norm(ax);
  // Reached: the tracked residual met the target (the recomputed one may differ by rounding).
  double tracked = res.history.empty() ? 1.0 : res.history.back();
  res.converged = norm(ax) <= target || (bn > 0 && tracked * bn <= target) || bn == 0;
  return res;
}

}  // namespace rlx::science
