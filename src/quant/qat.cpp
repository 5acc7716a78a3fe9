#include "quant/qat.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "quant/ptq.h"
#include "rlx/error.h"
#include "rlx/session.h"
#include "util/strings.h"

namespace rlx::quant {

namespace {

const Tensor& param(const std::vector<train::NamedTensor>& params, const std::string& name) {
  for (const auto& p : params)
    if (p.name == name) return p.tensor;
  throw Error(ErrorKind::invalid_argument, cat("activation QAT: no parameter '", name, "'"));
}

}  // namespace

void calibrate_activation_grids(models::Classifier& model, const models::ClassifierSpec& spec, const Tensor& images, const std::string& device) {
  if (model.activation_grids.empty()) return;
  models::ClassifierSpec plain = spec;
  plain.qat_activations = false;
  models::Classifier probe = models::build_classifier(plain, 0);
  // The probe's outputs: the values the grids sit on, as PTQ will find them.
  ir::Graph g = probe.forward;
  std::vector<ir::ValueId> observed = plan_ptq(g, g.inputs()[probe.params.size()], g.outputs()[2]).observed;
  observed.pop_back();  // the logits: no grid in training
  if (observed.size() != model.activation_grids.size())
    throw Error(ErrorKind::internal, cat("activation QAT: ", model.activation_grids.size(), " grids for ", observed.size(), " observed values"));
  g.set_outputs(observed);
  CompiledModel m = Session(device).compile(Graph(std::make_shared<ir::Graph>(g)));
  std::vector<Tensor> in;
  for (const auto& p : probe.params) in.push_back(param(model.params, p.name));  // the same weights, by name
  in.push_back(images);
  in.push_back(Tensor::zeros(DType::i64, {images.shape()[0]}));  // labels: the loss is not read
  std::vector<Tensor> out = m.run(in);
  for (size_t k = 0; k < observed.size(); ++k) {
    Tensor v = out[k].contiguous();
    double lo = 0, hi = 0;
    for (int64_t i = 0; i < v.numel(); ++i) {
      double x = v.at_f64(i);
      if (std::isfinite(x)) lo = std::min(lo, x), hi = std::max(hi, x);
    }
    QParams q = int8_qparams(lo, hi);
    for (auto& p : model.params) {
      if (p.name == model.activation_grids[k] + ".act_log_scale") p.tensor = Tensor::from_f64(DType::f32, {}, {std::log(q.scale)});
      if (p.name == model.activation_grids[k] + ".act_zero_point") p.tensor = Tensor::from_f64(DType::f32, {}, {static_cast<double>(q.zero_point)});
    }
  }
}

std::vector<QParams> learned_activation_grids(const std::vector<std::string>& grids, const std::vector<train::NamedTensor>& params) {
  std::vector<QParams> out;
  for (const std::string& g : grids) {
    const Tensor& log_s = param(params, g + ".act_log_scale");
    const Tensor& z = param(params, g + ".act_zero_point");
    if (log_s.numel() != 1 || z.numel() != 1) throw Error(ErrorKind::invalid_argument, cat("activation QAT: the grid of '", g, "' must be two scalars"));
    QParams q;
    q.scale = static_cast<double>(std::exp(static_cast<float>(log_s.at_f64(0))));
    double zp = z.at_f64(0);
    if (!std::isfinite(q.scale) || q.scale <= 0 || !std::isfinite(zp))
      throw Error(ErrorKind::invalid_argument, cat("activation QAT: the grid of '", g, "' is not finite (scale ", q.scale, ", zero point ", zp, ")"));
    q.zero_point = static_cast<int64_t>(std::clamp(std::nearbyint(zp), -128.0, 127.0));
    out.push_back(q);
  }
  return out;
}

}  // namespace rlx::quant
