// Preconditioners for the Krylov solvers: z = M⁻¹ r for an M close to A and cheap to invert.
// Jacobi: M = diag(A). Incomplete Cholesky IC(0): M = L Lᵀ with L on A's lower-triangle pattern
// (no fill), for symmetric positive definite A — it fails with an error naming the row where a
// pivot is not positive (the matrix is not SPD, or IC(0) breaks down on it).
#pragma once
#include <memory>
#include <string>

#include "science/sparse/csr.h"

namespace rlx::science {

enum class Preconditioner { none, jacobi, ichol };
Preconditioner parse_preconditioner(const std::string& name);  // "none", "jacobi", "ichol"
const char* preconditioner_name(Preconditioner p);

class Precondition {
 public:
  virtual ~Precondition() = default;
  virtual void apply(const double* r, double* z) const = 0;
};

std::unique_ptr<Precondition> make_preconditioner(Preconditioner kind, const CsrView& a);

}  // namespace rlx::science
