// The fold-qdq pass (src/passes/fold_qdq.cpp): a QDQ fully connected layer with a ReLU becomes
// an integer layer whose outputs equal the float QDQ layer's within one quantization step (and
// mostly exactly); asymmetric weights stay float; and the cortex-m generator refuses what its
// kernels cannot take, naming the node.
#include <gtest/gtest.h>

#include <random>

#include "ops/builder.h"
#include "passes/fold_qdq.h"
#include "rlx/error.h"
#include "rlx/graph.h"
#include "rlx/session.h"

using namespace rlx;
using ir::Op;
using ir::ValueId;

namespace {

// x f32[16, 32] → Q/DQ → linear with int8 weights (per-output-channel scales) and a bias →
// ReLU → Q → DQ. `weight_zero_point` ≠ 0 makes the weights asymmetric.
ir::Graph qdq_linear(int weight_zero_point) {
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> wd(-100, 100);
  std::uniform_real_distribution<double> sd(0.002, 0.01), bd(-0.5, 0.5);
  std::vector<double> w(32 * 8), sw(8), bias(8);
  for (double& v : w) v = wd(rng);
  for (double& v : sw) v = sd(rng);
  for (double& v : bias) v = bd(rng);
  ir::Graph g;
  ops::Builder b(g);
  ValueId x = g.add_input({DType::f32, {Dim(16), Dim(32)}}, "x");
  ValueId sx = b.scalar(DType::f32, 0.02), zx = b.constant(Tensor::from_f64(DType::i8, {}, {3}));
  ValueId xd = b.emit1(Op::dequantize_linear, {b.emit1(Op::quantize_linear, {x, sx, zx}), sx, zx});
  ValueId wq = b.constant(Tensor::from_f64(DType::i8, {32, 8}, w));
  ValueId wf = b.emit1(Op::dequantize_linear, {wq, b.constant(Tensor::from_f64(DType::f32, {1, 8}, sw)),
                                               b.constant(Tensor::from_f64(DType::i8, {1, 8}, std::vector<double>(8, weight_zero_point)))});
  ValueId y = b.add(b.dot_general(xd, wf, {{}, {}}, {{1}, {0}}), b.constant(Tensor::from_f64(DType::f32, {8}, bias)));
  y = b.emit1(Op::relu, {y});
  ValueId sy = b.scalar(DType::f32, 0.05), zy = b.constant(Tensor::from_f64(DType::i8, {}, {-128}));
  g.set_outputs({b.emit1(Op::dequantize_linear, {b.emit1(Op::quantize_linear, {y, sy, zy}), sy, zy})});
  return g;
}

int count(const ir::Graph& g, Op op) {
  int n = 0;
  for (const auto& node : g.nodes()) n += node.op == op;
  return n;
}

std::vector<float> run_ref(const ir::Graph& g, const Tensor& x) {
  return Session("reference").compile(Graph(std::make_shared<ir::Graph>(g))).run({x})[0].to_vector<float>();
}

}  // namespace

TEST(FoldQdq, LinearWithReluBecomesAnIntegerLayerWithinOneStep) {
  ir::Graph g = qdq_linear(0);
  passes::QdqFoldReport report;
  ir::Graph f = passes::fold_qdq(g, &report);
  EXPECT_EQ(report.layers, 1);
  EXPECT_EQ(count(f, Op::requantize), 1);
  bool int_dot = false;
  for (const auto& n : f.nodes())
    if (n.op == Op::dot_general) int_dot = f.type(n.inputs[0]).dtype == DType::i8 && f.type(n.outputs[0]).dtype == DType::i32;
  EXPECT_TRUE(int_dot) << "the folded layer must multiply i8 by i8 into i32";
  std::mt19937 rng(9);
  std::uniform_real_distribution<double> xd(-2.0, 2.0);
  std::vector<double> xv(16 * 32);
  for (double& v : xv) v = xd(rng);
  Tensor x = Tensor::from_f64(DType::f32, {16, 32}, xv);
  std::vector<float> want = run_ref(g, x), got = run_ref(f, x);
  ASSERT_EQ(want.size(), got.size());
  int same = 0, positive = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_LE(std::abs(want[i] - got[i]), 0.05f * 1.0001f) << "more than one step apart at " << i;
    EXPECT_GE(got[i], 0.0f) << "the ReLU must clamp at the zero point";
    same += want[i] == got[i];
    positive += want[i] > 0;
  }
  EXPECT_GE(same, static_cast<int>(want.size()) * 9 / 10) << "the fixed-point rescaling should mostly round as the float one";
  EXPECT_GT(positive, 10) << "a test whose outputs are all clamped proves little";
}

