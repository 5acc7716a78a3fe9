// Quantization-aware training of activations (models::ClassifierSpec::qat_activations): the
// learned int8 grids start where static PTQ would put them and end as the grids the int8 graph
// uses, so the trained model and its integer export compute on the same grids.
#pragma once
#include <string>
#include <vector>

#include "models/classifier.h"
#include "quant/observer.h"
#include "rlx/tensor.h"

namespace rlx::quant {

// Sets every activation grid of `model` (built with qat_activations) to the min-max grid of its
// value over `images` in the same model without activation fake-quant (weights as they are,
// on their QAT grid if any): LSQ then trains from PTQ's starting point instead of a guess.
void calibrate_activation_grids(models::Classifier& model, const models::ClassifierSpec& spec, const Tensor& images, const std::string& device = "cpu");

// The grids as PTQ's QParams, in PTQ's order (the input, then each hidden layer's output): scale
// exp(act_log_scale) as the graph computes it in f32, zero point rounded onto [−128, 127].
// `params` holds the trained values by name; throws rlx::Error naming a missing or bad one.
std::vector<QParams> learned_activation_grids(const std::vector<std::string>& grids, const std::vector<train::NamedTensor>& params);

}  // namespace rlx::quant
