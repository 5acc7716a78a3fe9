// Sessions and compiled models. Compiling and running release the GIL, so one compiled model
// runs from many Python threads at once (CompiledModel::run is thread-safe).
#include <chrono>

#include "bindings.h"
#include "rlx/error.h"
#include "rlx/session.h"
#include "tensors.h"
#include "util/strings.h"

namespace rlx::python {

namespace {

std::vector<Tensor> inputs_in_order(const CompiledModel& m, const py::object& inputs, bool& named) {
  std::vector<std::string> names = m.input_names();
  std::vector<Tensor> out;
  named = py::isinstance<py::dict>(inputs);
  if (named) {
    py::dict d = inputs.cast<py::dict>();
    for (const auto& n : names) {
      if (!d.contains(n)) throw Error(ErrorKind::invalid_argument, cat("missing input '", n, "' (inputs: ", join(names), ")"));
      out.push_back(to_tensor(d[py::str(n)], cat("input '", n, "'")));
    }
    if (d.size() != names.size())
      for (const auto& item : d) {
        std::string k = py::str(item.first);
        if (std::find(names.begin(), names.end(), k) == names.end())
          throw Error(ErrorKind::invalid_argument, cat("the model has no input '", k, "' (inputs: ", join(names), ")"));
      }
    return out;
  }
  py::sequence seq = inputs.cast<py::sequence>();
  if (seq.size() != names.size())
    throw Error(ErrorKind::invalid_argument, cat("the model takes ", names.size(), " inputs (", join(names), "), got ", seq.size()));
  for (size_t i = 0; i < seq.size(); ++i) out.push_back(to_tensor(seq[i], cat("input ", i, " ('", names[i], "')")));
  return out;
}

}  // namespace

void bind_session(py::module_& m) {
  py::class_<DeviceInfo>(m, "DeviceInfo")
      .def_readonly("name", &DeviceInfo::name)
      .def_readonly("description", &DeviceInfo::description)
      .def_readonly("available", &DeviceInfo::available)
      .def_readonly("reason", &DeviceInfo::reason)
      .def_readonly("status", &DeviceInfo::status)
      .def_readonly("native_ops", &DeviceInfo::native_ops)
      .def("__repr__", [](const DeviceInfo& d) {
        return cat("DeviceInfo(", d.name, ", ", d.available ? "available" : "unavailable: " + d.reason, ", ", d.native_ops, " native ops)");
      });
  m.def("devices", &devices, "Every built device: name, availability (and why not), native op count");
  m.def("set_num_threads", &set_num_threads, "Threads of the CPU kernels (0: every core)");
  m.def("num_threads", &num_threads);

  py::class_<CompiledModel>(m, "CompiledModel")
      .def("run", [](const CompiledModel& cm, const py::object& inputs) {
             bool named = false;
             std::vector<Tensor> in = inputs_in_order(cm, inputs, named);
             std::vector<Tensor> out;
             {
               py::gil_scoped_release nogil;
               out = cm.run(in);
             }
             if (!named) {
               py::list l;
               for (const Tensor& t : out) l.append(from_tensor(t));
               return py::object(l);
             }
             py::dict d;
             std::vector<std::string> names = cm.output_names();
             for (size_t i = 0; i < out.size(); ++i) d[py::str(names[i])] = from_tensor(out[i]);
             return py::object(d);
           }, py::arg("inputs"), "Runs on a dict {name: array} (returns {name: array}) or a list in input order (returns a list)")
      .def("_time_run", [](const CompiledModel& cm, const py::object& inputs, int n) {
             bool named = false;
             std::vector<Tensor> in = inputs_in_order(cm, inputs, named);
             py::gil_scoped_release nogil;
             cm.run(in);
             auto t0 = std::chrono::steady_clock::now();
             for (int i = 0; i < n; ++i) cm.run(in);
             return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / std::max(n, 1);
           }, py::arg("inputs"), py::arg("n"), "µs per run() from C++ itself, for the binding's overhead (bench/python_peers.py)")
      .def_property_readonly("device", &CompiledModel::device)
      .def_property_readonly("input_names", &CompiledModel::input_names)
      .def_property_readonly("output_names", &CompiledModel::output_names)
      .def("dispatch_report", &CompiledModel::dispatch_report)
      .def("mir_text", &CompiledModel::mir_text)
      .def("lir_text", &CompiledModel::lir_text, py::arg("bindings") = std::map<std::string, int64_t>{});

  py::class_<Session>(m, "_Session")
      .def(py::init([](const std::string& device, const std::string& precision, const std::string& activations, const std::string& policy) {
             SessionOptions o;
             o.precision = PrecisionPolicy(precision);
             o.precision.quantized_activations = activations;
             o.policy = policy;
             return Session(device, o);
           }),
           py::arg("device") = "cpu", py::arg("precision") = "f32", py::arg("activations") = "auto", py::arg("policy") = "")
      .def_property_readonly("device", &Session::device)
      .def("compile", [](const Session& s, const Graph& g) {
        py::gil_scoped_release nogil;
        return s.compile(g);
      });
}

}  // namespace rlx::python
