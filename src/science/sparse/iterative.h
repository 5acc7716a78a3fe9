// Krylov solvers for A x = b on a CSR matrix, host-side in f64: conjugate gradients (symmetric
// positive definite A), BiCGSTAB and restarted GMRES (any nonsingular A), each with a
// preconditioner. They stop when ‖b − A x‖ ≤ max(rtol·‖b‖, atol), or after max_iterations and say
// so (converged = false) — never silently.
#pragma once
#include <string>
#include <vector>

#include "science/sparse/csr.h"
#include "science/sparse/preconditioner.h"

namespace rlx::science {

enum class Krylov { cg, bicgstab, gmres };
Krylov parse_krylov(const std::string& name);  // "cg", "bicgstab", "gmres"
const char* krylov_name(Krylov k);

struct IterativeOptions {
  Krylov method = Krylov::cg;
  Preconditioner preconditioner = Preconditioner::none;
  double rtol = 1e-10, atol = 0;
  int64_t max_iterations = 0;  // 0: 10 · n
  int64_t restart = 50;        // GMRES's Krylov space dimension before a restart
};

struct IterativeResult {
  std::vector<double> x;
  int64_t iterations = 0;        // matrix–vector products' iterations (BiCGSTAB counts two per)
  double residual = 0;           // ‖b − A x‖ / ‖b‖, recomputed from x at the end
  bool converged = false;       // the tracked residual reached the target
  std::vector<double> history;   // the relative residual the method tracked, one per iteration
};

// Solves A x = b from x = 0. Errors (rlx::Error, invalid_argument) for a malformed or non-square A,
// a b of the wrong length, or a preconditioner that cannot be built (e.g. IC(0) breakdown).
IterativeResult solve_iterative(const CsrView& a, const std::vector<double>& b, const IterativeOptions& options);

}  // namespace rlx::science
