// rlx bench mlp-train: training throughput (images/s) of an MLP on resident synthetic batches —
// one compiled step (forward, backward, SGD update) per batch — the peer method of
// bench/mlp_train_peers.py (NumPy+OpenBLAS with hand-written backprop, and PyTorch eager).
#include <chrono>
#include <cstdio>

#include "bench.h"
#include "json.h"
#include "models/classifier.h"
#include "rlx/error.h"
#include "train/image_dataset.h"
#include "train/trainer.h"
#include "util/flags.h"
#include "util/thread_pool.h"

namespace rlx::cli {

namespace {

struct Config {
  std::vector<int64_t> hidden;
  int64_t batch;
};

std::vector<int64_t> widths(const std::string& s) { return parse_int_list("hidden", s); }

}  // namespace

int bench_mlp_train(Args& args) {
  std::vector<Config> configs;
  auto hidden = args.value("hidden");
  auto batch = args.value("batch");
  std::string device = args.value_or("device", flags().RLX_DEVICE);
  std::string precision = args.value_or("precision", "f32");
  int64_t steps = args.int_or("steps", 200), warmup = args.int_or("warmup", 10);
  auto threads = args.value("threads");
  bool json = args.flag("json");
  args.finish();
  if (threads) set_num_threads(static_cast<int>(std::stol(*threads)));
  if (hidden || batch) {
    configs.push_back({widths(hidden.value_or("128")), batch ? std::stol(*batch) : 128});
  } else {  // the peer script's two workloads
    configs = {{{128}, 128}, {{512, 512}, 256}};
  }
  if (steps <= 0 || warmup < 0) throw Error(ErrorKind::invalid_argument, "--steps must be positive and --warmup ≥ 0");
  std::vector<std::string> rows;
  if (!json) std::printf("mlp-train: SGD (lr 0.01) on resident synthetic batches, softmax cross-entropy, device %s, %s, %d threads\n\n %-18s %6s %14s %12s\n",
                         device.c_str(), precision.c_str(), num_threads(), "model", "batch", "images/s", "ms/step");
  for (const Config& c : configs) {
    models::ClassifierSpec spec;
    spec.hidden = c.hidden;
    models::Classifier model = models::build_classifier(spec, 0);
    train::OptimizerConfig opt;
    opt.kind = "sgd";
    opt.loss_scale.enabled = precision == "amp-f16";  // f16 products: the loss scaled dynamically
    SessionOptions so;
    so.precision = precision;
    train::Trainer trainer(device, model.forward, model.params, opt, so);
    train::ImageDataset d = train::synthetic_dataset(c.batch, 28, 28, 10, 1);
    std::vector<Tensor> data = {d.images, d.labels};
    for (const Tensor& t : data) trainer.keep_on_device(t);  // resident, as the peer's batch is
    for (int64_t i = 0; i < warmup; ++i) trainer.step(data, 0.01);
    auto t0 = std::chrono::steady_clock::now();
    double loss = 0;
    for (int64_t i = 0; i < steps; ++i) loss = trainer.step(data, 0.01);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!std::isfinite(loss)) throw Error(ErrorKind::internal, "mlp-train: the loss is not finite");
    double ips = static_cast<double>(c.batch * steps) / secs;
    std::string name = "784-" + join(c.hidden, "-") + "-10";
    if (!json) std::printf(" %-18s %6lld %14.0f %12.3f\n", name.c_str(), static_cast<long long>(c.batch), ips, secs / static_cast<double>(steps) * 1000);
    rows.push_back(cat("{\"model\":", json_quote(name), ",\"hidden\":[", join(c.hidden, ","), "],\"batch\":", c.batch, ",\"images_per_second\":", ips,
                       ",\"ms_per_step\":", secs / static_cast<double>(steps) * 1000, ",\"steps\":", steps, ",\"final_loss\":", loss, "}"));
  }
  if (json)
    std::printf("{\"workload\":\"mlp-train\",\"device\":%s,\"precision\":%s,\"threads\":%d,\"results\":%s}\n", json_quote(device).c_str(),
                json_quote(precision).c_str(), num_threads(), json_array(rows).c_str());
  return 0;
}

}  // namespace rlx::cli