TEST(FoldQdq, AsymmetricWeightsStayFloat) {
  passes::QdqFoldReport report;
  ir::Graph f = passes::fold_qdq(qdq_linear(2), &report);
  EXPECT_EQ(report.layers, 0);
  EXPECT_EQ(count(f, Op::requantize), 0);
}

TEST(CortexM, RefusesWeightsThatAreNotConstantNamingTheNode) {
  ir::Graph g;
  ops::Builder b(g);
  ValueId x = g.add_input({DType::i8, {Dim(1), Dim(16)}}, "x");
  ValueId w = g.add_input({DType::i8, {Dim(4), Dim(16)}}, "w");
  b.set_context("fc", "hir.linear");
  ValueId acc = b.emit1(Op::dot_general, {x, w}, ir::Attrs{{"batch", ir::Intss{{}, {}}}, {"contract", ir::Intss{{1}, {1}}}, {"out", DType::i32}});
  ValueId y = b.emit1(Op::requantize, {acc, b.constant(Tensor::from_f64(DType::i32, {}, {1 << 30})), b.constant(Tensor::from_f64(DType::i32, {}, {40}))},
                      ir::Attrs{{"zero_point", int64_t{0}}});
  g.set_outputs({y});
  SessionOptions o;
  o.compile_only = true;
  CompiledModel m = Session("cortex-m4", o).compile(Graph(std::make_shared<ir::Graph>(g)));
  try {
    m.emit_source({});
    FAIL() << "a layer with weights given at run time was exported";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::unsupported);
    EXPECT_NE(std::string(e.what()).find("needs constant weights"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("fc"), std::string::npos) << e.what();
  }
}

namespace {

// Q(x) → DQ with one scale and zero point: the QDQ pair around every activation.
ValueId qdq(ops::Builder& b, ValueId x, double scale, int zero_point) {
  ValueId s = b.scalar(DType::f32, scale), z = b.constant(Tensor::from_f64(DType::i8, {}, {static_cast<double>(zero_point)}));
  return b.emit1(Op::dequantize_linear, {b.emit1(Op::quantize_linear, {x, s, z}), s, z});
}

Tensor uniform(std::vector<int64_t> shape, double lo, double hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(lo, hi);
  int64_t n = 1;
  for (int64_t v : shape) n *= v;
  std::vector<double> v(static_cast<size_t>(n));
  for (double& e : v) e = d(rng);
  return Tensor::from_f64(DType::f32, shape, v);
}

// The folded graph against the float QDQ one: within `steps` quantization steps everywhere and
// identical for at least `identical` of the values.
void expect_close(const std::vector<float>& want, const std::vector<float>& got, float step, float steps, double identical) {
  ASSERT_EQ(want.size(), got.size());
  size_t same = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_LE(std::abs(want[i] - got[i]), step * steps * 1.0001f) << "at " << i << ": float " << want[i] << ", integer " << got[i];
    same += want[i] == got[i];
  }
  EXPECT_GE(static_cast<double>(same), identical * static_cast<double>(want.size())) << same << " of " << want.size() << " identical";
}

