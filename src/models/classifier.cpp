#include "models/classifier.h"

#include <cmath>
#include <random>

#include "ops/builder.h"
#include "rlx/error.h"
#include "train/init.h"
#include "util/strings.h"

namespace rlx::models {

using ir::Op;
using ir::ValueId;

namespace {

struct Params {
  ir::Graph& g;
  std::mt19937_64 rng;
  std::vector<train::NamedTensor> values;
  ValueId add(const std::string& name, Tensor t) {
    values.push_back({name, t});
    return g.add_input({t.dtype(), shape_of(t.shape())}, name);
  }
};

// loss, correct count and logits from the logits and labels
void finish(ops::Builder& b, ValueId logits, ValueId labels) {
  ValueId loss = b.emit1(Op::cross_entropy, {logits, labels});
  ValueId pred = b.reduce(logits, "argmax", {1}, false);
  ValueId correct = b.reduce(b.cast(b.binary(Op::eq, pred, labels), DType::f32), "sum", {0}, false);
  b.graph().set_outputs({loss, correct, logits});
}

}  // namespace

std::vector<int64_t> classifier_input_shape(const ClassifierSpec& s, int64_t batch) {
  if (s.kind == "mlp") return {batch, s.channels * s.height * s.width};
  return {batch, s.channels, s.height, s.width};
}

Classifier build_classifier(const ClassifierSpec& s, uint64_t seed) {
  if (s.kind != "mlp" && s.kind != "cnn") throw Error(ErrorKind::invalid_argument, cat("unknown model '", s.kind, "' (choose mlp or cnn)"));
  if (s.hidden.empty() && s.kind == "cnn") throw Error(ErrorKind::invalid_argument, "the cnn needs at least one conv width");
  for (int64_t h : s.hidden)
    if (h <= 0 || h > (1 << 20)) throw Error(ErrorKind::invalid_argument, cat("layer width ", h, " is out of range"));
  Classifier c;
  c.forward.name = s.kind;
  Params p{c.forward, std::mt19937_64(seed), {}};
  ops::Builder b(c.forward);
  Dim B = Dim::symbol("B");
  // a layer's weight as the layer sees it: itself, or on the QAT grid
  auto grid = [&](ValueId w) { return s.qat ? ops::fake_quant_weight(b, w, *s.qat) : w; };
  // The activation grids' parameters, added once the weights are (one per observed value).
  std::vector<std::pair<ValueId, ValueId>> act_params;
  auto add_activation_grids = [&](const std::vector<std::string>& names) {
    if (!s.qat_activations) return;
    for (const std::string& n : names) {
      ValueId log_s = p.add(n + ".act_log_scale", Tensor::from_f64(DType::f32, {}, {std::log(1.0 / 32)}));
      ValueId z = p.add(n + ".act_zero_point", Tensor::from_f64(DType::f32, {}, {0.0}));
      act_params.push_back({log_s, z});
      c.activation_grids.push_back(n);
    }
  };
  // a value as the next layer reads it: itself, or on its learned int8 grid
  size_t next_grid = 0;
  auto act = [&](ValueId x) {
    if (!s.qat_activations) return x;
    auto [log_s, z] = act_params.at(next_grid++);
    return b.emit1(Op::fake_quant, {x, b.unary(Op::exp, log_s), z}, ir::Attrs{{"lo", int64_t{-128}}, {"hi", int64_t{127}}});
  };
  // Parameters come first (the trainer's convention), then the data inputs.
  std::vector<ValueId> weights, biases;
  if (s.kind == "mlp") {
    int64_t in = s.channels * s.height * s.width;
    std::vector<int64_t> widths = s.hidden;
    widths.push_back(s.classes);
    for (size_t i = 0; i < widths.size(); ++i) {
      weights.push_back(p.add(cat("fc", i + 1, ".weight"), train::init_tensor(train::Init::kaiming_uniform, {widths[i], in}, p.rng)));
      biases.push_back(p.add(cat("fc", i + 1, ".bias"), train::init_bias(widths[i], in, p.rng)));
      in = widths[i];
    }
    std::vector<std::string> observed = {"images"};
    for (size_t i = 0; i + 1 < widths.size(); ++i) observed.push_back(cat("fc", i + 1));
    add_activation_grids(observed);
    ValueId x = c.forward.add_input({DType::f32, {B, Dim(s.channels * s.height * s.width)}}, "images");
    ValueId labels = c.forward.add_input({DType::i64, {B}}, "labels");
    x = act(x);
    for (size_t i = 0; i < weights.size(); ++i) {
      b.set_context(cat("fc", i + 1), "");
      x = b.emit1(Op::linear, {x, grid(weights[i]), biases[i]});
      if (i + 1 < weights.size()) x = act(b.emit1(Op::relu, {x}));
    }
    finish(b, x, labels);
  } else {
    // [conv3x3 → relu → maxpool2] per width, then a linear classifier
    int64_t ch = s.channels, h = s.height, w = s.width;
    for (size_t i = 0; i < s.hidden.size(); ++i) {
      weights.push_back(p.add(cat("conv", i + 1, ".weight"), train::init_tensor(train::Init::kaiming_uniform, {s.hidden[i], ch, 3, 3}, p.rng)));
      biases.push_back(p.add(cat("conv", i + 1, ".bias"), train::init_bias(s.hidden[i], ch * 9, p.rng)));
      ch = s.hidden[i];
      h /= 2;
      w /= 2;
      if (h == 0 || w == 0) throw Error(ErrorKind::invalid_argument, cat("the cnn has more conv layers than the image size allows"));
    }
    int64_t flat = ch * h * w;
    ValueId fw = p.add("fc.weight", train::init_tensor(train::Init::kaiming_uniform, {s.classes, flat}, p.rng));
    ValueId fb = p.add("fc.bias", train::init_bias(s.classes, flat, p.rng));
    std::vector<std::string> observed = {"images"};
    for (size_t i = 0; i < s.hidden.size(); ++i) observed.push_back(cat("conv", i + 1));
    add_activation_grids(observed);
    ValueId x = c.forward.add_input({DType::f32, {B, Dim(s.channels), Dim(s.height), Dim(s.width)}}, "images");
    ValueId labels = c.forward.add_input({DType::i64, {B}}, "labels");
    x = act(x);
    for (size_t i = 0; i < weights.size(); ++i) {
      b.set_context(cat("conv", i + 1), "");
      x = b.emit1(Op::conv2d, {x, grid(weights[i]), biases[i]}, ir::Attrs{{"pads", ir::Ints{1, 1, 1, 1}}});
      x = act(b.emit1(Op::relu, {x}));  // the grid of the conv's (ReLU'd) output; max_pool keeps it
      x = b.emit1(Op::max_pool, {x}, ir::Attrs{{"kernel", ir::Ints{2, 2}}, {"strides", ir::Ints{2, 2}}});
    }
    b.set_context("fc", "");
    x = b.reshape(x, {B, Dim(flat)});
    finish(b, b.emit1(Op::linear, {x, grid(fw), fb}), labels);
  }
  c.params = std::move(p.values);
  return c;
}

}  // namespace rlx::models
