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
