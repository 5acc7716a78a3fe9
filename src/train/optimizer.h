// Optimizers as graph builders: each emits the update of one parameter into the training-step
// graph, so forward, backward and update are compiled and planned together.
#pragma once
#include <string>
#include <vector>

#include "ops/builder.h"

namespace rlx::train {

using ir::ValueId;

// Dynamic loss scaling for f16 training (f16's smallest normal is 6.1e-5: small gradients would
// flush to zero). The loss is multiplied by `scale` before backward and the gradients divided by
// it after; a step whose gradients are not all finite changes nothing and halves the scale, and
// `interval` finite steps in a row double it (PyTorch's GradScaler defaults).
struct LossScaleConfig {
  bool enabled = false;
  double init = 65536.0, growth = 2.0, backoff = 0.5;
  int64_t interval = 2000;
};

struct OptimizerConfig {
  std::string kind = "sgd";  // sgd | adam | adamw
  double momentum = 0.0;     // sgd
  bool nesterov = false;     // sgd
  double weight_decay = 0.0; // sgd, adam: L2 added to the gradient; adamw: decoupled
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;  // adam, adamw
  double clip_norm = 0.0;    // > 0: scale all gradients so their global L2 norm is at most this
  LossScaleConfig loss_scale;
};

// Throws rlx::Error naming the bad field.
void validate(const OptimizerConfig& c);
// State tensors per parameter (momentum buffer, Adam moments …), zero-initialised.
int optimizer_slots(const OptimizerConfig& c);

struct Update {
  ValueId param;
  std::vector<ValueId> slots;
};

// `lr` and `step` (1, 2, … as f32, for Adam's bias correction) are scalar graph inputs so that
// schedules change them without recompiling.
Update emit_update(ops::Builder& b, const OptimizerConfig& c, ValueId param, ValueId grad, const std::vector<ValueId>& slots,
                   ValueId lr, ValueId step);

}  // namespace rlx::train
