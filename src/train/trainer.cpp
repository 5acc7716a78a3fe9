#include "train/trainer.h"

#include <algorithm>
#include <limits>

#include "train/data_parallel.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::train {

namespace {

bool data_parallel(const dist::Communicator* comm) { return comm && comm->size() > 1; }

std::vector<ir::Type> param_types(const ir::Graph& forward, size_t n) {
  std::vector<ir::Type> t;
  for (size_t i = 0; i < n && i < forward.inputs().size(); ++i) t.push_back(forward.type(forward.inputs()[i]));
  return t;
}

// Data parallel: gradient buckets of this many bytes, each averaged by one all-reduce as soon as
// the backward has produced it (train/data_parallel.h).
constexpr int64_t kBucketBytes = 256 << 10;

// The step graph: forward, backward and update; data parallel, the parameters replicated in
// buckets whose gradients are averaged over the ranks inside the graph.
ir::Graph step_graph(const ir::Graph& forward, size_t num_params, const OptimizerConfig& opt, const dist::Communicator* comm) {
  if (!data_parallel(comm)) return build_train_step(forward, num_params, opt).graph;
  return build_train_step(replicate_parameters(forward, num_params, kBucketBytes), num_params, opt).graph;
}

}  // namespace

Trainer::Trainer(const std::string& device, const ir::Graph& forward, std::vector<NamedTensor> params, const OptimizerConfig& opt,
                 const SessionOptions& options, dist::Communicator* comm)
    : params_(std::move(params)),
      step_(Session(device, options).compile(Graph(std::make_shared<ir::Graph>(step_graph(forward, params_.size(), opt, comm))))),
      forward_(Session(device, options).compile(Graph(std::make_shared<ir::Graph>(forward)))),
      comm_(comm) {
  if (data_parallel(comm_)) lent_.emplace(*comm_);
  num_data_ = forward.inputs().size() - params_.size();
  scaling_ = opt.loss_scale;
  if (scaling_.enabled) loss_scale_ = scaling_.init;
  for (size_t i = 0; i < params_.size(); ++i) {
    const ir::Type& t = forward.type(forward.inputs()[i]);
    if (params_[i].tensor.dtype() != t.dtype || params_[i].tensor.shape() != shape_values(t.shape))
      throw Error(ErrorKind::invalid_argument, cat("parameter '", params_[i].name, "' must be ", ir::type_str(t)));
    params_[i].tensor = params_[i].tensor.clone();
  }
  int per = optimizer_slots(opt);
  for (const auto& p : params_)
    for (int s = 0; s < per; ++s) slots_.push_back(Tensor::zeros(p.tensor.dtype(), p.tensor.shape()));
  // On a GPU, parameters and slots stay in device memory: a step then copies only its batch
  // in and its loss out (donated outputs update them in place).
  for (const auto& p : params_) keep_on_device(p.tensor);
  for (const auto& s : slots_) keep_on_device(s);
}

Trainer::~Trainer() {
  for (const Tensor& t : kept_)
    if (t.defined()) step_.release_from_device(t, false);
}

bool Trainer::keep_on_device(const Tensor& t) {
  if (!step_.keep_on_device(t)) return false;
  kept_.push_back(t);
  return true;
}

int64_t Trainer::kept(const Tensor& t) const {
  for (size_t i = 0; i < kept_.size(); ++i)
    if (kept_[i].defined() && kept_[i].data() == t.data()) return static_cast<int64_t>(i);
  return -1;
}

const std::vector<NamedTensor>& Trainer::params() const {
  for (const auto& p : params_)
    if (kept(p.tensor) >= 0) {  // fresh host values; stays resident for the next step
      step_.release_from_device(p.tensor, true);
      step_.keep_on_device(p.tensor);
    }
  return params_;
}

double Trainer::step(const std::vector<Tensor>& data, double lr) {
  if (data.size() != num_data_) throw Error(ErrorKind::invalid_argument, cat("a training step takes ", num_data_, " data tensors, got ", data.size()));
  ++steps_;
  inputs_.clear();
  for (const auto& p : params_) inputs_.push_back(p.tensor);
  inputs_.insert(inputs_.end(), slots_.begin(), slots_.end());
  inputs_.insert(inputs_.end(), data.begin(), data.end());
  inputs_.push_back(Tensor::scalar(DType::f32, lr));
  inputs_.push_back(Tensor::scalar(DType::f32, static_cast<double>(applied_ + 1)));
  if (scaling_.enabled) inputs_.push_back(Tensor::scalar(DType::f32, loss_scale_));
  // Parameters and slots are written back into their own tensors; loss and extras are new.
  outputs_.resize(params_.size() + slots_.size());
  for (size_t i = 0; i < params_.size(); ++i) outputs_[i] = params_[i].tensor;
  for (size_t i = 0; i < slots_.size(); ++i) outputs_[params_.size() + i] = slots_[i];
  size_t base = params_.size() + slots_.size();
  outputs_.resize(base);  // loss and extras: fresh tensors (their shapes follow the batch)
  step_.run_into(inputs_, outputs_);
  auto extras_end = outputs_.end();
  if (scaling_.enabled) {
    --extras_end;
    if (outputs_.back().at_f64(0) != 0) {
      ++applied_;
      if (++finite_run_ >= scaling_.interval) {
        loss_scale_ = std::min(loss_scale_ * scaling_.growth, static_cast<double>(std::numeric_limits<float>::max()));
        finite_run_ = 0;
      }
    } else {  // the graph left params and slots as they were
      ++skipped_;
      finite_run_ = 0;
      loss_scale_ = std::max(loss_scale_ * scaling_.backoff, static_cast<double>(std::numeric_limits<float>::min()));
    }
  } else {
    ++applied_;
  }
  extras_.assign(outputs_.begin() + static_cast<long>(base) + 1, extras_end);  // this rank's
  if (!data_parallel(comm_)) return outputs_[base].at_f64(0);
  Tensor loss = Tensor::scalar(DType::f32, outputs_[base].at_f64(0));  // the job's: the ranks' mean
  comm_->all_reduce(loss, dist::ReduceOp::avg);
  return loss.at_f64(0);
}

std::vector<Tensor> Trainer::evaluate(const std::vector<Tensor>& data) const {
  std::vector<Tensor> in;
  for (const auto& p : params_) in.push_back(p.tensor);
  in.insert(in.end(), data.begin(), data.end());
  return forward_.run(in);
}

void Trainer::set_params(const std::vector<NamedTensor>& params) {
  if (params.size() != params_.size()) throw Error(ErrorKind::invalid_argument, "set_params: wrong number of parameters");
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i].tensor.dtype() != params_[i].tensor.dtype() || params[i].tensor.shape() != params_[i].tensor.shape())
      throw Error(ErrorKind::invalid_argument, cat("set_params: '", params[i].name, "' has the wrong dtype or shape"));
    Tensor fresh = params[i].tensor.clone();
    if (int64_t k = kept(params_[i].tensor); k >= 0) {
      Tensor& slot = kept_[static_cast<size_t>(k)];
      step_.release_from_device(slot, false);
      slot = step_.keep_on_device(fresh) ? fresh : Tensor();
    }
    params_[i].tensor = fresh;
  }
}

}  // namespace rlx::train
