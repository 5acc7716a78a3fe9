// src/science's Krylov solvers: each method and preconditioner reaches the direct solution of a
// Poisson problem (and GMRES/BiCGSTAB of a non-symmetric convection–diffusion one), stronger
// preconditioners take fewer iterations, and bad input is a named error — never a wrong answer.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>

#include "rlx/error.h"
#include "rlx/ops.h"
#include "rlx/session.h"
#include "science/sparse/iterative.h"

using namespace rlx;
using namespace rlx::science;

namespace {

// x with A x = b by csr_solve on the reference device (the densified oracle).
std::vector<double> direct(const Csr& a, const std::vector<double>& b) {
  int64_t n = a.rows, nnz = static_cast<int64_t>(a.values.size());
  Graph g("direct");
  Value ptr = g.input("ptr", DType::i64, {Dim(n + 1)});
  Value cols = g.input("cols", DType::i64, {Dim(nnz)});
  Value vals = g.input("vals", DType::f64, {Dim(nnz)});
  Value rhs = g.input("b", DType::f64, {Dim(n), Dim(1)});
  g.set_outputs(op("csr_solve", {ptr, cols, vals, rhs}, "method=lu"));
  Tensor x = Session("reference").compile(g).run({Tensor::from_vector(a.row_ptr, {n + 1}), Tensor::from_vector(a.col_idx, {nnz}), Tensor::from_vector(a.values, {nnz}),
                                                 Tensor::from_vector(b, {n, 1})})[0];
  std::vector<double> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out[static_cast<size_t>(i)] = x.at_f64(i);
  return out;
}

// −Δu + c·∂u/∂x on a grid (upwind): not symmetric.
Csr convection_diffusion(int64_t n, double c) {
  Csr a = poisson_2d(n);
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t p = a.row_ptr[static_cast<size_t>(i)]; p < a.row_ptr[static_cast<size_t>(i) + 1]; ++p) {
      if (a.col_idx[static_cast<size_t>(p)] == i) a.values[static_cast<size_t>(p)] += c;
      if (a.col_idx[static_cast<size_t>(p)] == i - 1) a.values[static_cast<size_t>(p)] -= c;
    }
  return a;
}

std::vector<double> rhs(int64_t n) {
  std::vector<double> b(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) b[static_cast<size_t>(i)] = std::sin(0.37 * static_cast<double>(i)) + 0.5;
  return b;
}

double max_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

}  // namespace

TEST(Iterative, EveryMethodReachesTheDirectSolution) {
  Csr a = poisson_2d(12);
  std::vector<double> b = rhs(a.rows), x = direct(a, b);
  std::map<std::string, int64_t> iterations;
  for (Krylov k : {Krylov::cg, Krylov::bicgstab, Krylov::gmres})
    for (Preconditioner p : {Preconditioner::none, Preconditioner::jacobi, Preconditioner::ichol}) {
      IterativeOptions o;
      o.method = k;
      o.preconditioner = p;
      o.rtol = 1e-12;
      IterativeResult r = solve_iterative(a.view(), b, o);
      std::string name = std::string(krylov_name(k)) + "+" + preconditioner_name(p);
      EXPECT_TRUE(r.converged) << name;
      EXPECT_LT(r.residual, 1e-11) << name;
      EXPECT_LT(max_diff(r.x, x), 1e-9) << name;
      EXPECT_EQ(static_cast<int64_t>(r.history.size()), r.iterations) << name;
      iterations[name] = r.iterations;
    }
  // IC(0) shortens CG on the Poisson matrix (Jacobi is a uniform scaling here: no change).
  EXPECT_LT(iterations["cg+ichol"], iterations["cg+none"]);
  EXPECT_LT(iterations["gmres+ichol"], iterations["gmres+none"]);
}

TEST(Iterative, NonSymmetricSystemsNeedGmresOrBicgstab) {
  Csr a = convection_diffusion(10, 1.5);
  std::vector<double> b = rhs(a.rows), x = direct(a, b);
  for (Krylov k : {Krylov::bicgstab, Krylov::gmres}) {
    IterativeOptions o;
    o.method = k;
    o.preconditioner = Preconditioner::jacobi;
    o.restart = 20;
    IterativeResult r = solve_iterative(a.view(), b, o);
    EXPECT_TRUE(r.converged) << krylov_name(k);
    EXPECT_LT(max_diff(r.x, x), 1e-8) << krylov_name(k);
  }
}

TEST(Iterative, AnIterationLimitIsReportedNotHidden) {
  Csr a = poisson_2d(20);
  IterativeOptions o;
  o.max_iterations = 3;
  IterativeResult r = solve_iterative(a.view(), rhs(a.rows), o);
  EXPECT_FALSE(r.converged);
  EXPECT_EQ(r.iterations, 3);
  EXPECT_GT(r.residual, 1e-3);
}

TEST(Iterative, BadInputIsANamedError) {
  Csr a = poisson_2d(4);
  std::vector<double> b = rhs(a.rows);
  auto expect_error = [](const std::function<void()>& f, const std::string& needle) {
    try {
      f();
      ADD_FAILURE() << "no error (expected one mentioning '" << needle << "')";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  IterativeOptions o;
  expect_error([&] { solve_iterative(a.view(), std::vector<double>(3), o); }, "b has 3 entries");
  Csr bad = a;
  bad.col_idx[5] = 99;
  expect_error([&] { solve_iterative(bad.view(), b, o); }, "col_idx[5] = 99");
  Csr indefinite = a;
  for (size_t p = 0; p < indefinite.values.size(); ++p) indefinite.values[p] = -indefinite.values[p];
  o.preconditioner = Preconditioner::ichol;
  expect_error([&] { solve_iterative(indefinite.view(), b, o); }, "not positive");
  o.preconditioner = Preconditioner::none;
  expect_error([&] { solve_iterative(indefinite.view(), b, o); }, "not positive definite");
  expect_error([] { parse_krylov("sor"); }, "unknown iterative method 'sor'");
}
