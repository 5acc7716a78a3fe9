// rlx quantize CHECKPOINT.safetensors --to int8: an image classifier trained by `rlx train mnist`
// quantized after training (static int8: calibrated activation grids, per-channel weights,
// integer layers) and written as an .rlx graph — kept only when its test accuracy stays within
// the --gate of the float model's on the same images (exit 3 and nothing written otherwise).
#include <algorithm>
#include <chrono>
#include <functional>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "commands.h"
#include "formats/safetensors.h"
#include "ir/text.h"
#include "json.h"
#include "models/classifier.h"
#include "progress.h"
#include "quant/compare.h"
#include "quant/ptq.h"
#include "quant/qat.h"
#include "quant/weight_only.h"
#include "rlx/error.h"
#include "rlx/graph.h"
#include "rlx/session.h"
#include "train/image_dataset.h"
#include "util/flags.h"

namespace rlx::cli {

namespace {

namespace fs = std::filesystem;

struct LoadedClassifier {
  models::ClassifierSpec spec;            // as trained (with its QAT grid, if any)
  models::Classifier model;               // the float layers, no QAT grid: what gets quantized
  models::Classifier trained;             // the model as trained: the accuracy to keep
  std::map<ir::ValueId, Tensor> weights;  // the forward graphs' parameter inputs (the same in both)
  std::map<ir::ValueId, Tensor> grids;    // the trained graph's activation-grid inputs (activation QAT)
  std::vector<train::NamedTensor> grid_values;
  ir::ValueId images = ir::kNoValue, logits = ir::kNoValue, trained_images = ir::kNoValue;
  int64_t float_bytes = 0;
};

LoadedClassifier load_classifier(const std::string& path) {
  formats::SafetensorsFile f = formats::read_safetensors(path);
  auto kind = f.metadata.find("rlx.model");
  auto hidden = f.metadata.find("rlx.hidden");
  if (kind == f.metadata.end() || hidden == f.metadata.end())
    throw Error(ErrorKind::invalid_argument, cat(path, ": not a classifier checkpoint of `rlx train mnist --save` (no rlx.model/rlx.hidden metadata)"));
  LoadedClassifier c;
  c.spec.kind = kind->second;
  c.spec.hidden.clear();
  for (const auto& w : split(hidden->second, ',')) c.spec.hidden.push_back(std::stoll(w));
  if (auto q = f.metadata.find("rlx.qat"); q != f.metadata.end() && !q->second.empty()) c.spec.qat = ops::WeightGrid::parse(q->second);
  if (auto q = f.metadata.find("rlx.qat_activations"); q != f.metadata.end() && !q->second.empty()) {
    if (q->second != "int8") throw Error(ErrorKind::format, cat(path, ": rlx.qat_activations is '", q->second, "'; RLX trains int8 activation grids only"));
    c.spec.qat_activations = true;
  }
  c.trained = models::build_classifier(c.spec, 0);
  models::ClassifierSpec plain = c.spec;
  plain.qat.reset();
  plain.qat_activations = false;
  c.model = models::build_classifier(plain, 0);
  const ir::Graph& g = c.model.forward;
  for (size_t i = 0; i < c.model.params.size(); ++i) {
    const auto& p = c.model.params[i];
    const formats::TensorView* v = f.find(p.name);
    if (!v) throw Error(ErrorKind::format, cat(path, ": no tensor '", p.name, "' for this ", c.spec.kind));
    Tensor t = formats::to_tensor(*v).clone();
    if (t.dtype() != p.tensor.dtype() || t.shape() != p.tensor.shape())
      throw Error(ErrorKind::format, cat(path, ": tensor '", p.name, "' has the wrong dtype or shape for this ", c.spec.kind));
    c.weights[g.inputs()[i]] = t;
    if (c.trained.forward.inputs()[i] != g.inputs()[i]) throw Error(ErrorKind::internal, "the QAT graph's parameters moved");
    c.float_bytes += static_cast<int64_t>(t.nbytes());
  }
  // the learned grids: parameters of the trained graph only, after the weights
  for (size_t i = c.model.params.size(); i < c.trained.params.size(); ++i) {
    const auto& p = c.trained.params[i];
    const formats::TensorView* v = f.find(p.name);
    if (!v) throw Error(ErrorKind::format, cat(path, ": no tensor '", p.name, "' (an activation grid of this QAT model)"));
    Tensor t = formats::to_tensor(*v).clone();
    if (t.dtype() != p.tensor.dtype() || t.shape() != p.tensor.shape()) throw Error(ErrorKind::format, cat(path, ": tensor '", p.name, "' must be an f32 scalar"));
    c.grids[c.trained.forward.inputs()[i]] = t;
    c.grid_values.push_back({p.name, t});
  }
  c.images = g.inputs()[c.model.params.size()];
  c.trained_images = c.trained.forward.inputs()[c.trained.params.size()];
  c.logits = g.outputs()[2];
  return c;
}

Tensor images_for(const models::ClassifierSpec& spec, const Tensor& flat) {
  return Tensor(flat).reshape(models::classifier_input_shape(spec, flat.shape()[0]));
}

// Predictions of a logits model over the whole split, batch by batch.
std::vector<int64_t> predict(const CompiledModel& m, const std::function<std::vector<Tensor>(const Tensor&)>& inputs,
                             const train::ImageDataset& d, const char* what, bool progress) {
  std::vector<int64_t> out;
  train::BatchIterator it(d, 1000, false, 0);
  Progress bar(what, it.batches_per_epoch(), progress);
  Tensor x, y;
  int64_t b = 0;
  while (it.next(x, y)) {
    Tensor logits = m.run(inputs(x))[0].contiguous();
    int64_t n = logits.shape()[0], k = logits.shape()[1];
    for (int64_t r = 0; r < n; ++r) {
      int64_t best = 0;
      for (int64_t c = 1; c < k; ++c)
        if (logits.at_f64(r * k + c) > logits.at_f64(r * k + best)) best = c;
      out.push_back(best);
    }
    bar.update(++b, "");
  }
  bar.finish();
  return out;
}

int64_t int8_bytes(const ir::Graph& g) {
  int64_t n = 0;
  for (const ir::Node& node : g.nodes())
    if (node.op == ir::Op::constant) n += static_cast<int64_t>(node.attrs.tensor("value").nbytes());
  return n;
}

}  // namespace

int cmd_quantize_classifier(Args& args, const std::string& to, const std::string& out) {
  const std::string data = args.value_or("data", "/usr/share/datasets/fashion-mnist");
  const int64_t calib_count = args.int_or("calib", 2000);
  const std::string observer = args.value_or("observer", "minmax");
  const double percentile = args.float_or("percentile", 99.99);
  const auto group = args.value("group");
  const bool asymmetric = args.flag("asymmetric");
  const std::string gate_text = args.value_or("gate", "");
  const std::string device = args.value_or("device", "cpu");
  if (auto th = args.value("threads")) set_flag("RLX_NUM_THREADS", *th);
  const bool json = args.flag("json");
  std::vector<std::string> files = args.positionals();
  args.finish();
  const bool int8 = to == "int8";
  if (files.size() != 1) throw Error(ErrorKind::invalid_argument, cat("rlx quantize --to ", to, " takes one CHECKPOINT.safetensors (from rlx train mnist --save)"));
  if (out.empty()) throw Error(ErrorKind::invalid_argument, cat("rlx quantize --to ", to, " needs -o OUT.rlx"));
  if (int8 && (group || asymmetric))
    throw Error(ErrorKind::invalid_argument, "--group and --asymmetric set int4's weight grid; int8 PTQ quantizes weights per channel, symmetric");
  if (calib_count < 1) throw Error(ErrorKind::invalid_argument, cat("--calib must be at least 1 image, got ", calib_count));
  if (!(percentile > 50 && percentile <= 100)) throw Error(ErrorKind::invalid_argument, cat("--percentile must be in (50, 100], got ", percentile));
  const fs::path folder = fs::path(out).parent_path();
  if (!folder.empty() && !fs::is_directory(folder)) throw Error(ErrorKind::io, cat("-o ", out, ": the folder ", folder.string(), " does not exist"));
  quant::PtqOptions opt;
  opt.observer = quant::observer_kind(observer);
  opt.percentile = percentile;
  opt.device = device;
  const quant::Gate gate = quant::Gate::parse(gate_text);
  if (gate.kld >= 0 || gate.kld_p99 >= 0 || gate.top1 >= 0 || gate.ppl >= 0)
    throw Error(ErrorKind::invalid_argument, "--gate: a classifier is judged by accuracy=POINTS (the most its test accuracy may drop)");
  const auto t0 = std::chrono::steady_clock::now();

  LoadedClassifier c = load_classifier(files[0]);
  // int4: groups of --group (32 by default), or the grid the model was trained on (QAT)
  ops::WeightGrid grid = c.spec.qat && c.spec.qat->bits == 4 ? *c.spec.qat : ops::WeightGrid::parse("int4");
  if (group) grid = ops::WeightGrid::parse(cat("int4/g", *group, grid.asymmetric ? "/asym" : ""));
  if (asymmetric) grid.asymmetric = true;
  train::ImageDataset train_set = train::load_mnist_split(data, "train"), test_set = train::load_mnist_split(data, "t10k");
  ir::Graph qgraph;
  std::vector<quant::PtqLayer> layers;
  int64_t stored_bytes = 0;
  std::string method;
  if (int8) {
    // calibration: the first images of the training split (never the test images it is judged on)
    std::vector<Tensor> calib;
    for (int64_t at = 0; at < std::min(calib_count, train_set.count); at += 500) {
      int64_t end = std::min({at + 500, calib_count, train_set.count});
      calib.push_back(images_for(c.spec, train_set.images.slice(0, at, end).contiguous()));
    }
    // activation QAT: the grids it learned, not calibrated ones
    if (c.spec.qat_activations)
      for (const quant::QParams& g : quant::learned_activation_grids(c.trained.activation_grids, c.grid_values)) opt.grids.push_back(g);
    quant::PtqResult q = quant::quantize_int8(c.model.forward, c.weights, c.images, c.logits, calib, opt);
    qgraph = std::move(q.graph);
    layers = std::move(q.layers);
    stored_bytes = int8_bytes(qgraph);
    method = c.spec.qat_activations ? cat("static int8 (the activation grids learned in training; the logits' by ", observer, " over ", std::min(calib_count, train_set.count), " images)")
                                    : cat("static int8 (", observer, " observer, ", std::min(calib_count, train_set.count), " calibration images)");
  } else {
    quant::WeightOnlyResult q = quant::quantize_weights(c.model.forward, c.weights, c.images, c.logits, grid);
    qgraph = std::move(q.graph);
    stored_bytes = q.packed_bytes + (c.float_bytes - q.float_bytes);
    method = cat("weight-only ", grid.str(), " (", q.weights, " weights, ", q.packed_weights, " of them kept as ", grid.asymmetric ? "Q4_1" : grid.bits == 4 ? "Q4_0" : "Q8_0",
                 " blocks multiplied packed; activations stay f32)");
  }
  const auto t1 = std::chrono::steady_clock::now();

  Session session(device);
  ir::Graph float_logits = c.trained.forward;
  float_logits.set_outputs({c.trained.forward.outputs()[2]});
  CompiledModel fm = session.compile(Graph(std::make_shared<ir::Graph>(float_logits)));
  CompiledModel qm = session.compile(Graph(std::make_shared<ir::Graph>(qgraph)));
  const ir::Graph& fg = c.trained.forward;
  auto float_inputs = [&](const Tensor& x) {
    std::vector<Tensor> in;
    for (ir::ValueId v : fg.inputs()) {
      if (auto it = c.weights.find(v); it != c.weights.end()) in.push_back(it->second);
      else if (auto g = c.grids.find(v); g != c.grids.end()) in.push_back(g->second);
      else if (v == c.trained_images) in.push_back(images_for(c.spec, x));
      else in.push_back(Tensor::zeros(DType::i64, {x.shape()[0]}));  // labels: the loss is not read
    }
    return in;
  };
  const char* reference_name = c.spec.qat || c.spec.qat_activations ? "trained model" : "float model";
  std::vector<int64_t> pf = predict(fm, float_inputs, test_set, reference_name, !json);
  std::vector<int64_t> pq = predict(qm, [&](const Tensor& x) { return std::vector<Tensor>{images_for(c.spec, x)}; }, test_set, cat(to, " model").c_str(), !json);
  int64_t right_f = 0, right_q = 0, agree = 0;
  const int64_t* labels = test_set.labels.data_as<int64_t>();
  for (size_t i = 0; i < pf.size(); ++i) {
    right_f += pf[i] == labels[i];
    right_q += pq[i] == labels[i];
    agree += pf[i] == pq[i];
  }
  const double n = static_cast<double>(pf.size()), acc_f = right_f / n, acc_q = right_q / n, agreement = agree / n;
  const std::vector<std::string> failures = gate.accuracy_failures(acc_f, acc_q);
  const bool kept = failures.empty();
  if (kept) {
    std::string text = ir::print_graph(qgraph);
    std::string pending = out + ".pending";
    {
      std::ofstream f(pending, std::ios::binary);
      f << text;
      if (!f) throw Error(ErrorKind::io, cat("cannot write ", pending));
    }
    fs::rename(pending, out);
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double quant_secs = std::chrono::duration<double>(t1 - t0).count();
  const std::string qat = c.spec.qat ? c.spec.qat->str() : "";

  if (json) {
    std::vector<std::string> jl;
    for (const auto& l : layers)
      jl.push_back(cat("{\"name\":", json_quote(l.name), ",\"op\":", json_quote(l.op), ",\"input_scale\":", l.in_scale, ",\"input_zero_point\":",
                       l.in_zero_point, ",\"output_scale\":", l.out_scale, ",\"output_zero_point\":", l.out_zero_point,
                       ",\"weight_scale_min\":", l.min_weight_scale, ",\"weight_scale_max\":", l.max_weight_scale, ",\"relu_folded\":", json_bool(l.relu), "}"));
    std::vector<std::string> fails;
    for (const auto& f : failures) fails.push_back(json_quote(f));
    std::printf("{\"model\":%s,\"kind\":%s,\"qat\":%s,\"qat_activations\":%s,\"to\":%s,\"method\":%s,\"observer\":%s,\"group\":%s,\"test_images\":%lld,"
                "\"float_accuracy\":%.6f,\"quantized_accuracy\":%.6f,\"accuracy_drop_points\":%.4f,\"agreement\":%.6f,"
                "\"float_weight_bytes\":%lld,\"quantized_bytes\":%lld,\"layers\":%s,\"gate\":%s,\"passed\":%s,\"failures\":%s,\"output\":%s,"
                "\"quantize_seconds\":%.3f,\"seconds\":%.3f}\n",
                json_quote(files[0]).c_str(), json_quote(c.spec.kind).c_str(), qat.empty() ? "null" : json_quote(qat).c_str(),
                json_bool(c.spec.qat_activations).c_str(), json_quote(to).c_str(), json_quote(method).c_str(), int8 ? json_quote(observer).c_str() : "null", int8 ? "null" : std::to_string(grid.group).c_str(),
                static_cast<long long>(pf.size()), acc_f, acc_q, 100 * (acc_f - acc_q), agreement, static_cast<long long>(c.float_bytes),
                static_cast<long long>(stored_bytes), json_array(jl).c_str(), json_quote(gate.str()).c_str(), json_bool(kept).c_str(),
                json_array(fails).c_str(), kept ? json_quote(out).c_str() : "null", quant_secs, secs);
  } else {
    std::printf("%s %s%s → %s, %.1f s\n", files[0].c_str(), c.spec.kind.c_str(), qat.empty() ? "" : cat(" (QAT ", qat, ")").c_str(), method.c_str(), quant_secs);
    if (!layers.empty()) {
      std::printf("  %-8s %-12s %12s %5s %12s %5s %22s %s\n", "layer", "op", "in scale", "zp", "out scale", "zp", "weight scales", "relu");
      for (const auto& l : layers)
        std::printf("  %-8s %-12s %12.6g %5lld %12.6g %5lld %10.4g..%-10.4g %s\n", l.name.c_str(), l.op.c_str(), l.in_scale,
                    static_cast<long long>(l.in_zero_point), l.out_scale, static_cast<long long>(l.out_zero_point), l.min_weight_scale, l.max_weight_scale,
                    l.relu ? "folded" : "");
    }
    std::printf("test accuracy on %lld images: %s %.2f%%, %s %.2f%% (%+.2f points), predictions agree on %.2f%%\n", static_cast<long long>(pf.size()),
                reference_name, 100 * acc_f, to.c_str(), 100 * acc_q, 100 * (acc_q - acc_f), 100 * agreement);
    std::printf("weights: %lld bytes float, %lld bytes quantized (%.2fx smaller)\n", static_cast<long long>(c.float_bytes),
                static_cast<long long>(stored_bytes), static_cast<double>(c.float_bytes) / static_cast<double>(std::max<int64_t>(stored_bytes, 1)));
    if (!gate.empty()) std::printf("gate %s: %s\n", gate.str().c_str(), kept ? "passed" : "FAILED");
    for (const auto& f : failures) std::printf("  %s\n", f.c_str());
    std::printf(kept ? "wrote %s\n" : "refused: nothing written to %s\n", out.c_str());
  }
  return kept ? 0 : 3;
}

}  // namespace rlx::cli
