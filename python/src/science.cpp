// rlx.krylov: src/science's iterative sparse solvers on NumPy's CSR arrays (scipy.sparse's indptr,
// indices, data), converted once to i64/f64 and solved with the GIL released.
#include <pybind11/numpy.h>

#include "bindings.h"
#include "rlx/error.h"
#include "science/sparse/iterative.h"
#include "util/strings.h"

namespace rlx::python {

namespace {

template <class T>
std::vector<T> vector_of(const py::array& a, const char* what) {
  py::array_t<T, py::array::c_style | py::array::forcecast> c(a);
  if (c.ndim() != 1) throw Error(ErrorKind::invalid_argument, cat("krylov: ", what, " must be one-dimensional, got ", c.ndim(), " dimensions"));
  return std::vector<T>(c.data(), c.data() + c.size());
}

py::dict solve(const py::array& indptr, const py::array& indices, const py::array& data, int64_t cols, const py::array& b, const std::string& method,
               const std::string& preconditioner, double rtol, double atol, int64_t max_iterations, int64_t restart) {
  std::vector<int64_t> ptr = vector_of<int64_t>(indptr, "indptr"), idx = vector_of<int64_t>(indices, "indices");
  std::vector<double> vals = vector_of<double>(data, "data"), rhs = vector_of<double>(b, "b");
  if (ptr.empty()) throw Error(ErrorKind::invalid_argument, "krylov: indptr needs at least one entry");
  if (idx.size() != vals.size() || static_cast<int64_t>(idx.size()) < ptr.back())
    throw Error(ErrorKind::invalid_argument, cat("krylov: indices (", idx.size(), ") and data (", vals.size(), ") must hold indptr[-1] = ", ptr.back(), " entries"));
  science::CsrView a{static_cast<int64_t>(ptr.size()) - 1, cols, ptr.data(), idx.data(), vals.data()};
  science::IterativeOptions o;
  o.method = science::parse_krylov(method);
  o.preconditioner = science::parse_preconditioner(preconditioner);
  o.rtol = rtol;
  o.atol = atol;
  o.max_iterations = max_iterations;
  o.restart = restart;
  science::IterativeResult r;
  {
    py::gil_scoped_release release;
    r = science::solve_iterative(a, rhs, o);
  }
  py::dict out;
  out["x"] = py::array_t<double>(static_cast<py::ssize_t>(r.x.size()), r.x.data());
  out["iterations"] = r.iterations;
  out["residual"] = r.residual;
  out["converged"] = r.converged;
  out["history"] = py::array_t<double>(static_cast<py::ssize_t>(r.history.size()), r.history.data());
  return out;
}

}  // namespace

void bind_science(py::module_& m) {
  m.def("_krylov", &solve, py::arg("indptr"), py::arg("indices"), py::arg("data"), py::arg("cols"), py::arg("b"), py::arg("method"), py::arg("preconditioner"),
        py::arg("rtol"), py::arg("atol"), py::arg("max_iterations"), py::arg("restart"));
}

}  // namespace rlx::python
