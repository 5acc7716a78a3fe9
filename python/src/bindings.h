// The parts of the `_rlx` extension module, one file each.
#pragma once
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace rlx::python {

namespace py = pybind11;

void bind_errors(py::module_& m);
void bind_tensors(py::module_& m);
void bind_graph(py::module_& m);
void bind_session(py::module_& m);
void bind_models(py::module_& m);
void bind_training(py::module_& m);
void bind_science(py::module_& m);

}  // namespace rlx::python