// The kernels of the cortex-m4 program written for g, in order (model.json's "kernel" fields).
std::vector<std::string> cortexm_kernels(const ir::Graph& g) {
  SessionOptions o;
  o.compile_only = true;
  std::string json = Session("cortex-m4", o).compile(Graph(std::make_shared<ir::Graph>(g))).emit_source({}).at("model.json");
  std::vector<std::string> k;
  for (size_t p = json.find("\"kernel\":\""); p != std::string::npos; p = json.find("\"kernel\":\"", p + 1)) {
    const size_t b = p + 10;
    k.push_back(json.substr(b, json.find('"', b) - b));
  }
  return k;
}

}  // namespace

TEST(FoldQdq, ResidualAddBecomesAnIntegerAddWithinOneStep) {
  ir::Graph g;
  ops::Builder b(g);
  ValueId x = g.add_input({DType::f32, {Dim(4), Dim(8), Dim(5), Dim(5)}}, "x");
  ValueId r = g.add_input({DType::f32, {Dim(4), Dim(8), Dim(5), Dim(5)}}, "r");
  ValueId sum = b.add(qdq(b, x, 0.031, 5), qdq(b, r, 0.0123, -20));
  g.set_outputs({qdq(b, b.emit1(Op::relu, {sum}), 0.047, -128)});
  passes::QdqFoldReport report;
  ir::Graph f = passes::fold_qdq(g, &report);
  EXPECT_EQ(report.adds, 1);
  for (const auto& n : f.nodes()) EXPECT_FALSE(n.op == Op::add && f.type(n.outputs[0]).dtype == DType::f32) << "a float add is left";
  Tensor xv = uniform({4, 8, 5, 5}, -4.0, 4.0, 3), rv = uniform({4, 8, 5, 5}, -1.5, 1.5, 4);
  auto run = [&](const ir::Graph& h) { return Session("reference").compile(Graph(std::make_shared<ir::Graph>(h))).run({xv, rv})[0].to_vector<float>(); };
  std::vector<float> want = run(g), got = run(f);
  expect_close(want, got, 0.047f, 1, 0.97);
  size_t clamped = 0;
  for (float v : got) clamped += v == 0.0f;
  EXPECT_GT(clamped, 0u) << "the ReLU must clamp at the zero point";
  EXPECT_LT(clamped, got.size() * 3 / 4) << "a test whose outputs are all clamped proves little";
  EXPECT_EQ(cortexm_kernels(f), (std::vector<std::string>{"quantize", "quantize", "add", "dequantize"}));
}

TEST(FoldQdq, SoftmaxBecomesATableAndOneDivisionPerRowWithinOneStep) {
  ir::Graph g;
  ops::Builder b(g);
  ValueId x = g.add_input({DType::f32, {Dim(64), Dim(12)}}, "x");
  ValueId p = b.emit1(Op::softmax, {qdq(b, x, 0.09, 3)}, ir::Attrs{{"axis", int64_t{-1}}});
  g.set_outputs({qdq(b, p, 1.0 / 256, -128)});
  passes::QdqFoldReport report;
  ir::Graph f = passes::fold_qdq(g, &report);
  EXPECT_EQ(report.softmaxes, 1);
  EXPECT_EQ(count(f, Op::softmax), 0);
  EXPECT_EQ(count(f, Op::gather), 1);
  Tensor xv = uniform({64, 12}, -6.0, 6.0, 5);
  auto run = [&](const ir::Graph& h) { return Session("reference").compile(Graph(std::make_shared<ir::Graph>(h))).run({xv})[0].to_vector<float>(); };
  std::vector<float> want = run(g), got = run(f);
  expect_close(want, got, 1.0f / 256, 1, 0.95);
  for (size_t r = 0; r < 64; ++r) {
    float s = 0;
    for (size_t c = 0; c < 12; ++c) s += got[r * 12 + c];
    EXPECT_NEAR(s, 1.0f, 12.0f / 256) << "row " << r << " is not a distribution";
  }
  EXPECT_EQ(cortexm_kernels(f), (std::vector<std::string>{"quantize", "softmax", "dequantize"}));
}
