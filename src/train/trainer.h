// Runs training steps: holds the parameters and optimizer state, feeds batches, and updates
// everything in place through CompiledModel::run_into (no allocation per step).
#pragma once
#include <string>
#include <vector>

#include <memory>
#include <optional>

#include "dist/communicator.h"
#include "dist/graph_collectives.h"
#include "ir/graph.h"
#include "rlx/session.h"
#include "train/train_step.h"

namespace rlx::train {

struct NamedTensor {
  std::string name;
  Tensor tensor;
};

class Trainer {
 public:
  // forward: inputs = [params…, data…], outputs = [loss, extras…]; `params` give the initial
  // values in input order.
  // With `comm` of more than one rank, steps are data parallel: each rank's backward on its own
  // batch, the gradients averaged over the ranks in buckets by all-reduce nodes of the step graph
  // itself (train/data_parallel.h), then the same update on every rank — equal to one process
  // stepping on the ranks' batches together. The loss reported is the ranks' mean.
  Trainer(const std::string& device, const ir::Graph& forward, std::vector<NamedTensor> params, const OptimizerConfig& opt,
          const SessionOptions& options = {}, dist::Communicator* comm = nullptr);
  ~Trainer();
  Trainer(const Trainer&) = delete;  // parameters may live on the device, owned by this trainer
  Trainer& operator=(const Trainer&) = delete;

  // One optimizer step on a batch; returns the loss. extras() holds the step's extra outputs.
  double step(const std::vector<Tensor>& data, double lr);
  const std::vector<Tensor>& extras() const { return extras_; }
  // The forward graph on a batch with the current parameters: [loss, extras…].
  std::vector<Tensor> evaluate(const std::vector<Tensor>& data) const;

  // The current parameters (copied back from the device first where they live there).
  const std::vector<NamedTensor>& params() const;
  void set_params(const std::vector<NamedTensor>& params);
  int64_t steps() const { return steps_; }
  // Loss scaling (OptimizerConfig::loss_scale): the scale the next step uses, and the steps
  // skipped so far because their gradients overflowed.
  double loss_scale() const { return loss_scale_; }
  int64_t skipped_steps() const { return skipped_; }
  const CompiledModel& step_model() const { return step_; }
  // Keeps `t` — a batch fed to many steps — in device memory until the trainer goes, so steps
  // do not copy it in (parameters and optimizer state always stay there between steps). False
  // where the device's memory is host memory.
  bool keep_on_device(const Tensor& t);

 private:
  std::vector<NamedTensor> params_;
  std::vector<Tensor> slots_, extras_;
  std::vector<Tensor> inputs_, outputs_;  // reused every step
  size_t num_data_ = 0;
  int64_t steps_ = 0, applied_ = 0;  // applied_: steps that updated (Adam's step counter)
  LossScaleConfig scaling_;
  double loss_scale_ = 1.0;
  int64_t skipped_ = 0, finite_run_ = 0;
  CompiledModel step_, forward_;
  dist::Communicator* comm_ = nullptr;
  std::optional<dist::GraphCollectives> lent_;  // data parallel: the step graph's all-reduces use comm_
  std::vector<Tensor> kept_;  // kept on the device by this trainer (released when it goes)
  int64_t kept(const Tensor& t) const;  // t's index in kept_, or -1
};

}  // namespace rlx::train
