// Static int8 PTQ: the quantized graph is integers between its two float edges, runs bit for bit
// the same on the cpu (oneDNN VNNI convolutions, integer GEMM) as on the reference backend, and
// stays close to the float model; observers and the fixed-point multiplier do what they promise.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "models/classifier.h"
#include "quant/observer.h"
#include "quant/ptq.h"
#include "rlx/error.h"
#include "rlx/graph.h"
#include "rlx/session.h"

using namespace rlx;

namespace {

std::vector<Tensor> run_on(const std::string& device, const ir::Graph& g, const std::vector<Tensor>& in) {
  Session s(device);
  return s.compile(Graph(std::make_shared<ir::Graph>(g))).run(in);
}

Tensor images(std::mt19937& rng, std::vector<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> v(static_cast<size_t>(n));
  std::uniform_real_distribution<double> u(0, 1);
  for (auto& x : v) x = u(rng) < 0.4 ? 0.0 : u(rng);  // mostly dark, like the clothing images
  return Tensor::from_f64(DType::f32, shape, v);
}

struct Case {
  models::Classifier model;
  std::map<ir::ValueId, Tensor> weights;
  ir::ValueId input, logits;
};

Case classifier(const std::string& kind, std::vector<int64_t> hidden) {
  models::ClassifierSpec spec;
  spec.kind = kind;
  spec.hidden = std::move(hidden);
  Case c{models::build_classifier(spec, 11), {}, ir::kNoValue, ir::kNoValue};
  const ir::Graph& g = c.model.forward;
  for (size_t i = 0; i < c.model.params.size(); ++i) c.weights[g.inputs()[i]] = c.model.params[i].tensor;
  c.input = g.inputs()[c.model.params.size()];
  c.logits = g.outputs()[2];
  return c;
}

}  // namespace

class PtqModels : public ::testing::TestWithParam<const char*> {};

TEST_P(PtqModels, IntegerGraphIsBitExactOnCpuAndNearTheFloatModel) {
  const std::string kind = GetParam();
  Case c = classifier(kind, kind == std::string("mlp") ? std::vector<int64_t>{64} : std::vector<int64_t>{4, 8});
  std::mt19937 rng(2);
  std::vector<int64_t> shape = kind == std::string("mlp") ? std::vector<int64_t>{32, 784} : std::vector<int64_t>{32, 1, 28, 28};
  std::vector<Tensor> calib = {images(rng, shape), images(rng, shape)};
  quant::PtqResult q = quant::quantize_int8(c.model.forward, c.weights, c.input, c.logits, calib);

  // integers between the edges: every value is an integer but the input, the output and the
  // two scalars their edge ops take
  int float_values = 0;
  for (const ir::Node& n : q.graph.nodes())
    for (ir::ValueId v : n.outputs)
      if (is_float(q.graph.type(v).dtype)) ++float_values;
  EXPECT_LE(float_values, 3) << "float arithmetic inside the int8 graph";
  EXPECT_EQ(q.layers.size(), kind == std::string("mlp") ? 2u : 3u);

  Tensor x = images(rng, shape);
  Tensor ref = run_on("reference", q.graph, {x})[0], cpu = run_on("cpu", q.graph, {x})[0];
  ASSERT_EQ(ref.numel(), cpu.numel());
  for (int64_t i = 0; i < ref.numel(); ++i) ASSERT_EQ(ref.at_f64(i), cpu.at_f64(i)) << kind << " logit " << i << " differs between reference and cpu";

  // near the float model: within a few output steps per logit
  ir::Graph fg = c.model.forward;
  fg.set_outputs({c.logits});
  std::vector<Tensor> fin;
  for (ir::ValueId v : fg.inputs())
    fin.push_back(c.weights.count(v) ? c.weights.at(v) : v == c.input ? x : Tensor::zeros(DType::i64, {shape[0]}));
  Tensor f = run_on("cpu", fg, fin)[0];
  double worst = 0, spread = 0;
  for (int64_t i = 0; i < f.numel(); ++i) {
    worst = std::max(worst, std::fabs(f.at_f64(i) - ref.at_f64(i)));
    spread = std::max(spread, std::fabs(f.at_f64(i)));
  }
  EXPECT_LT(worst, 0.08 * spread + 4 * q.output.scale) << kind << ": the int8 logits are far from the float ones";
}

