// The tpu device's StableHLO printer (backends/pjrt/stablehlo.h): what a small graph prints as,
// exact constants, refusals by name — and, without a PJRT plugin here, a compile error that says
// which plugin could not be loaded. Running the modules is the accelerator machine's job
// (test_backend_ops --device tpu with RLX_PJRT_PLUGIN set to JAX's CUDA plugin).
#include <gtest/gtest.h>

#include <memory>

#include "backends/pjrt/stablehlo.h"
#include "ops/builder.h"
#include "rlx/error.h"
#include "rlx/graph.h"
#include "rlx/session.h"
#include "runtime/registry.h"

using namespace rlx;
using ir::Op;
using ir::ValueId;

namespace {

Shape dims(std::vector<int64_t> v) {
  Shape s;
  for (int64_t d : v) s.push_back(Dim(d));
  return s;
}

}  // namespace

TEST(StableHlo, ALinearLayerAndASoftmaxMaxPrint) {
  ir::Graph g;
  ops::Builder b(g);
  ValueId x = g.add_input({DType::f32, dims({4, 8})}, "x");
  ValueId w = g.add_input({DType::f32, dims({16, 8})}, "w");
  ValueId bias = g.add_input({DType::f32, dims({16})}, "b");
  ValueId h = b.add(b.dot_general(x, w, {{}, {}}, {{1}, {1}}), bias);
  ValueId r = b.max(h, b.scalar(DType::f32, 0.0));
  g.set_outputs({r, b.reduce(r, "max", {1}, true), b.cast(b.unary(Op::exp, r), DType::bf16)});
  std::string m = backends::pjrt::to_stablehlo(g);
  EXPECT_NE(m.find("func.func public @main(%arg0: tensor<4x8xf32>, %arg1: tensor<16x8xf32>, %arg2: tensor<16xf32>) -> (tensor<4x16xf32>, tensor<4x1xf32>, tensor<4x16xbf16>)"), std::string::npos) << m;
  EXPECT_NE(m.find("lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]"), std::string::npos) << m;
  EXPECT_NE(m.find("\"stablehlo.broadcast_in_dim\"(%arg2) {broadcast_dimensions = array<i64: 1>} : (tensor<16xf32>) -> tensor<4x16xf32>"), std::string::npos) << m;
  EXPECT_NE(m.find("dense<\"0x00000000\"> : tensor<f32>"), std::string::npos) << m;  // the 0 of the relu, as bytes
  EXPECT_NE(m.find("\"stablehlo.reduce\""), std::string::npos) << m;
  EXPECT_NE(m.find("dense<0xFF800000>"), std::string::npos) << m;  // max starts from −∞
  EXPECT_NE(m.find("\"stablehlo.convert\""), std::string::npos) << m;
  EXPECT_NE(m.find("\"func.return\""), std::string::npos) << m;
}

TEST(StableHlo, RefusesWhatItCannotSpell) {
  ir::Graph g;
  ops::Builder b(g);
  ValueId x = g.add_input({DType::f32, {Dim::symbol("B"), Dim(8)}}, "x");
  g.set_outputs({b.unary(Op::exp, x)});
  try {
    backends::pjrt::to_stablehlo(g);
    FAIL() << "a symbolic shape printed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("symbolic"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(backends::pjrt::stablehlo_prints(Op::cumsum, {{DType::f32, dims({4})}}, {{DType::f32, dims({4})}}, ir::Attrs{}));
  EXPECT_TRUE(backends::pjrt::stablehlo_prints(Op::add, {{DType::f32, dims({4})}, {DType::f32, dims({4})}}, {{DType::f32, dims({4})}}, ir::Attrs{}));
}

TEST(StableHlo, TheTpuDeviceSaysWhichPluginItCouldNotLoad) {
  runtime::Backend& tpu = runtime::backend("tpu");
  if (tpu.availability().available) GTEST_SKIP() << "a PJRT plugin is loaded here: " << tpu.description();
  EXPECT_NE(tpu.availability().reason.find("PJRT plugin"), std::string::npos) << tpu.availability().reason;
  ir::Graph g;
  ops::Builder b(g);
  ValueId x = g.add_input({DType::f32, dims({4})}, "x");
  g.set_outputs({b.unary(Op::exp, x)});
  EXPECT_THROW(Session("tpu").compile(Graph(std::make_shared<ir::Graph>(g))), Error);
}

TEST(StableHlo, ArgmaxIsAReduceOfValueIndexPairs) {
  ir::Graph g;
  ops::Builder b(g);
  ValueId x = g.add_input({DType::f32, dims({4, 10})}, "x");
  g.set_outputs({b.reduce(x, "argmax", {1}, false), b.reduce(x, "argmin", {0}, true)});
  std::string m = backends::pjrt::to_stablehlo(g);
  // two operands (the values and an i64 iota along the axis), two inits, two results; the second is the index
  EXPECT_NE(m.find(":2 = \"stablehlo.reduce\""), std::string::npos) << m;
  EXPECT_NE(m.find("\"stablehlo.iota\"() {iota_dimension = 1 : i64} : () -> tensor<4x10xi64>"), std::string::npos) << m;
  EXPECT_NE(m.find("-> (tensor<4xf32>, tensor<4xi64>)"), std::string::npos) << m;
  EXPECT_NE(m.find("dense<9223372036854775807> : tensor<i64>"), std::string::npos) << m;  // the index init loses every tie
  EXPECT_NE(m.find("comparison_direction GT"), std::string::npos) << m;                  // argmax keeps the larger
  EXPECT_NE(m.find("comparison_direction LT"), std::string::npos) << m;                  // argmin the smaller; ties the lower index
  EXPECT_NE(m.find("#1"), std::string::npos) << m;
  EXPECT_NE(m.find("-> tensor<1x10xi64>"), std::string::npos) << m;  // keepdims by a reshape
  EXPECT_TRUE(backends::pjrt::stablehlo_prints(Op::reduce, {{DType::f32, dims({4, 10})}}, {{DType::i64, dims({4})}},
                                               ir::Attrs{{"kind", std::string("argmax")}, {"axes", std::vector<int64_t>{1}}}));
}
