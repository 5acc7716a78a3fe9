#include "train/optimizer.h"

#include <cmath>

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::train {

void validate(const OptimizerConfig& c) {
  if (c.kind != "sgd" && c.kind != "adam" && c.kind != "adamw")
    throw Error(ErrorKind::invalid_argument, cat("unknown optimizer '", c.kind, "' (choose sgd, adam or adamw)"));
  if (c.momentum < 0 || c.momentum >= 1) throw Error(ErrorKind::invalid_argument, cat("momentum must be in [0, 1), got ", c.momentum));
  if (c.nesterov && c.momentum == 0) throw Error(ErrorKind::invalid_argument, "nesterov needs a momentum > 0");
  if (c.weight_decay < 0) throw Error(ErrorKind::invalid_argument, "weight_decay must be ≥ 0");
  if (c.beta1 < 0 || c.beta1 >= 1 || c.beta2 < 0 || c.beta2 >= 1) throw Error(ErrorKind::invalid_argument, "adam betas must be in [0, 1)");
  if (c.eps <= 0) throw Error(ErrorKind::invalid_argument, "adam eps must be > 0");
  if (c.clip_norm < 0) throw Error(ErrorKind::invalid_argument, "clip_norm must be ≥ 0");
  const LossScaleConfig& ls = c.loss_scale;
  if (ls.enabled && (!(ls.init > 0) || !std::isfinite(ls.init) || !(ls.growth >= 1) || !(ls.backoff > 0 && ls.backoff < 1) || ls.interval < 1))
    throw Error(ErrorKind::invalid_argument, cat("loss scaling needs init > 0 (finite), growth ≥ 1, backoff in (0, 1) and interval ≥ 1; got init ", ls.init,
                                                 ", growth ", ls.growth, ", backoff ", ls.backoff, ", interval ", ls.interval));
}

int optimizer_slots(const OptimizerConfig& c) {
  if (c.kind == "sgd") return c.momentum > 0 ? 1 : 0;
  return 2;
}

Update emit_update(ops::Builder& b, const OptimizerConfig& c, ValueId p, ValueId g, const std::vector<ValueId>& slots, ValueId lr, ValueId step) {
  auto k = [&](double v) { return b.scalar_like(p, v); };
  DType d = b.dtype(p);
  ValueId lr_p = b.cast(lr, d);
  if (c.weight_decay > 0 && c.kind != "adamw") g = b.add(g, b.mul(p, k(c.weight_decay)));
  if (c.kind == "sgd") {
    if (c.momentum == 0) return {b.sub(p, b.mul(lr_p, g)), {}};
    // PyTorch's form: v = μ·v + g; step along v (or g + μ·v with Nesterov).
    ValueId v = b.add(b.mul(slots[0], k(c.momentum)), g);
    ValueId dir = c.nesterov ? b.add(g, b.mul(v, k(c.momentum))) : v;
    return {b.sub(p, b.mul(lr_p, dir)), {v}};
  }
  ValueId m = b.add(b.mul(slots[0], k(c.beta1)), b.mul(g, k(1 - c.beta1)));
  ValueId v = b.add(b.mul(slots[1], k(c.beta2)), b.mul(b.mul(g, g), k(1 - c.beta2)));
  // bias corrections 1 − β^t, from the step input
  ValueId t = b.cast(step, d);
  ValueId bc1 = b.sub(k(1), b.binary(ir::Op::pow, k(c.beta1), t));
  ValueId bc2 = b.sub(k(1), b.binary(ir::Op::pow, k(c.beta2), t));
  ValueId mhat = b.div(m, bc1), vhat = b.div(v, bc2);
  ValueId upd = b.div(mhat, b.add(b.unary(ir::Op::sqrt, vhat), k(c.eps)));
  ValueId np = p;
  if (c.kind == "adamw" && c.weight_decay > 0) np = b.sub(np, b.mul(b.mul(lr_p, k(c.weight_decay)), p));
  return {b.sub(np, b.mul(lr_p, upd)), {m, v}};
}

}  // namespace rlx::train
