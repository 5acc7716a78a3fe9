// Tensors across the language boundary without copies: NumPy arrays through the buffer protocol,
// anything with __dlpack__ (torch, jax, numpy) through DLPack, and rlx.Tensor for what NumPy has
// no type for (bf16).
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "rlx/tensor.h"

namespace rlx::python {

namespace py = pybind11;

// A Python object as an RLX tensor: an rlx.Tensor, a NumPy array (a view when C-contiguous and of
// an RLX dtype; a copy otherwise), an object with __dlpack__ (a view of its memory) or a list of
// numbers. `what` names it in errors.
Tensor to_tensor(const py::handle& obj, const std::string& what);

// An RLX tensor for Python: a NumPy array viewing its memory (the array keeps it alive), or an
// rlx.Tensor where NumPy has no dtype for it (bf16, i4).
py::object from_tensor(const Tensor& t);

// The DLPack capsule of a tensor (CPU memory), and a tensor viewing the memory of a capsule or of
// an object with __dlpack__.
py::capsule to_dlpack(const Tensor& t);
Tensor from_dlpack(const py::handle& obj);

void bind_tensors(py::module_& m);

}  // namespace rlx::python
