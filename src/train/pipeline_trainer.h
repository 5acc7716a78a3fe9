// Pipeline-parallel training, part three: one rank's stage of the model (train/pipeline_stages.h)
// stepped through a micro-batch schedule (train/pipeline_schedule.h).
//
// Each rank compiles three graphs for its stage only: the forward (the activation it sends on),
// the backward — the stage's forward again followed by its gradient, the GPipe paper's
// re-materialisation, so a stage keeps just the input of each micro-batch in flight, never its
// intermediate activations — and the optimizer update. The backward adds each micro-batch's
// parameter gradients into accumulators inside the graph and sends the gradient of its input back
// to the previous stage; the last stage weights each micro-batch's loss by its share of the batch,
// so after the schedule the accumulators hold the gradient of the whole batch's loss and the
// update equals one process stepping on the whole batch (to f32 rounding: the sums group
// differently).
#pragma once
#include <memory>
#include <optional>
#include <vector>

#include "dist/communicator.h"
#include "rlx/session.h"
#include "train/optimizer.h"
#include "train/pipeline_schedule.h"
#include "train/pipeline_stages.h"
#include "train/trainer.h"

namespace rlx::train {

struct PipelineConfig {
  PipelineScheduleKind schedule = PipelineScheduleKind::one_f_one_b;
  int micro_batches = 4;  // per step; a batch smaller than this runs one sample per micro-batch
};

class PipelineTrainer {
 public:
  // This rank runs stage comm.rank() of comm.size() (split_pipeline); `params` are all of the
  // model's, in input order (each rank keeps its stage's). Every data input's first dim is the
  // batch. Gradient clipping and loss scaling decide over every stage: the squared gradient
  // norms are summed over the stages and each stage scales its own gradients by the same factor;
  // a step is skipped everywhere when any stage's gradients are not finite.
  // With `replicas` (data parallel × pipeline parallel): this pipeline is one of replicas->size()
  // copies, each stepping on its own share of every batch; the copies of this stage (the ranks of
  // `replicas`) average their accumulated gradients before the update, and step() returns the
  // copies' mean loss (extras stay this copy's, as Trainer's).
  PipelineTrainer(const std::string& device, const ir::Graph& forward, const std::vector<NamedTensor>& params, const OptimizerConfig& opt,
                  const SessionOptions& options, dist::Communicator& comm, PipelineConfig config = {}, dist::Communicator* replicas = nullptr);
  ~PipelineTrainer();
  PipelineTrainer(const PipelineTrainer&) = delete;
  PipelineTrainer& operator=(const PipelineTrainer&) = delete;

  // Every rank: the whole batch (each stage reads the data inputs it needs). Returns the batch's
  // loss on every rank; extras() then holds the scalar extras summed over the micro-batches
  // (counts, as the classifiers' correct predictions).
  double step(const std::vector<Tensor>& data, double lr);
  const std::vector<Tensor>& extras() const { return extras_; }
  int64_t steps() const { return steps_; }
  // Loss scaling (OptimizerConfig::loss_scale), as Trainer: the scale the next step uses and
  // the steps skipped because some stage's gradients overflowed.
  double loss_scale() const { return loss_scale_; }
  int64_t skipped_steps() const { return skipped_; }
  // Every rank: the model's outputs on a batch, forward only — scalar outputs on every rank, the
  // others on the last stage only (undefined tensors elsewhere).
  std::vector<Tensor> evaluate(const std::vector<Tensor>& data) const;

  // Every rank: all of the model's parameters, current, in input order (each broadcast from its stage).
  std::vector<NamedTensor> gather_params() const;
  // Every rank: all of the model's parameters; each rank takes its stage's.
  void set_params(const std::vector<NamedTensor>& params);

  const PipelineStage& stage() const { return stage_; }
  int stages() const { return stages_; }
  const PipelineConfig& config() const { return config_; }
  // The most micro-batches this stage has held between forward and backward in any step.
  int peak_in_flight() const { return peak_in_flight_; }

 private:
  struct Micro;
  std::vector<Micro> split_batch(const std::vector<Tensor>& data, int micro_batches) const;  // as even as the rows allow
  Tensor received(const ir::Type& type, const Micro& m) const;  // an empty tensor of the activation's shape for m
  void clear_accumulators();
  // Loss scaling and clipping on the accumulated gradients, agreed over every stage; false: skip the update.
  bool prepare_gradients();
  // The loss and scalar extras (the last stage's sums) on every rank; returns the step's loss.
  double finish_step(std::vector<double> sums);
  // Every rank: the last stage's `values` (its own are ignored elsewhere; `count` of them).
  std::vector<double> from_last_stage(const std::vector<double>& values, size_t count) const;

  dist::Communicator& comm_;
  dist::Communicator* replicas_ = nullptr;  // this stage's copies in the other pipelines (or none)
  int rank_ = 0, stages_ = 1;
  PipelineConfig config_;
  PipelineStage stage_;
  std::vector<ir::Type> data_types_;  // the model's data inputs (their symbols give the activations' shapes)
  std::vector<std::string> all_names_;
  std::vector<ir::Type> all_types_;
  std::vector<int> owner_;           // per model parameter: its stage
  std::vector<NamedTensor> params_;  // this stage's
  std::vector<Tensor> slots_, grads_, extras_;
  std::vector<size_t> scalar_outputs_;  // the model's outputs that are scalars: the loss, then the scalar extras
  int64_t steps_ = 0, applied_ = 0, skipped_ = 0, finite_run_ = 0;
  double clip_norm_ = 0, loss_scale_ = 1;
  LossScaleConfig scaling_;
  int peak_in_flight_ = 0;
  std::optional<CompiledModel> forward_, backward_, update_;  // compiled once the stage is known
};

}  // namespace rlx::train
