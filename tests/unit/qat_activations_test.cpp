// Activation QAT (issue #25): the classifier reads every activation through fake_quant on a
// learned int8 grid; the grids start at PTQ's min-max calibration, training moves them (LSQ's
// gradients reach them), and PTQ exports with exactly the grids it is given.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "models/classifier.h"
#include "quant/observer.h"
#include "quant/ptq.h"
#include "quant/qat.h"
#include "rlx/error.h"
#include "train/trainer.h"

using namespace rlx;

namespace {

Tensor images(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> v(static_cast<size_t>(n * 784));
  for (auto& x : v) x = u(rng) < 0.4 ? 0.0 : u(rng);
  return Tensor::from_f64(DType::f32, {n, 784}, v);
}

models::ClassifierSpec mlp_spec() {
  models::ClassifierSpec s;
  s.hidden = {32, 16};
  s.qat_activations = true;
  return s;
}

}  // namespace

TEST(QatActivations, GridsComeAfterTheWeightsAndEveryLayerReadsThroughOne) {
  models::Classifier c = models::build_classifier(mlp_spec(), 3);
  ASSERT_EQ(c.activation_grids, (std::vector<std::string>{"images", "fc1", "fc2"}));  // the logits (fc3) stay float
  ASSERT_EQ(c.params.size(), 6u + 6u);
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(c.params[i].name.find(".act_"), std::string::npos) << c.params[i].name;
  EXPECT_EQ(c.params[6].name, "images.act_log_scale");
  EXPECT_EQ(c.params[7].name, "images.act_zero_point");
  int fake_quants = 0;
  for (const ir::Node& n : c.forward.nodes()) fake_quants += n.op == ir::Op::fake_quant;
  EXPECT_EQ(fake_quants, 3);
  models::ClassifierSpec plain = mlp_spec();
  plain.qat_activations = false;
  models::Classifier p = models::build_classifier(plain, 3);
  for (size_t i = 0; i < p.params.size(); ++i) EXPECT_TRUE(p.params[i].tensor.bytes_equal(c.params[i].tensor)) << "same seed, same weights";
}

TEST(QatActivations, CalibrationStartsTheGridsWherePtqPutsThem) {
  models::ClassifierSpec spec = mlp_spec();
  models::Classifier c = models::build_classifier(spec, 3);
  Tensor x = images(64, 1);
  quant::calibrate_activation_grids(c, spec, x);
  // PTQ with the min-max observer over the same batch, on the float model with the same weights
  models::ClassifierSpec plain = spec;
  plain.qat_activations = false;
  models::Classifier p = models::build_classifier(plain, 3);
  std::map<ir::ValueId, Tensor> weights;
  for (size_t i = 0; i < p.params.size(); ++i) weights[p.forward.inputs()[i]] = p.params[i].tensor;
  quant::PtqResult r = quant::quantize_int8(p.forward, weights, p.forward.inputs()[p.params.size()], p.forward.outputs()[2], {x});
  std::vector<quant::QParams> learned = quant::learned_activation_grids(c.activation_grids, c.params);
  ASSERT_EQ(learned.size(), 3u);
  ASSERT_EQ(r.layers.size(), 3u);
  const quant::QParams want[] = {{r.layers[0].in_scale, r.layers[0].in_zero_point},
                                 {r.layers[0].out_scale, r.layers[0].out_zero_point},
                                 {r.layers[1].out_scale, r.layers[1].out_zero_point}};
  for (size_t k = 0; k < 3; ++k) {
    EXPECT_NEAR(learned[k].scale, want[k].scale, want[k].scale * 1e-6) << c.activation_grids[k];
    EXPECT_EQ(learned[k].zero_point, want[k].zero_point) << c.activation_grids[k];
  }
}

TEST(QatActivations, TrainingMovesTheGridsAndPtqExportsWithThem) {
  models::ClassifierSpec spec = mlp_spec();
  models::Classifier c = models::build_classifier(spec, 3);
  Tensor x = images(64, 2);
  quant::calibrate_activation_grids(c, spec, x);
  std::vector<double> labels(64);
  for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<double>(i % 10);
  train::OptimizerConfig opt;
  opt.kind = "adam";
  train::Trainer t("cpu", c.forward, c.params, opt, {});
  for (int s = 0; s < 5; ++s) t.step({x, Tensor::from_f64(DType::i64, {64}, labels)}, 1e-2);
  std::vector<quant::QParams> before = quant::learned_activation_grids(c.activation_grids, c.params);
  std::vector<quant::QParams> after = quant::learned_activation_grids(c.activation_grids, t.params());
  // LSQ's gradient reaches every scale
  for (size_t k = 0; k < after.size(); ++k) EXPECT_NE(after[k].scale, before[k].scale) << c.activation_grids[k];
  // PTQ takes the grids it is given and calibrates only the rest (the logits)
  models::ClassifierSpec plain = spec;
  plain.qat_activations = false;
  models::Classifier p = models::build_classifier(plain, 3);
  std::map<ir::ValueId, Tensor> weights;
  for (size_t i = 0; i < p.params.size(); ++i) weights[p.forward.inputs()[i]] = t.params()[i].tensor;
  quant::PtqOptions o;
  for (const auto& g : after) o.grids.push_back(g);
  quant::PtqResult r = quant::quantize_int8(p.forward, weights, p.forward.inputs()[p.params.size()], p.forward.outputs()[2], {x}, o);
  EXPECT_EQ(r.layers[0].in_scale, after[0].scale);
  EXPECT_EQ(r.layers[0].in_zero_point, after[0].zero_point);
  EXPECT_EQ(r.layers[1].in_scale, after[1].scale);
  EXPECT_EQ(r.layers[2].in_scale, after[2].scale);
  EXPECT_EQ(r.layers[2].in_zero_point, after[2].zero_point);
  o.grids.resize(5);
  EXPECT_THROW(quant::quantize_int8(p.forward, weights, p.forward.inputs()[p.params.size()], p.forward.outputs()[2], {x}, o), Error);
}

TEST(QatActivations, AGridThatIsNotFiniteIsRefusedByName) {
  models::Classifier c = models::build_classifier(mlp_spec(), 3);
  std::vector<train::NamedTensor> ps = c.params;
  for (auto& p : ps)
    if (p.name == "fc1.act_log_scale") p.tensor = Tensor::from_f64(DType::f32, {}, {INFINITY});
  try {
    quant::learned_activation_grids(c.activation_grids, ps);
    FAIL() << "an infinite scale was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("fc1"), std::string::npos) << e.what();
  }
}
