// Static int8 PTQ: the quantized graph is integers between its two float edges, runs bit for bit
// the same on the cpu (oneDNN VNNI convolutions, integer GEMM) as on the reference backend, and
// stays close to the float model; observers and the fixed-point multiplier do what they promise.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "common/run_graph.h"
#include "models/classifier.h"
#include "ops/builder.h"
#include "quant/observer.h"
#include "quant/ptq.h"
#include "rlx/error.h"
#include "rlx/graph.h"
#include "rlx/session.h"

using namespace rlx;
using rlx::testing::run_on;

namespace {

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

// A residual MLP ending in a softmax: relu(linear(h) + h) and the probabilities become the integer
// add and the integer softmax (passes/integer_ops.h) — still integers between the edges, the same
// on the cpu as on the reference, and near the float probabilities.
TEST(Ptq, ResidualAddsAndSoftmaxBecomeIntegerOps) {
  const int64_t B = 32, K = 64, H = 48, O = 10;
  std::mt19937 rng(4);
  std::normal_distribution<double> normal(0, 1);
  auto tensor = [&](std::vector<int64_t> shape, double sd) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    std::vector<double> v(static_cast<size_t>(n));
    for (auto& x : v) x = normal(rng) * sd;
    return Tensor::from_f64(DType::f32, shape, v);
  };
  ir::Graph g;
  ops::Builder b(g);
  ir::ValueId x = g.add_input({DType::f32, {Dim(B), Dim(K)}}, "x");
  std::map<ir::ValueId, Tensor> weights;
  auto param = [&](const char* name, Tensor t) {
    ir::ValueId v = g.add_input({DType::f32, shape_of(t.shape())}, name);
    weights[v] = std::move(t);
    return v;
  };
  ir::ValueId w1 = param("w1", tensor({H, K}, 0.15)), b1 = param("b1", tensor({H}, 0.1));
  // a negative bias: the residual sum is often below zero, so the ReLU after the add matters
  ir::ValueId w2 = param("w2", tensor({H, H}, 0.4)), b2 = param("b2", Tensor::from_f64(DType::f32, {H}, std::vector<double>(H, -0.8)));
  ir::ValueId w3 = param("w3", tensor({O, H}, 0.3)), b3 = param("b3", tensor({O}, 0.1));
  ir::ValueId h1 = b.emit1(ir::Op::relu, {b.emit1(ir::Op::linear, {x, w1, b1})});
  ir::ValueId h2 = b.emit1(ir::Op::relu, {b.add(b.emit1(ir::Op::linear, {h1, w2, b2}), h1)});
  ir::ValueId p = b.emit1(ir::Op::softmax, {b.emit1(ir::Op::linear, {h2, w3, b3})});
  g.set_outputs({p});
  std::vector<Tensor> calib = {tensor({B, K}, 1), tensor({B, K}, 1), tensor({B, K}, 1)};
  quant::PtqResult q = quant::quantize_int8(g, weights, x, p, calib);
  EXPECT_EQ(q.layers.size(), 3u);
  EXPECT_EQ(q.adds, 1);
  EXPECT_EQ(q.softmaxes, 1);
  int float_values = 0, relus = 0;
  for (const ir::Node& n : q.graph.nodes()) {
    relus += n.op == ir::Op::relu || n.op == ir::Op::max;
    for (ir::ValueId v : n.outputs)
      if (is_float(q.graph.type(v).dtype)) ++float_values;
  }
  EXPECT_LE(float_values, 3) << "float arithmetic inside the int8 graph";
  EXPECT_EQ(relus, 0) << "the ReLUs after the first layer and after the add are their clamps' lower ends";

  // a batch the grids were calibrated on: what is judged is the integer arithmetic, not how often
  // a new batch leaves the calibrated ranges (min-max over 96 Gaussian rows)
  const Tensor& in = calib[0];
  Tensor ref = run_on("reference", q.graph, {in})[0], cpu = run_on("cpu", q.graph, {in})[0];
  ASSERT_EQ(ref.numel(), B * O);
  for (int64_t i = 0; i < ref.numel(); ++i) ASSERT_EQ(ref.at_f64(i), cpu.at_f64(i)) << "probability " << i << " differs between reference and cpu";
  std::vector<Tensor> fin;
  for (ir::ValueId v : g.inputs()) fin.push_back(v == x ? in : weights.at(v));
  Tensor f = run_on("reference", g, fin)[0];
  double worst = 0;
  int64_t same_top = 0;
  for (int64_t r = 0; r < B; ++r) {
    int64_t tf = 0, tq = 0;
    for (int64_t c = 0; c < O; ++c) {
      worst = std::max(worst, std::fabs(f.at_f64(r * O + c) - ref.at_f64(r * O + c)));
      if (f.at_f64(r * O + c) > f.at_f64(r * O + tf)) tf = c;
      if (ref.at_f64(r * O + c) > ref.at_f64(r * O + tq)) tq = c;
    }
    same_top += tf == tq;
  }
  std::printf("[ptq] residual MLP: worst probability error %.4f, top class kept for %lld of %lld rows\n", worst, static_cast<long long>(same_top), static_cast<long long>(B));
  EXPECT_LT(worst, 0.06) << "the int8 probabilities are far from the float ones (output step " << q.output.scale << ")";
  EXPECT_GE(same_top, B - 3) << "top classes";

  // the residual block alone, its branch's range ~4× the skip's: within a few output steps
  ir::Graph block = g;
  block.set_outputs({h2});
  quant::PtqResult qb = quant::quantize_int8(block, weights, x, h2, calib);
  EXPECT_EQ(qb.adds, 1);
  Tensor yq = run_on("cpu", qb.graph, {in})[0];
  ir::Graph fblock = g;
  fblock.set_outputs({h2});
  Tensor yf = run_on("reference", fblock, fin)[0];
  double err = 0;
  for (int64_t i = 0; i < yf.numel(); ++i) err = std::max(err, std::fabs(yf.at_f64(i) - yq.at_f64(i)));
  std::printf("[ptq] residual block: worst error %.4f, output step %.4f\n", err, qb.output.scale);
  EXPECT_LT(err, 4 * qb.output.scale) << "the integer add is off by more than a few steps";
}

TEST(Ptq, RefusesAnAddOfAConstantByName) {
  ir::Graph g;
  ops::Builder b(g);
  ir::ValueId x = g.add_input({DType::f32, {Dim(4), Dim(8)}}, "x");
  ir::ValueId w = g.add_input({DType::f32, {Dim(8), Dim(8)}}, "w");
  ir::ValueId y = b.add(b.emit1(ir::Op::linear, {x, w}), b.constant(Tensor::from_f64(DType::f32, {8}, std::vector<double>(8, 0.5))));
  g.set_outputs({y});
  std::mt19937 rng(3);
  try {
    quant::quantize_int8(g, {{w, Tensor::from_f64(DType::f32, {8, 8}, std::vector<double>(64, 0.1))}}, x, y, {images(rng, {4, 8})});
    FAIL() << "an add of a constant was quantized";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not on the data path"), std::string::npos) << e.what();
  }
}
