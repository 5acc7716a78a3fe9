#include "train/train_step.h"

#include <limits>

#include "ops/builder.h"
#include "passes/autodiff.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::train {

namespace {

// forward with a last input `loss_scale` and outputs [loss · loss_scale, extras…, loss].
ir::Graph with_scaled_loss(const ir::Graph& forward) {
  ir::Graph g = forward;
  ValueId s = g.add_input({DType::f32, {}}, "loss_scale");
  ops::Builder b(g);
  b.set_context("loss_scale", "");
  ValueId loss = forward.outputs()[0];
  std::vector<ValueId> outs = forward.outputs();
  outs[0] = b.mul(loss, b.cast(s, b.dtype(loss)));
  outs.push_back(loss);
  g.set_outputs(outs);
  return g;
}

// x reduced over every axis to a scalar in two steps — the last axis first, then the rest — so
// that a GPU reduces many rows side by side instead of one line of millions in one block.
ValueId reduce_all(ops::Builder& b, ValueId x, const std::string& kind) {
  const int64_t rank = static_cast<int64_t>(b.rank(x));
  if (rank == 0) return x;
  if (rank > 1) x = b.reduce(x, kind, {rank - 1}, false);
  ir::Ints axes;
  for (int64_t d = 0; d < std::max<int64_t>(rank - 1, 1); ++d) axes.push_back(d);
  return b.reduce(x, kind, axes, false);
}

}  // namespace

ir::Graph gradients_as_data(const std::vector<ir::Type>& params) {
  ir::Graph g;
  g.name = "update";
  std::vector<ValueId> ps, gs;
  for (size_t i = 0; i < params.size(); ++i) ps.push_back(g.add_input(params[i], cat("param", i)));
  for (size_t i = 0; i < params.size(); ++i) gs.push_back(g.add_input(params[i], cat("grad", i)));
  ops::Builder b(g);
  ValueId total = ir::kNoValue;
  for (size_t i = 0; i < params.size(); ++i) {
    ValueId t = b.cast(reduce_all(b, b.mul(ps[i], gs[i]), "sum"), DType::f32);
    total = total == ir::kNoValue ? t : b.add(total, t);
  }
  g.set_outputs({total == ir::kNoValue ? b.scalar(DType::f32, 0) : total});
  return g;
}