INSTANTIATE_TEST_SUITE_P(Classifiers, PtqModels, ::testing::Values("mlp", "cnn"));

TEST(Ptq, RefusesOpsItDoesNotHandleByName) {
  models::ClassifierSpec spec;
  Case c = classifier("mlp", {16});
  // the loss as the output: cross_entropy lies between the input and it
  ir::ValueId loss = c.model.forward.outputs()[0];
  std::mt19937 rng(1);
  try {
    quant::quantize_int8(c.model.forward, c.weights, c.input, loss, {images(rng, {4, 784})});
    FAIL() << "a graph with cross_entropy on the path was quantized";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cross_entropy"), std::string::npos) << e.what();
  }
}

TEST(Ptq, FixedPointMultiplierIsExactToThirtyBits) {
  for (double r : {0.5, 0.75, 1e-3, 3.3e-5, 0.999999999, 1.7, 123.0}) {
    auto [m, s] = quant::fixed_point_multiplier(r);
    EXPECT_GE(m, int64_t{1} << 30);
    EXPECT_LT(m, int64_t{1} << 31);
    EXPECT_NEAR(std::ldexp(static_cast<double>(m), static_cast<int>(-s)), r, r * 1e-9) << r;
  }
  EXPECT_EQ(quant::fixed_point_multiplier(0).first, 0);
  EXPECT_THROW(quant::fixed_point_multiplier(-1), Error);
  EXPECT_THROW(quant::fixed_point_multiplier(std::ldexp(1.0, 40)), Error);
}

TEST(Observers, ClipOutliersThatMinMaxKeeps) {
  // 10 000 values in [−1, 1] and one at 100: min-max spans the outlier; the others do not
  std::vector<float> v;
  std::mt19937 rng(4);
  std::normal_distribution<float> n(0, 0.3f);
  for (int i = 0; i < 10000; ++i) v.push_back(std::clamp(n(rng), -1.0f, 1.0f));
  v.push_back(100.0f);
  auto range_of = [&](quant::ObserverKind k) {
    quant::Observer o(k, 99.9);
    o.observe(v.data(), static_cast<int64_t>(v.size()));
    o.finish_pass();
    if (o.needs_second_pass()) ADD_FAILURE() << "a second pass was still wanted";
    if (k != quant::ObserverKind::minmax) o.observe(v.data(), static_cast<int64_t>(v.size()));
    return o.range();
  };
  auto mm = range_of(quant::ObserverKind::minmax);
  EXPECT_FLOAT_EQ(static_cast<float>(mm.second), 100.0f);
  for (auto k : {quant::ObserverKind::percentile, quant::ObserverKind::entropy}) {
    auto r = range_of(k);
    EXPECT_LT(r.second, 60.0) << quant::observer_name(k) << " kept the outlier";
    EXPECT_GT(r.second, 0.5) << quant::observer_name(k) << " clipped the bulk";
    EXPECT_LT(r.first, -0.5) << quant::observer_name(k);
  }
  // mse weighs what clipping costs: one value at 100 clipped to 50 costs more than the bulk's
  // rounding, so it stays; a modest outlier above a large bulk is clipped
  EXPECT_GT(range_of(quant::ObserverKind::mse).second, 90.0);
  v.clear();
  std::uniform_real_distribution<float> u(-1, 1);
  for (int i = 0; i < 200000; ++i) v.push_back(u(rng));
  v.push_back(3.0f);
  auto r = range_of(quant::ObserverKind::mse);
  EXPECT_LT(r.second, 2.5) << "mse kept an outlier whose clipping costs less than the finer grid saves";
  EXPECT_GT(r.second, 1.0) << "mse clipped the bulk";
  // zero is always exactly representable
  quant::QParams q = quant::int8_qparams(0.2, 3.0);
  EXPECT_EQ(q.zero_point, -128);
  q = quant::int8_qparams(-1.0, 3.0);
  EXPECT_NEAR(-static_cast<double>(q.zero_point + 128) * q.scale, -1.0, q.scale);
}
