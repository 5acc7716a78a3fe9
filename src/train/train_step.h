// The training step as one graph: forward, backward (autodiff), gradient clipping and the
// optimizer update, compiled and memory-planned together.
#pragma once
#include "ir/graph.h"
#include "train/optimizer.h"

namespace rlx::train {

// forward: inputs = [params…, data…], outputs = [loss (f32 scalar), extras…].
// The step graph: inputs = [params…, slots…, data…, lr, step],
//                 outputs = [new params…, new slots…, loss, extras…].
// With loss scaling (opt.loss_scale.enabled) a last input `loss_scale` (f32 scalar) multiplies
// the loss before backward, the gradients are divided by it, and a last output says whether
// they were all finite (f32 1 or 0); when not, params and slots come out unchanged.
struct TrainStepGraph {
  ir::Graph graph;
  size_t num_params = 0, num_slots = 0, num_data = 0, num_extras = 0;
  bool loss_scaled = false;
};

TrainStepGraph build_train_step(const ir::Graph& forward, size_t num_params, const OptimizerConfig& opt);

// A forward graph whose gradient with respect to each parameter is a data input, exactly:
// inputs = [params…, grads…], output Σ_i sum(param_i · grad_i). build_train_step of it is the
// optimizer update alone (clipping, scaling and all) for gradients computed elsewhere — the
// data-parallel step all-reduces them between backward and update.
ir::Graph gradients_as_data(const std::vector<ir::Type>& params);

}  // namespace rlx::train
