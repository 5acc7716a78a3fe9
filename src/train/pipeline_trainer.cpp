#include "train/pipeline_trainer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "ops/builder.h"
#include "passes/autodiff.h"
#include "rlx/error.h"
#include "train/train_step.h"
#include "util/strings.h"

namespace rlx::train {

using ir::ValueId;

namespace {

ValueId sum_all(ops::Builder& b, ValueId x) {
  ir::Ints axes;
  for (int64_t d = 0; d < static_cast<int64_t>(b.rank(x)); ++d) axes.push_back(d);
  return axes.empty() ? x : b.reduce(x, "sum", axes, false);
}

// The stage's backward: its forward again, then the gradients of its parameters (added to
// accumulator inputs, in place) and of its received input.
//   inputs  = [params…, received?, data…, cotangent | share, accumulators…]
//   outputs = [loss, extras… (last stage)], input gradient?, accumulators…
// A middle stage's scalar objective is Σ activation · cotangent, whose gradient is exactly the
// vector-Jacobian product with the cotangent the next stage sent; the last stage's is its loss
// times this micro-batch's share of the batch.
ir::Graph backward_graph(const PipelineStage& st, bool last, bool scaled) {
  ir::Graph w = st.forward;
  w.name = st.forward.name + ".backward";
  const size_t np = st.params.size();
  std::vector<ValueId> wrt(w.inputs().begin(), w.inputs().begin() + static_cast<long>(np));
  if (st.receives) wrt.push_back(w.inputs()[np]);
  ops::Builder b(w);
  b.set_context("pipeline.objective", "");
  const size_t model_outputs = w.outputs().size();
  if (!last) {
    ValueId h = w.outputs()[0];
    ValueId g = w.add_input(w.type(h), "grad." + st.sends);
    w.set_outputs({sum_all(b, b.cast(b.mul(h, g), DType::f32))});
  } else {
    ValueId share = w.add_input({DType::f32, {}}, "micro_share");
    std::vector<ValueId> outs = w.outputs();
    ValueId loss = outs[0];
    // scaled: (loss · s) · share — loss · s overflows exactly where the whole batch's step does
    ValueId objective = loss;
    if (scaled) objective = b.mul(objective, b.cast(w.add_input({DType::f32, {}}, "loss_scale"), b.dtype(loss)));
    outs[0] = b.mul(objective, b.cast(share, b.dtype(loss)));
    outs.push_back(loss);  // reported unweighted
    w.set_outputs(outs);
  }
  const size_t n_value = w.outputs().size();
  ir::Graph vg = passes::value_and_grad(w, 0, wrt);
  std::vector<ValueId> outs;
  if (last) {
    outs.push_back(vg.outputs()[n_value - 1]);
    for (size_t k = 1; k < model_outputs; ++k) outs.push_back(vg.outputs()[k]);
  }
  if (st.receives) outs.push_back(vg.outputs()[n_value + np]);
  ops::Builder vb(vg);
  vb.set_context("pipeline.accumulate", "");
  for (size_t i = 0; i < np; ++i) {
    ValueId p = vg.inputs()[i];
    ValueId acc = vg.add_input(vg.type(p), "acc." + vg.value(p).name);
    outs.push_back(vb.add(acc, vg.outputs()[n_value + i]));
  }
  vg.set_outputs(outs);
  return vg;
}

bool is_scalar(const ir::Type& t) { return t.shape.empty(); }

}  // namespace

struct PipelineTrainer::Micro {
  std::vector<Tensor> data;  // every model data input, this micro-batch's rows
  Bindings bind;             // the data inputs' symbols (the batch) for this micro-batch
  double share = 1;          // rows / the batch's rows
};

PipelineTrainer::PipelineTrainer(const std::string& device, const ir::Graph& forward, const std::vector<NamedTensor>& params, const OptimizerConfig& opt,
                                 const SessionOptions& options, dist::Communicator& comm, PipelineConfig config, dist::Communicator* replicas)
    : comm_(comm), replicas_(replicas && replicas->size() > 1 ? replicas : nullptr), rank_(comm.rank()), stages_(comm.size()), config_(config) {
  validate(opt);
  clip_norm_ = opt.clip_norm;
  scaling_ = opt.loss_scale;
  if (scaling_.enabled) loss_scale_ = scaling_.init;
  if (config_.micro_batches < 1) throw Error(ErrorKind::invalid_argument, cat("--micro-batches must be ≥ 1, got ", config_.micro_batches));
  if (params.size() > forward.inputs().size()) throw Error(ErrorKind::invalid_argument, "more parameters than the forward graph has inputs");
  for (size_t i = 0; i < params.size(); ++i) {
    const ir::Type& t = forward.type(forward.inputs()[i]);
    if (params[i].tensor.dtype() != t.dtype || params[i].tensor.shape() != shape_values(t.shape))
      throw Error(ErrorKind::invalid_argument, cat("parameter '", params[i].name, "' must be ", ir::type_str(t)));
    all_names_.push_back(params[i].name);
    all_types_.push_back(t);
  }
  for (size_t i = params.size(); i < forward.inputs().size(); ++i) data_types_.push_back(forward.type(forward.inputs()[i]));
  std::vector<PipelineStage> split = split_pipeline(forward, params.size(), stages_);
  owner_.assign(params.size(), -1);
  for (int s = 0; s < stages_; ++s)
    for (size_t p : split[static_cast<size_t>(s)].params) owner_[p] = s;
  stage_ = std::move(split[static_cast<size_t>(rank_)]);
  for (size_t p : stage_.params) {
    params_.push_back({params[p].name, params[p].tensor.clone()});
    grads_.push_back(Tensor::zeros(params[p].tensor.dtype(), params[p].tensor.shape()));
    for (int s = 0; s < optimizer_slots(opt); ++s) slots_.push_back(Tensor::zeros(params[p].tensor.dtype(), params[p].tensor.shape()));
  }
  for (size_t k = 0; k < forward.outputs().size(); ++k)
    if (is_scalar(forward.type(forward.outputs()[k]))) scalar_outputs_.push_back(k);
  if (scalar_outputs_.empty() || scalar_outputs_[0] != 0) throw Error(ErrorKind::invalid_argument, "the forward graph's first output (the loss) must be a scalar");

  const bool last = rank_ == stages_ - 1;
  Session session(device, options);
  forward_.emplace(session.compile(Graph(std::make_shared<ir::Graph>(stage_.forward))));
  backward_.emplace(session.compile(Graph(std::make_shared<ir::Graph>(backward_graph(stage_, last, scaling_.enabled)))));
  std::vector<ir::Type> types;
  for (const auto& p : params_) types.push_back({p.tensor.dtype(), shape_of(p.tensor.shape())});
  // the update alone: unscaling and clipping happen before it, over every stage (prepare_gradients)
  OptimizerConfig update_opt = opt;
  update_opt.clip_norm = 0;
  update_opt.loss_scale.enabled = false;
  update_.emplace(session.compile(Graph(std::make_shared<ir::Graph>(build_train_step(gradients_as_data(types), types.size(), update_opt).graph))));
}

PipelineTrainer::~PipelineTrainer() = default;

std::vector<PipelineTrainer::Micro> PipelineTrainer::split_batch(const std::vector<Tensor>& data, int micro_batches) const {
  if (data.size() != data_types_.size()) throw Error(ErrorKind::invalid_argument, cat("a training step takes ", data_types_.size(), " data tensors, got ", data.size()));
  if (data.empty() || data[0].shape().empty()) throw Error(ErrorKind::invalid_argument, "pipeline parallel splits the batch along the data inputs' first dim; the first data input has none");
  const int64_t rows = data[0].shape()[0];
  for (size_t i = 0; i < data.size(); ++i)
    if (data[i].shape().empty() || data[i].shape()[0] != rows)
      throw Error(ErrorKind::invalid_argument, cat("data input ", i, " has ", data[i].shape().empty() ? 0 : data[i].shape()[0], " rows, the first has ", rows, ": micro-batches split them together"));
  if (rows < 1) throw Error(ErrorKind::invalid_argument, "an empty batch");
  const int64_t count = std::min<int64_t>(micro_batches, rows);
  std::vector<Micro> out;
  for (int64_t m = 0, start = 0; m < count; ++m) {
    const int64_t n = rows / count + (m < rows % count ? 1 : 0);
    Micro mb;
    mb.share = static_cast<double>(n) / static_cast<double>(rows);
    for (size_t i = 0; i < data.size(); ++i) {
      mb.data.push_back(data[i].slice(0, start, start + n).contiguous());
      const Shape& s = data_types_[i].shape;
      if (s.size() != mb.data[i].shape().size())
        throw Error(ErrorKind::invalid_argument, cat("data input ", i, " has rank ", mb.data[i].shape().size(), ", the model expects ", ir::type_str(data_types_[i])));
      for (size_t d = 0; d < s.size(); ++d)
        if (s[d].is_symbol()) mb.bind[s[d].symbol_name()] = mb.data[i].shape()[d];
    }
    out.push_back(std::move(mb));
    start += n;
  }
  return out;
}

Tensor PipelineTrainer::received(const ir::Type& type, const Micro& m) const {
  Shape s = shape_substitute(type.shape, m.bind);
  if (!shape_is_static(s))
    throw Error(ErrorKind::invalid_argument, cat("the activation '", stage_.sends, "' between pipeline stages has shape ", shape_str(type.shape), ", which the data inputs' shapes do not determine"));
  return Tensor::zeros(type.dtype, shape_values(s));
}

void PipelineTrainer::clear_accumulators() {
  for (Tensor& g : grads_) std::memset(g.data(), 0, g.nbytes());
}

double PipelineTrainer::step(const std::vector<Tensor>& data, double lr) {
  std::vector<Micro> micro = split_batch(data, config_.micro_batches);
  const bool last = rank_ == stages_ - 1;
  const size_t np = params_.size();
  const ir::Type* in_type = stage_.receives ? &stage_.forward.type(stage_.forward.inputs()[np]) : nullptr;
  const ir::Type& out_type = stage_.forward.type(stage_.forward.outputs()[0]);
  std::vector<Tensor> stash(micro.size());  // the received input of each micro-batch in flight
  std::vector<std::unique_ptr<dist::Communicator::PendingSend>> forward_sent(micro.size()), backward_sent;
  int in_flight = 0;
  const size_t scalar_extras = scalar_outputs_.size() - 1;
  std::vector<double> sums(scalar_outputs_.size(), 0);  // the loss, then the scalar extras
  std::vector<Tensor> in, out;
  auto stage_inputs = [&](const Micro& m, const Tensor& received) {
    in.clear();
    for (const auto& p : params_) in.push_back(p.tensor);
    if (stage_.receives) in.push_back(received);
    for (size_t i : stage_.data) in.push_back(m.data[i]);
  };
  for (const PipelineAction& a : pipeline_schedule(config_.schedule, rank_, stages_, static_cast<int>(micro.size()))) {
    const Micro& m = micro[static_cast<size_t>(a.micro)];
    Tensor& x = stash[static_cast<size_t>(a.micro)];
    if (a.forward) {
      if (stage_.receives) {
        x = received(*in_type, m);
        comm_.recv(x, rank_ - 1);
      }
      peak_in_flight_ = std::max(peak_in_flight_, ++in_flight);
      if (last) continue;  // the last stage's forward runs inside its backward
      stage_inputs(m, x);
      Tensor h = forward_->run(in)[0];
      forward_sent[static_cast<size_t>(a.micro)] = comm_.send_async(h, rank_ + 1);
      continue;
    }
    stage_inputs(m, x);
    if (!last) {
      Tensor g = received(out_type, m);
      comm_.recv(g, rank_ + 1);
      forward_sent[static_cast<size_t>(a.micro)]->wait();  // the next stage took it before it sent this gradient
      forward_sent[static_cast<size_t>(a.micro)].reset();
      in.push_back(g);
    } else {
      in.push_back(Tensor::scalar(DType::f32, m.share));
      if (scaling_.enabled) in.push_back(Tensor::scalar(DType::f32, loss_scale_));
    }
    in.insert(in.end(), grads_.begin(), grads_.end());
    const size_t fresh = (last ? stage_.forward.outputs().size() : 0) + (stage_.receives ? 1 : 0);
    out.assign(fresh, Tensor());
    out.insert(out.end(), grads_.begin(), grads_.end());
    backward_->run_into(in, out);
    if (last) {
      sums[0] += out[0].at_f64(0) * m.share;
      for (size_t k = 1; k <= scalar_extras; ++k) sums[k] += out[scalar_outputs_[k]].at_f64(0);
    }
    if (stage_.receives) backward_sent.push_back(comm_.send_async(out[fresh - 1], rank_ - 1));
    x = Tensor();
    --in_flight;
  }
  for (auto& s : backward_sent) s->wait();
  // data parallel: the copies' gradients averaged — each the mean over its share of the batch
  if (replicas_)
    for (Tensor& g : grads_) replicas_->all_reduce(g, dist::ReduceOp::avg);

  // The update, from the accumulated gradient of the whole batch.
  ++steps_;
  if (!prepare_gradients()) {  // some stage overflowed: params and slots stay as they were
    clear_accumulators();
    return finish_step(sums);
  }
  ++applied_;
  in.clear();
  for (const auto& p : params_) in.push_back(p.tensor);
  in.insert(in.end(), slots_.begin(), slots_.end());
  in.insert(in.end(), grads_.begin(), grads_.end());
  in.push_back(Tensor::scalar(DType::f32, lr));
  in.push_back(Tensor::scalar(DType::f32, static_cast<double>(applied_)));  // Adam counts applied steps
  out.clear();
  for (const auto& p : params_) out.push_back(p.tensor);
  out.insert(out.end(), slots_.begin(), slots_.end());
  update_->run_into(in, out);
  clear_accumulators();

  // The loss and scalar extras, known to the last stage, for every rank.
  return finish_step(sums);
}

double PipelineTrainer::finish_step(std::vector<double> sums) {
  sums = from_last_stage(sums, sums.size());
  extras_.clear();
  for (size_t k = 1; k < sums.size(); ++k) extras_.push_back(Tensor::scalar(DType::f32, sums[k]));
  if (!replicas_) return sums[0];
  Tensor loss = Tensor::scalar(DType::f64, sums[0]);  // the job's: the copies' mean
  replicas_->all_reduce(loss, dist::ReduceOp::avg);
  return loss.at_f64(0);
}

namespace {

// Calls f(float&) on every element of f32 gradients (the trainer's parameters are f32).
template <class F>
void each_gradient_of(Tensor& g, F f) {
  if (g.dtype() != DType::f32) throw Error(ErrorKind::unsupported, cat("pipeline-parallel clipping and loss scaling take f32 parameters, not ", dtype_name(g.dtype())));
  float* p = g.data_as<float>();
  for (int64_t i = 0; i < g.numel(); ++i) f(p[i]);
}
template <class F>
void each_gradient(std::vector<Tensor>& grads, F f) {
  for (Tensor& g : grads) each_gradient_of(g, f);
}

}  // namespace

bool PipelineTrainer::prepare_gradients() {
  if (scaling_.enabled) {
    // The step graph's test: the sum of every gradient's max |g| is at most FLT_MAX (a NaN or an
    // infinity fails it) — here each stage's part, summed over the stages.
    double total = 0;
    for (Tensor& g : grads_) {
      float m = 0;
      each_gradient_of(g, [&](float& x) { m = std::isnan(x) || std::isnan(m) ? NAN : std::max(m, std::fabs(x)); });
      total += m;
    }
    Tensor sum = Tensor::scalar(DType::f64, total);
    comm_.all_reduce(sum, dist::ReduceOp::sum);
    if (!(sum.at_f64(0) <= static_cast<double>(std::numeric_limits<float>::max()))) {  // as Trainer: back off, start counting again
      ++skipped_;
      finite_run_ = 0;
      loss_scale_ = std::max(loss_scale_ * scaling_.backoff, static_cast<double>(std::numeric_limits<float>::min()));
      return false;
    }
    // the step graph's unscaling: g · (1 / s) in f32, with the scale this step used
    const float inv = 1.0f / static_cast<float>(loss_scale_);
    each_gradient(grads_, [&](float& g) { g *= inv; });
    if (++finite_run_ >= scaling_.interval) {
      finite_run_ = 0;
      loss_scale_ = std::min(loss_scale_ * scaling_.growth, static_cast<double>(std::numeric_limits<float>::max()));
    }
  }
  if (clip_norm_ > 0) {
    // the global L2 norm: each stage's Σ g², summed over the stages; then the step graph's
    // factor min(1, clip / (norm + 1e-6)) in f32, on every stage alike
    double local = 0;
    each_gradient(grads_, [&](float& g) { local += static_cast<double>(g) * g; });
    Tensor total = Tensor::scalar(DType::f64, local);
    comm_.all_reduce(total, dist::ReduceOp::sum);
    const float norm = std::sqrt(static_cast<float>(total.at_f64(0)));
    const float factor = std::min(1.0f, static_cast<float>(clip_norm_) / (norm + 1e-6f));
    each_gradient(grads_, [&](float& g) { g *= factor; });
  }
  return true;
}

std::vector<double> PipelineTrainer::from_last_stage(const std::vector<double>& values, size_t count) const {
  Tensor t = Tensor::zeros(DType::f64, {static_cast<int64_t>(count)});
  if (rank_ == stages_ - 1) std::copy(values.begin(), values.end(), t.data_as<double>());
  comm_.broadcast(t, stages_ - 1);
  return t.to_f64();
}

std::vector<Tensor> PipelineTrainer::evaluate(const std::vector<Tensor>& data) const {
  const bool last = rank_ == stages_ - 1;
  std::vector<Micro> whole = split_batch(data, 1);
  const Micro& m = whole[0];
  std::vector<Tensor> in;
  for (const auto& p : params_) in.push_back(p.tensor);
  if (stage_.receives) {
    in.push_back(received(stage_.forward.type(stage_.forward.inputs()[params_.size()]), m));
    comm_.recv(in.back(), rank_ - 1);
  }
  for (size_t i : stage_.data) in.push_back(m.data[i]);
  std::vector<Tensor> outs = forward_->run(in);
  if (!last) comm_.send(outs[0].contiguous(), rank_ + 1);  // the next stage is receiving it
  std::vector<double> scalars;
  if (last)
    for (size_t k : scalar_outputs_) scalars.push_back(outs[k].at_f64(0));
  scalars = from_last_stage(scalars, scalar_outputs_.size());
  if (last) return outs;
  // Elsewhere: the scalars (as f32, the dtype of the classifiers' loss and counts), nothing else.
  std::vector<Tensor> result(scalar_outputs_.back() + 1);
  for (size_t k = 0; k < scalar_outputs_.size(); ++k) result[scalar_outputs_[k]] = Tensor::scalar(DType::f32, scalars[k]);
  return result;
}

std::vector<NamedTensor> PipelineTrainer::gather_params() const {
  std::vector<NamedTensor> all;
  size_t mine = 0;
  for (size_t i = 0; i < owner_.size(); ++i) {
    Tensor t = owner_[i] == rank_ ? params_[mine++].tensor.clone() : Tensor::zeros(all_types_[i].dtype, shape_values(all_types_[i].shape));
    comm_.broadcast(t, owner_[i]);
    all.push_back({all_names_[i], t});
  }
  return all;
}

void PipelineTrainer::set_params(const std::vector<NamedTensor>& params) {
  if (params.size() != owner_.size()) throw Error(ErrorKind::invalid_argument, cat("set_params: ", params.size(), " parameters for a model of ", owner_.size()));
  for (size_t k = 0; k < stage_.params.size(); ++k) {
    const NamedTensor& p = params[stage_.params[k]];
    if (p.tensor.dtype() != params_[k].tensor.dtype() || p.tensor.shape() != params_[k].tensor.shape())
      throw Error(ErrorKind::invalid_argument, cat("set_params: '", p.name, "' has the wrong dtype or shape"));
    params_[k].tensor = p.tensor.clone();
  }
}

}  // namespace rlx::train
