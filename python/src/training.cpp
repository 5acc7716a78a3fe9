// Training from Python: a forward graph whose first inputs are the parameters and whose first
// output is the loss becomes one compiled step (forward, backward, optimizer update) that updates
// the parameters in place — train::Trainer.
#include "bindings.h"
#include "rlx/error.h"
#include "tensors.h"
#include "train/trainer.h"
#include "util/strings.h"

namespace rlx::python {

namespace {

std::vector<Tensor> data_tensors(const py::object& data, const std::vector<std::string>& names) {
  std::vector<Tensor> out;
  if (py::isinstance<py::dict>(data)) {
    py::dict d = data.cast<py::dict>();
    for (const auto& n : names) {
      if (!d.contains(n)) throw Error(ErrorKind::invalid_argument, cat("missing data input '", n, "' (data inputs: ", join(names), ")"));
      out.push_back(to_tensor(d[py::str(n)], cat("data input '", n, "'")).contiguous());
    }
    return out;
  }
  py::sequence s = data.cast<py::sequence>();
  if (s.size() != names.size()) throw Error(ErrorKind::invalid_argument, cat("the step takes ", names.size(), " data inputs (", join(names), "), got ", s.size()));
  for (size_t i = 0; i < s.size(); ++i) out.push_back(to_tensor(s[i], cat("data input '", names[i], "'")).contiguous());
  return out;
}

struct PyTrainer {
  std::unique_ptr<train::Trainer> t;
  std::vector<std::string> data_names;
};

}  // namespace

void bind_training(py::module_& m) {
  py::class_<PyTrainer>(m, "_Trainer")
      .def(py::init([](const Graph& forward, const py::dict& params, const std::string& optimizer, double momentum, double weight_decay,
                       double clip_norm, const std::string& device, const std::string& precision) {
             const ir::Graph& g = forward.ir();
             if (params.size() >= g.inputs().size())
               throw Error(ErrorKind::invalid_argument, "the forward graph's inputs are the parameters first, then at least one data input");
             std::vector<train::NamedTensor> p;
             for (size_t i = 0; i < params.size(); ++i) {
               const std::string& name = g.value(g.inputs()[i]).name;
               if (!params.contains(name))
                 throw Error(ErrorKind::invalid_argument, cat("no initial value for parameter '", name, "' (the graph's input ", i, ")"));
               p.push_back({name, to_tensor(params[py::str(name)], cat("parameter '", name, "'")).contiguous().clone()});
             }
             auto out = std::make_unique<PyTrainer>();
             for (size_t i = params.size(); i < g.inputs().size(); ++i) out->data_names.push_back(g.value(g.inputs()[i]).name);
             train::OptimizerConfig opt;
             opt.kind = optimizer;
             opt.momentum = momentum;
             opt.weight_decay = weight_decay;
             opt.clip_norm = clip_norm;
             SessionOptions so;
             so.precision = PrecisionPolicy(precision);
             py::gil_scoped_release nogil;
             out->t = std::make_unique<train::Trainer>(device, g, std::move(p), opt, so);
             return out;
           }),
           py::arg("forward"), py::arg("params"), py::arg("optimizer") = "sgd", py::arg("momentum") = 0.0, py::arg("weight_decay") = 0.0,
           py::arg("clip_norm") = 0.0, py::arg("device") = "cpu", py::arg("precision") = "f32")
      .def("step", [](PyTrainer& t, const py::object& data, double lr) {
             std::vector<Tensor> d = data_tensors(data, t.data_names);
             py::gil_scoped_release nogil;
             return t.t->step(d, lr);
           }, py::arg("data"), py::arg("lr"), "One optimizer step on a batch; returns the loss")
      .def("evaluate", [](PyTrainer& t, const py::object& data) {
             std::vector<Tensor> d = data_tensors(data, t.data_names), out;
             {
               py::gil_scoped_release nogil;
               out = t.t->evaluate(d);
             }
             py::list l;
             for (const Tensor& x : out) l.append(from_tensor(x));
             return l;
           }, py::arg("data"), "The forward graph with the current parameters: [loss, extras…]")
      .def_property_readonly("params", [](const PyTrainer& t) {
        py::dict d;
        for (const auto& p : t.t->params()) d[py::str(p.name)] = from_tensor(p.tensor.clone());  // a snapshot: steps update in place
        return d;
      })
      .def_property_readonly("steps", [](const PyTrainer& t) { return t.t->steps(); })
      .def_property_readonly("data_names", [](const PyTrainer& t) { return t.data_names; });
}

}  // namespace rlx::python
