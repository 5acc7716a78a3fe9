// rlx train mnist: trains an MLP or CNN classifier on an MNIST-format dataset (Fashion-MNIST
// by default) with one compiled training step per batch shape, then reports test accuracy,
// draws the curves and writes a safetensors checkpoint.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <type_traits>

#include "commands.h"
#include "dist/communicator.h"
#include "formats/safetensors.h"
#include "json.h"
#include "models/classifier.h"
#include "plot.h"
#include "progress.h"
#include "quant/qat.h"
#include "rlx/error.h"
#include "train/image_dataset.h"
#include "train/pipeline_trainer.h"
#include "train/trainer.h"
#include "util/flags.h"

namespace rlx::cli {

namespace {

std::vector<int64_t> parse_widths(const std::string& s) {
  std::vector<int64_t> out;
  for (const auto& part : split(s, ',')) {
    char* end = nullptr;
    long long v = std::strtoll(part.c_str(), &end, 10);
    if (part.empty() || *end || v <= 0) throw Error(ErrorKind::invalid_argument, cat("--hidden expects widths like 128 or 256,128; got '", s, "'"));
    out.push_back(v);
  }
  return out;
}

double scheduled_lr(const std::string& schedule, double lr, int64_t step, int64_t total_steps) {
  if (schedule == "constant") return lr;
  double progress = total_steps > 0 ? static_cast<double>(step) / static_cast<double>(total_steps) : 0;
  if (schedule == "cosine") return 0.5 * lr * (1 + std::cos(M_PI * progress));
  if (schedule == "step") return lr * std::pow(0.1, std::floor(progress * 3));  // ÷10 at 1/3 and 2/3
  throw Error(ErrorKind::invalid_argument, cat("--lr-schedule must be constant, step or cosine, got '", schedule, "'"));
}

Tensor images_for(const models::ClassifierSpec& spec, const Tensor& flat) {
  return Tensor(flat).reshape(models::classifier_input_shape(spec, flat.shape()[0]));
}

struct EvalResult {
  double loss = 0, accuracy = 0;
};

// Pipeline parallel, every rank takes part (each runs its stage); the loss and count reach all.
template <class T>
EvalResult evaluate(const T& t, const models::ClassifierSpec& spec, const train::ImageDataset& d) {
  train::BatchIterator it(d, 1000, false, 0);
  Tensor x, y;
  double loss = 0, correct = 0;
  while (it.next(x, y)) {
    auto out = t.evaluate({images_for(spec, x), y});
    loss += out[0].at_f64(0) * static_cast<double>(x.shape()[0]);
    correct += out[1].at_f64(0);
  }
  return {loss / static_cast<double>(d.count), correct / static_cast<double>(d.count)};
}

// Every parameter of the model, current (pipeline parallel: gathered from the stages — every rank calls it).
std::vector<train::NamedTensor> all_params(const train::Trainer& t) { return t.params(); }
std::vector<train::NamedTensor> all_params(const train::PipelineTrainer& t) { return t.gather_params(); }

template <class T>
void load_checkpoint(T& t, const std::string& path) {
  formats::SafetensorsFile f = formats::read_safetensors(path);
  std::vector<train::NamedTensor> params = all_params(t);
  for (auto& p : params) {
    const formats::TensorView* v = f.find(p.name);
    if (!v) throw Error(ErrorKind::format, cat(path, ": no tensor '", p.name, "' (was it saved from a different model?)"));
    Tensor loaded = formats::to_tensor(*v);
    if (loaded.dtype() != p.tensor.dtype() || loaded.shape() != p.tensor.shape())
      throw Error(ErrorKind::format, cat(path, ": tensor '", p.name, "' has the wrong dtype or shape for this model"));
    p.tensor = loaded;
  }
  t.set_params(params);
}

}  // namespace

namespace {

// What the training loop needs besides its trainer.
struct TrainJob {
  bool json = false, lead = true;
  int data_ranks = 1;  // data parallel: the ranks the batch is split over
  models::ClassifierSpec spec;
  std::string data;
  const train::ImageDataset *train_set = nullptr, *test_set = nullptr;
  int64_t batch = 0, epochs = 0, seed = 0;
  double lr = 0;
  std::string schedule, device, precision;
  train::OptimizerConfig opt;
  std::string save, load, plot;
  int rank = 0;
};

// The epochs, the evaluation, the plot and the checkpoint — for one process, data parallel
// (train::Trainer) or one pipeline stage (train::PipelineTrainer).
template <class T>
int run_training(T& trainer, const TrainJob& job) {
  const bool lead = job.lead, json = job.json;
  const auto& spec = job.spec;
  const auto& opt = job.opt;
  const train::ImageDataset &train_set = *job.train_set, &test_set = *job.test_set;
  const std::string &save = job.save, &plot = job.plot, &schedule = job.schedule, &device = job.device;
  const int64_t epochs = job.epochs, batch = job.batch;
  const double lr = job.lr;
  const int ranks = job.data_ranks, rank = job.data_ranks > 1 ? job.rank : 0;
  constexpr bool pipeline = std::is_same_v<T, train::PipelineTrainer>;
  if (!job.load.empty()) load_checkpoint(trainer, job.load);
  if (!json && lead)
    std::printf("training %s %s%s on %s: %lld train / %lld test images, batch %lld, %s lr %g, device %s, precision %s\n", spec.kind.c_str(),
                join(spec.hidden, ",").c_str(), spec.qat || spec.qat_activations ? cat(" (QAT", spec.qat ? " weights " + spec.qat->str() : "", spec.qat_activations ? " activations int8" : "", ")").c_str() : "", job.data.c_str(), static_cast<long long>(train_set.count), static_cast<long long>(test_set.count),
                static_cast<long long>(batch), opt.kind.c_str(), lr, device.c_str(), job.precision.c_str());

  train::BatchIterator it(train_set, batch, true, static_cast<uint64_t>(job.seed) + 1);
  int64_t total_steps = epochs * it.batches_per_epoch();
  std::vector<double> step_x, step_loss, epoch_x, train_acc, test_acc;
  std::vector<std::string> epoch_rows;
  double images_per_second = 0, smoothed = NAN;
  double train_seconds = 0;
  int64_t trained_images = 0;
  for (int64_t e = 1; e <= epochs; ++e) {
    it.new_epoch();
    Progress bar(cat("epoch ", e, "/", epochs), it.batches_per_epoch(), !json && lead);
    Tensor x, y;
    double correct = 0, loss_sum = 0;
    int64_t seen = 0, b = 0;
    auto t0 = std::chrono::steady_clock::now();
    while (it.next(x, y)) {
      if (ranks > 1) {  // this rank's share of the global batch (a last batch's remainder is dropped)
        const int64_t share = x.shape()[0] / ranks;
        if (share == 0) continue;
        x = x.slice(0, rank * share, (rank + 1) * share).contiguous();
        y = y.slice(0, rank * share, (rank + 1) * share).contiguous();
      }
      double l = trainer.step({images_for(spec, x), y}, scheduled_lr(schedule, lr, trainer.steps(), total_steps));
      if (!std::isfinite(l)) throw Error(ErrorKind::runtime, cat("the loss became ", l, " at step ", trainer.steps(), " (lower --lr?)"));
      correct += trainer.extras()[0].at_f64(0);
      loss_sum += l * static_cast<double>(x.shape()[0]);
      seen += x.shape()[0];
      smoothed = std::isnan(smoothed) ? l : 0.98 * smoothed + 0.02 * l;
      step_x.push_back(static_cast<double>(trainer.steps()));
      step_loss.push_back(smoothed);
      double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      char status[128];
      std::snprintf(status, sizeof(status), "loss %.4f acc %.3f %.1fk img/s", loss_sum / seen, correct / seen, seen / std::max(secs, 1e-9) / 1000);
      bar.update(++b, status);
    }
    bar.finish();
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    train_seconds += secs;
    trained_images += seen;
    if (!lead && !pipeline) continue;  // rank 0 evaluates and reports (pipeline: every stage takes part)
    EvalResult test = evaluate(trainer, spec, test_set);
    if (!lead) continue;
    epoch_x.push_back(static_cast<double>(e));
    train_acc.push_back(correct / static_cast<double>(seen));
    test_acc.push_back(test.accuracy);
    if (!json)
      std::printf("epoch %lld: train loss %.4f acc %.4f | test loss %.4f acc %.4f | %.0f images/s\n", static_cast<long long>(e),
                  loss_sum / seen, correct / seen, test.loss, test.accuracy, seen / secs);
    epoch_rows.push_back(cat("{\"epoch\":", e, ",\"train_loss\":", loss_sum / seen, ",\"train_accuracy\":", correct / seen,
                             ",\"test_loss\":", test.loss, ",\"test_accuracy\":", test.accuracy, ",\"images_per_second\":", seen / secs, "}"));
  }
  if (!lead && !pipeline) return 0;
  images_per_second = train_seconds > 0 ? static_cast<double>(trained_images) * ranks / train_seconds : 0;  // all data-parallel ranks
  EvalResult final_test = evaluate(trainer, spec, test_set);
  std::vector<train::NamedTensor> final_params;
  if (!save.empty()) final_params = all_params(trainer);
  if (!lead) return 0;
  if (!plot.empty()) {
    Panel loss_panel{"training loss (smoothed)", "step", {{"loss", step_x, step_loss, 0x1f77b4}}};
    Panel acc_panel{"accuracy", "epoch", {{"train", epoch_x, train_acc, 0x2ca02c}, {"test", epoch_x, test_acc, 0xd62728}}};
    write_plot_png(plot, {loss_panel, acc_panel});
  }
  if (!save.empty()) {
    std::vector<formats::TensorView> views;
    for (const auto& p : final_params) views.push_back(formats::view_of(p.name, p.tensor));
    formats::write_safetensors(save, views,
                               {{"rlx.model", spec.kind}, {"rlx.hidden", join(spec.hidden, ",")}, {"rlx.epochs", std::to_string(epochs)},
                                {"rlx.test_accuracy", std::to_string(final_test.accuracy)}, {"rlx.qat", spec.qat ? spec.qat->str() : ""},
                                {"rlx.qat_activations", spec.qat_activations ? "int8" : ""}});
  }
  if (json) {
    std::string scaling = "null";
    if (opt.loss_scale.enabled) scaling = cat("{\"final\":", trainer.loss_scale(), ",\"skipped_steps\":", trainer.skipped_steps(), "}");
    std::string pipe_json = "null";
    if constexpr (pipeline)
      pipe_json = cat("{\"stages\":", trainer.stages(), ",\"schedule\":\"", train::pipeline_schedule_name(trainer.config().schedule), "\",\"micro_batches\":",
                      trainer.config().micro_batches, ",\"data_parallel_copies\":", job.data_ranks, ",\"peak_in_flight_stage0\":", trainer.peak_in_flight(), "}");
    std::printf("{\"task\":\"mnist\",\"model\":%s,\"device\":%s,\"precision\":%s,\"epochs\":%lld,\"batch\":%lld,\"test_accuracy\":%.6f,\"test_loss\":%.6f,"
                "\"images_per_second\":%.1f,\"loss_scale\":%s,\"pipeline\":%s,\"per_epoch\":%s,\"checkpoint\":%s,\"plot\":%s}\n",
                json_quote(spec.kind).c_str(), json_quote(device).c_str(), json_quote(job.precision).c_str(), static_cast<long long>(epochs), static_cast<long long>(batch),
                final_test.accuracy, final_test.loss, images_per_second, scaling.c_str(), pipe_json.c_str(), json_array(epoch_rows).c_str(),
                save.empty() ? "null" : json_quote(save).c_str(), plot.empty() ? "null" : json_quote(plot).c_str());
  } else {
    if (opt.loss_scale.enabled)
        std::printf("loss scale %g at the end, %lld of %lld steps skipped (non-finite gradients)\n", trainer.loss_scale(),
                  static_cast<long long>(trainer.skipped_steps()), static_cast<long long>(trainer.steps()));
    std::printf("test accuracy %.4f (loss %.4f)%s%s\n", final_test.accuracy, final_test.loss, save.empty() ? "" : cat(", checkpoint ", save).c_str(),
                plot.empty() ? "" : cat(", plot ", plot).c_str());
  }
  return 0;
}

}  // namespace


int cmd_train(Args& args) {
  bool json = args.flag("json");
  std::string data = args.value_or("data", "/usr/share/datasets/fashion-mnist");
  models::ClassifierSpec spec;
  spec.kind = args.value_or("model", "mlp");
  spec.hidden = parse_widths(args.value_or("hidden", spec.kind == "cnn" ? "16,32" : "128"));
  // quantization-aware training: layers see their weights on an int4/int8 grid (fake_quant)
  if (auto q = args.value("qat")) spec.qat = ops::WeightGrid::parse(*q);
  // ... and the activations on learned int8 grids (LSQ), started from min-max calibration
  spec.qat_activations = args.flag("qat-activations");
  int64_t epochs = args.int_or("epochs", 3), batch = args.int_or("batch", 128), seed = args.int_or("seed", 0);
  int64_t limit = args.int_or("limit", 0);  // train on the first N images only (quick runs)
  train::OptimizerConfig opt;
  opt.kind = args.value_or("optimizer", "adam");
  double lr = args.float_or("lr", opt.kind == "sgd" ? 0.05 : 1e-3);
  opt.momentum = args.float_or("momentum", opt.kind == "sgd" ? 0.9 : 0.0);
  opt.nesterov = args.flag("nesterov");
  opt.weight_decay = args.float_or("weight-decay", 0.0);
  opt.clip_norm = args.float_or("clip-norm", 0.0);
  std::string schedule = args.value_or("lr-schedule", "constant");
  std::string device = args.value_or("device", flags().RLX_DEVICE);
  // amp / bf16: the step's matmuls in bf16 with f32 accumulation; parameters, optimizer state
  // and reductions stay f32 (master weights)
  // amp-f16: f16 products, so the loss is scaled dynamically (--loss-scale: its first value)
  SessionOptions session_options;
  session_options.precision = args.value_or("precision", "f32");
  opt.loss_scale.enabled = session_options.precision.compute == "amp-f16";
  if (double first = args.float_or("loss-scale", NAN); !std::isnan(first)) {
    opt.loss_scale.enabled = true;
    opt.loss_scale.init = first;  // validated with the optimizer (> 0, finite)
  }
  opt.loss_scale.interval = args.int_or("loss-scale-interval", opt.loss_scale.interval);
  std::string save = args.value_or("save", ""), load = args.value_or("load", ""), plot = args.value_or("plot", "");
  if (auto th = args.value("threads")) set_flag("RLX_NUM_THREADS", *th);
  // data parallel: one rank of `rlx launch -n N -- rlx train … --data-parallel`; each global batch
  // split evenly over the ranks, the gradients averaged (rank 0 reports, evaluates and saves)
  const bool data_parallel = args.flag("data-parallel");
  // pipeline parallel: one stage per rank of `rlx launch -n S -- rlx train … --pipeline-parallel`;
  // every rank reads the whole batch, split into --micro-batches run by --pipeline-schedule
  const bool pipeline = args.flag("pipeline-parallel");
  train::PipelineConfig pipe;
  pipe.schedule = train::pipeline_schedule_kind(args.value_or("pipeline-schedule", "1f1b"));
  const int64_t micro_batches = args.int_or("micro-batches", pipe.micro_batches);
  if (micro_batches < 1 || micro_batches > (1 << 16)) throw Error(ErrorKind::invalid_argument, cat("--micro-batches must be between 1 and 65536, got ", micro_batches));
  pipe.micro_batches = static_cast<int>(micro_batches);
  // both: --pipeline-stages S of the N ranks form each pipeline, N / S copies of it share every batch
  const int64_t pipeline_stages = args.int_or("pipeline-stages", 0);
  if (pipeline_stages < 0) throw Error(ErrorKind::invalid_argument, cat("--pipeline-stages must be ≥ 1, got ", pipeline_stages));
  std::vector<std::string> pos = args.positionals();
  args.finish();
  if (pos.size() != 1 || pos[0] != "mnist") throw Error(ErrorKind::invalid_argument, "usage: rlx train mnist [options] (the only task is mnist)");
  if (epochs < 0) throw Error(ErrorKind::invalid_argument, "--epochs must be ≥ 0");
  scheduled_lr(schedule, lr, 0, 1);  // validates the schedule name early

  train::ImageDataset train_set = train::load_mnist_split(data, "train"), test_set = train::load_mnist_split(data, "t10k");
  if (limit < 0) throw Error(ErrorKind::invalid_argument, "--limit must be ≥ 0");
  if (limit > 0 && limit < train_set.count) {
    train_set.count = limit;
    train_set.images = train_set.images.slice(0, 0, limit).contiguous();
    train_set.labels = train_set.labels.slice(0, 0, limit).contiguous();
  }
  spec.height = train_set.height;
  spec.width = train_set.width;
  models::Classifier model = models::build_classifier(spec, static_cast<uint64_t>(seed));
  if (spec.qat_activations && load.empty()) {  // (a checkpoint brings its learned grids)
    int64_t n = std::min<int64_t>(1000, train_set.count);
    Tensor first = Tensor(train_set.images.slice(0, 0, n).contiguous()).reshape(models::classifier_input_shape(spec, n));
    quant::calibrate_activation_grids(model, spec, first, device);
  }
  std::unique_ptr<dist::Communicator> comm;
  if (data_parallel && pipeline && pipeline_stages == 0)
    throw Error(ErrorKind::invalid_argument, "--data-parallel with --pipeline-parallel needs --pipeline-stages S (each pipeline's ranks; the others are its copies)");
  if (pipeline_stages && !(data_parallel && pipeline)) throw Error(ErrorKind::invalid_argument, "--pipeline-stages is for --data-parallel with --pipeline-parallel");
  if (data_parallel || pipeline) comm = dist::connect(dist::Rendezvous::from_env());
  const int rank = comm ? comm->rank() : 0, ranks = comm ? comm->size() : 1;
  const bool lead = rank == 0;
  // data parallel × pipeline parallel: rank = copy · S + stage
  const int stages = pipeline_stages ? static_cast<int>(pipeline_stages) : ranks;
  if (pipeline_stages && (pipeline_stages > ranks || ranks % pipeline_stages != 0))
    throw Error(ErrorKind::invalid_argument, cat("--pipeline-stages ", pipeline_stages, " does not divide the ", ranks, " ranks into pipelines"));
  const int copies = data_parallel ? ranks / (pipeline ? stages : 1) : 1, copy = data_parallel ? rank / (pipeline ? stages : 1) : 0;
  if (data_parallel && batch % copies != 0) throw Error(ErrorKind::invalid_argument, cat("--batch ", batch, " does not split evenly over ", copies, " data-parallel copies"));
  std::unique_ptr<dist::Communicator> pipe_comm, copies_comm;
  if (data_parallel && pipeline) {
    pipe_comm = comm->split(copy, rank % stages);
    copies_comm = comm->split(rank % stages, copy);
  }
  if (comm)  // every rank must train the same model the same way on the same data
    dist::require_same_config(*comm, "training configuration",
                              cat(spec.kind, " ", join(spec.hidden, ","), spec.qat ? " qat " + spec.qat->str() : "", spec.qat_activations ? " qat-activations" : "", ", ", train_set.count, " images ",
                                  train_set.height, "x", train_set.width, ", epochs ", epochs, ", batch ", batch, ", seed ", seed, ", ", opt.kind, " lr ", lr,
                                  " momentum ", opt.momentum, " wd ", opt.weight_decay, " clip ", opt.clip_norm, ", ", schedule, ", precision ",
                                  session_options.precision.compute, ", loss scale ", opt.loss_scale.enabled ? opt.loss_scale.init : 0.0, ", load ", load,
                                  ", save ", save, pipeline ? cat(", pipeline ", train::pipeline_schedule_name(pipe.schedule), " × ", pipe.micro_batches) : std::string(),
                                  data_parallel ? cat(", data parallel × ", copies) : std::string()));
  TrainJob job{json, lead, copies, spec, data, &train_set, &test_set, batch, epochs, seed, lr, schedule, device,
               session_options.precision.compute, opt, save, load, plot, copy};
  if (pipeline) {
    train::PipelineTrainer trainer(device, model.forward, model.params, opt, session_options, pipe_comm ? *pipe_comm : *comm, pipe, copies_comm.get());
    if (!json && lead)
      std::printf("pipeline parallel: %d stages%s, %s schedule, %d micro-batches per step; this rank's stage: %zu parameters, sends '%s'\n", stages,
                  copies > 1 ? cat(" × ", copies, " data-parallel copies").c_str() : "", train::pipeline_schedule_name(pipe.schedule), pipe.micro_batches,
                  trainer.stage().params.size(), trainer.stage().sends.c_str());
    return run_training(trainer, job);
  }
  train::Trainer trainer(device, model.forward, model.params, opt, session_options, comm.get());
  return run_training(trainer, job);
}


}  // namespace rlx::cli
