// `import rlx`'s native part: errors, tensors, the graph builder, sessions, models, training, science.
#include "bindings.h"

#include <algorithm>
#include <string>

#include "rlx/error.h"

namespace rlx::python {

void bind_errors(py::module_& m) {
  // rlx::Error arrives as rlx.Error (a RuntimeError) with its kind: "invalid_argument", …
  static py::exception<Error> error(m, "Error", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      py::object ex = py::reinterpret_borrow<py::object>(error.ptr())(e.what());  // an instance, to carry .kind
      std::string kind = error_kind_name(e.kind());  // "invalid argument" → "invalid_argument"
      std::replace(kind.begin(), kind.end(), ' ', '_');
      ex.attr("kind") = kind;
      PyErr_SetObject(error.ptr(), ex.ptr());
    }
  });
}

}  // namespace rlx::python

PYBIND11_MODULE(_rlx, m) {
  m.doc() = "RLX: an ML compiler and runtime (native part; import rlx)";
  using namespace rlx::python;
  bind_errors(m);
  bind_tensors(m);
  bind_graph(m);
  bind_session(m);
  bind_models(m);
  bind_training(m);
  bind_science(m);
}