TrainStepGraph build_train_step(const ir::Graph& forward, size_t num_params, const OptimizerConfig& opt) {
  validate(opt);
  if (num_params > forward.inputs().size())
    throw Error(ErrorKind::invalid_argument, cat("the forward graph has ", forward.inputs().size(), " inputs, fewer than ", num_params, " parameters"));
  if (forward.outputs().empty()) throw Error(ErrorKind::invalid_argument, "the forward graph needs the loss as its first output");
  std::vector<ValueId> wrt(forward.inputs().begin(), forward.inputs().begin() + static_cast<long>(num_params));
  const bool scaled = opt.loss_scale.enabled;
  // outputs: loss, extras…, grads… — scaled: loss·s, extras…, loss, grads·s…
  ir::Graph vg = passes::value_and_grad(scaled ? with_scaled_loss(forward) : forward, 0, wrt);
  size_t n_out = vg.outputs().size() - num_params;

  // Re-host the value-and-grad graph behind the step's input order.
  TrainStepGraph t;
  t.num_params = num_params;
  t.num_data = forward.inputs().size() - num_params;
  t.num_extras = forward.outputs().size() - 1;
  t.loss_scaled = scaled;
  int slots_per = optimizer_slots(opt);
  t.num_slots = num_params * static_cast<size_t>(slots_per);
  ir::Graph& g = t.graph;
  g.name = forward.name + "_train_step";
  std::vector<ValueId> map(vg.num_values(), ir::kNoValue);
  std::vector<ValueId> params, slots;
  for (size_t i = 0; i < num_params; ++i) {
    ValueId v = vg.inputs()[i];
    params.push_back(map[static_cast<size_t>(v)] = g.add_input(vg.type(v), vg.value(v).name));
  }
  for (size_t i = 0; i < num_params; ++i)
    for (int s = 0; s < slots_per; ++s) slots.push_back(g.add_input(vg.type(vg.inputs()[i]), cat(vg.value(vg.inputs()[i]).name, ".slot", s)));
  for (size_t i = num_params; i < forward.inputs().size(); ++i) {
    ValueId v = vg.inputs()[i];
    map[static_cast<size_t>(v)] = g.add_input(vg.type(v), vg.value(v).name);
  }
  ValueId lr = g.add_input({DType::f32, {}}, "lr");
  ValueId step = g.add_input({DType::f32, {}}, "step");
  ValueId loss_scale = ir::kNoValue;
  if (scaled) map[static_cast<size_t>(vg.inputs().back())] = loss_scale = g.add_input({DType::f32, {}}, "loss_scale");
  ops::Builder b(g);
  for (const auto& n : vg.nodes()) {
    std::vector<ValueId> in;
    for (ValueId v : n.inputs) in.push_back(map[static_cast<size_t>(v)]);
    b.set_context(n.name, n.origin);
    auto outs = b.emit(n.op, in, n.attrs);
    for (size_t k = 0; k < outs.size(); ++k) map[static_cast<size_t>(n.outputs[k])] = outs[k];
  }
  std::vector<ValueId> grads;
  for (size_t i = 0; i < num_params; ++i) grads.push_back(map[static_cast<size_t>(vg.outputs()[n_out + i])]);
  b.set_context("optimizer", "");
  ValueId finite = ir::kNoValue;
  if (scaled) {
    // Finite iff the sum of every gradient's max |g| is: reduce max lets a NaN win, and a NaN
    // or an infinity survives the sum.
    ValueId total = ir::kNoValue;
    for (ValueId gr : grads) {
      ValueId m = b.cast(reduce_all(b, b.unary(ir::Op::abs, gr), "max"), DType::f32);
      total = total == ir::kNoValue ? m : b.add(total, m);
    }
    finite = b.binary(ir::Op::le, total, b.scalar(DType::f32, std::numeric_limits<float>::max()));
    ValueId inv = b.div(b.scalar(DType::f32, 1.0), loss_scale);
    for (auto& gr : grads) gr = b.mul(gr, b.cast(inv, b.dtype(gr)));
  }
  if (opt.clip_norm > 0) {
    // global L2 norm over every gradient, in f32
    ValueId total = ir::kNoValue;
    for (ValueId gr : grads) {
      ValueId sq = reduce_all(b, b.cast(b.mul(gr, gr), DType::f32), "sum");
      total = total == ir::kNoValue ? sq : b.add(total, sq);
    }
    ValueId norm = b.unary(ir::Op::sqrt, total);
    ValueId scale = b.min(b.scalar(DType::f32, 1.0), b.div(b.scalar(DType::f32, opt.clip_norm), b.add(norm, b.scalar(DType::f32, 1e-6))));
    for (auto& gr : grads) gr = b.mul(gr, b.cast(scale, b.dtype(gr)));
  }
  std::vector<ValueId> new_params, new_slots;
  for (size_t i = 0; i < num_params; ++i) {
    std::vector<ValueId> my_slots(slots.begin() + static_cast<long>(i) * slots_per, slots.begin() + static_cast<long>(i + 1) * slots_per);
    b.set_context(cat("optimizer.", g.value(params[i]).name), "");
    Update u = emit_update(b, opt, params[i], grads[i], my_slots, lr, step);
    if (scaled) {  // a step with non-finite gradients leaves the parameter and its state as they were
      u.param = b.select(finite, u.param, params[i]);
      for (size_t s = 0; s < u.slots.size(); ++s) u.slots[s] = b.select(finite, u.slots[s], my_slots[s]);
    }
    new_params.push_back(u.param);
    new_slots.insert(new_slots.end(), u.slots.begin(), u.slots.end());
  }
  std::vector<ValueId> outs = new_params;
  outs.insert(outs.end(), new_slots.begin(), new_slots.end());
  if (scaled) {  // the unscaled loss (vg's last value output), the extras, the finite flag
    outs.push_back(map[static_cast<size_t>(vg.outputs()[n_out - 1])]);
    for (size_t k = 1; k + 1 < n_out; ++k) outs.push_back(map[static_cast<size_t>(vg.outputs()[k])]);
    outs.push_back(b.cast(finite, DType::f32));
  } else {
    for (size_t k = 0; k < n_out; ++k) outs.push_back(map[static_cast<size_t>(vg.outputs()[k])]);
  }
  g.set_outputs(outs);
  return t;
}

}  // namespace rlx::train
