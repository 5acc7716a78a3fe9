// The graph builder: rlx.Graph and its values, and any op of the op table by name (the Python
// layer makes a function and a Value method of each, from op_table()).
#include "bindings.h"

#include "ir/op.h"
#include "ir/text.h"
#include "rlx/error.h"
#include "rlx/ops.h"
#include "tensors.h"
#include "util/strings.h"

namespace rlx::python {

namespace {

Shape shape_from_python(const py::sequence& dims) {
  Shape s;
  for (const auto& d : dims) {
    if (py::isinstance<py::str>(d)) s.push_back(Dim::parse(d.cast<std::string>()));
    else s.push_back(Dim(d.cast<int64_t>()));
  }
  return s;
}

py::list shape_to_python(const Shape& s) {
  py::list out;
  for (const Dim& d : s) {
    if (auto v = d.try_value()) out.append(*v);
    else out.append(d.str());
  }
  return out;
}

DType dtype_arg(const std::string& name) {
  auto d = dtype_from_name(name);
  if (!d) throw Error(ErrorKind::invalid_argument, cat("unknown dtype '", name, "' (f32, f16, bf16, f64, i32, i64, u8, bool, …)"));
  return *d;
}

}  // namespace

void bind_graph(py::module_& m) {
  py::class_<Value>(m, "_Value")
      .def_property_readonly("dtype", [](const Value& v) { return std::string(dtype_name(v.dtype())); })
      .def_property_readonly("shape", [](const Value& v) { return shape_to_python(v.shape()); });

  py::class_<Graph>(m, "_Graph")
      .def(py::init<std::string>(), py::arg("name") = "main")
      .def("input", [](Graph& g, const std::string& name, const std::string& dtype, const py::sequence& shape) {
             return g.input(name, dtype_arg(dtype), shape_from_python(shape));
           })
      .def("constant", [](Graph& g, const py::object& value) { return constant(g, to_tensor(value, "constant").contiguous().clone()); })
      .def("set_outputs", &Graph::set_outputs)
      .def("inputs", &Graph::inputs)
      .def("outputs", &Graph::outputs)
      .def("donate", &Graph::donate)
      .def("to_text", &Graph::to_text)
      .def("verify", &Graph::verify)
      .def_static("from_text", [](const std::string& text, const std::string& source) { return Graph::from_text(text, source); }, py::arg("text"),
                  py::arg("source") = "<python>")
      .def_static("load", &Graph::load)
      .def("input_names", [](const Graph& g) {
        std::vector<std::string> out;
        for (ir::ValueId v : g.ir().inputs()) out.push_back(g.ir().value(v).name);
        return out;
      });

  m.def("_op", [](const std::string& name, const std::vector<Value>& inputs, const std::string& attrs) { return op(name, inputs, attrs); },
        py::arg("name"), py::arg("inputs"), py::arg("attrs") = "");

  // The op table: name, level, input counts, outputs, and attribute names with their types.
  m.def("op_table", [] {
    py::list out;
    for (int i = 0; i < ir::kNumOps; ++i) {
      const ir::OpInfo& info = ir::op_info(static_cast<ir::Op>(i));
      py::list attrs;
      for (const auto& a : info.attrs) attrs.append(py::make_tuple(a.name, ir::attr_type_name(a.type), a.optional || !a.default_text.empty()));
      out.append(py::dict(py::arg("name") = info.name, py::arg("level") = ir::level_name(info.level), py::arg("min_inputs") = info.min_inputs,
                          py::arg("max_inputs") = info.max_inputs, py::arg("outputs") = info.num_outputs, py::arg("attrs") = attrs));
    }
    return out;
  });
}

}  // namespace rlx::python
