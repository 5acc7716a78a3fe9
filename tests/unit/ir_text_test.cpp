#include <gtest/gtest.h>

#include "common/op_cases.h"
#include "ir/text.h"
#include "ops/builder.h"
#include "ops/verify.h"
#include "passes/memory_plan.h"
#include "rlx/error.h"

using namespace rlx;
using namespace rlx::ir;

// Every op of the op table, in every sample configuration, prints and parses back to the same
// text, and the parsed graph verifies.
TEST(IrText, EveryOpRoundTrips) {
  int checked = 0;
  for (int i = 0; i < kNumOps; ++i) {
    auto cases = rlx::testing::op_cases(static_cast<Op>(i), 3);
    ASSERT_FALSE(cases.empty()) << op_keyword(static_cast<Op>(i)) << " has no sample";
    for (const auto& c : cases) {
      std::string text = print_graph(c.graph);
      Graph back = parse_graph(text, c.name);
      ops::verify(back);
      EXPECT_EQ(print_graph(back), text) << c.name;
      ++checked;
    }
  }
  EXPECT_GT(checked, kNumOps);
}

TEST(IrText, SymbolicShapesNamesAndLocations) {
  Graph g;
  ops::Builder b(g);
  ValueId x = g.add_input({DType::f32, {Dim::symbol("B"), Dim::parse("S+1"), Dim(8)}}, "input.1");
  b.set_context("encoder/0", "");
  ValueId y = b.reshape(x, {Dim::parse("B*S+B"), Dim(8)});
  g.set_outputs({y});
  std::string text = print_graph(g);
  EXPECT_NE(text.find("%input.1: f32[B,S+1,8]"), std::string::npos) << text;
  EXPECT_NE(text.find("f32[B*S+B,8]"), std::string::npos) << text;
  EXPECT_NE(text.find("loc(\"encoder/0\")"), std::string::npos) << text;
  EXPECT_EQ(print_graph(parse_graph(text)), text);
}

// Origins as passes write them: an op name bare, autodiff's "vjp <op>" quoted (a training step
// graph printed by `rlx compile --emit` parses back).
TEST(IrText, OriginsWithSpacesRoundTrip) {
  Graph g;
  ops::Builder b(g);
  ValueId x = g.add_input({DType::f32, {Dim(4)}}, "x");
  b.set_context("fc1", "hir.linear");
  ValueId y = b.unary(Op::exp, x);
  b.set_context("fc1", "vjp hir.cross_entropy");
  g.set_outputs({b.add(y, x)});
  std::string text = print_graph(g);
  EXPECT_NE(text.find("loc(\"fc1\" from hir.linear)"), std::string::npos) << text;
  EXPECT_NE(text.find("loc(\"fc1\" from \"vjp hir.cross_entropy\")"), std::string::npos) << text;
  Graph back = parse_graph(text);
  EXPECT_EQ(back.node(1).origin, "vjp hir.cross_entropy");
  EXPECT_EQ(print_graph(back), text);
}

TEST(IrText, ConstantsAreExact) {
  Graph g;
  ops::Builder b(g);
  std::vector<float> small = {1.5f, -0.0f, 3.14159274f, 1e-30f};
  std::vector<float> big(40);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(i) / 7.0f;
  ValueId a = b.constant(Tensor::from_vector(small, {4}));
  ValueId c = b.constant(Tensor::from_vector(big, {40}));
  ValueId s = b.constant(Tensor::from_vector(std::vector<int64_t>(9, -3), {3, 3}));
  ValueId h = b.constant(Tensor::from_f64(DType::bf16, {3}, {0.1, 1e30, -2.5}));
  g.set_outputs({a, c, s, h});
  std::string text = print_graph(g);
  EXPECT_NE(text.find("splat(-3)"), std::string::npos) << text;
  Graph back = parse_graph(text);
  for (int i = 0; i < 4; ++i)
    EXPECT_TRUE(back.node(i).attrs.tensor("value").bytes_equal(g.node(i).attrs.tensor("value"))) << "constant " << i;
}

TEST(IrText, ParseErrorsNameLineAndColumn) {
  auto expect_error = [](const std::string& text, const std::string& needle) {
    try {
      parse_graph(text, "t.rlx");
      ADD_FAILURE() << "no error for:\n" << text;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::parse);
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_error("graph @g(%x: f32[4]) {\n  %y = mir.frobnicate(%x) : f32[4]\n  return %y\n}\n", "t.rlx:2:8: unknown op 'mir.frobnicate'");
  expect_error("graph @g(%x: f32[4]) {\n  %y = mir.exp(%z) : f32[4]\n  return %y\n}\n", "%z is used before it is defined");
  expect_error("graph @g(%x: f32[4]) {\n  %y = mir.reduce(%x) {axes=[0], kind=average} : f32[]\n  return %y\n}\n", "'average' is not one of");
  expect_error("graph @g(%x: f32[4]) {\n  %y = mir.reduce(%x) {axes=[0]} : f32[]\n  return %y\n}\n", "needs attribute 'kind'");
  expect_error("graph @g(%x: f32[4]) {\n  %y = mir.exp(%x) : f32[4]\n  %y = mir.exp(%x) : f32[4]\n  return %y\n}\n", "defined twice");
  expect_error("graph @g(%x: q7[4]) {\n  return %x\n}\n", "expected a type");
  expect_error("graph @g(%x: f32[4]) {\n  %y = mir.exp(%x) {color=1} : f32[4]\n  return %y\n}\n", "has no attribute 'color'");
}

TEST(IrText, LirRoundTrips) {
  Graph g;
  ops::Builder b(g);
  ValueId x = g.add_input({DType::f32, {Dim(4), Dim(6)}}, "x");
  ValueId y = b.unary(Op::exp, x);
  ValueId z = b.reshape(y, {Dim(24)});
  ValueId w = b.unary(Op::neg, z);
  ValueId tail = b.unary(Op::neg, b.slice_axis(z, 0, Dim(16), Dim(24)));  // a view 64 bytes in
  g.set_outputs({w, tail});
  Graph lir = passes::plan_memory(g);
  std::string text = print_graph(lir);
  EXPECT_NE(text.find("@view("), std::string::npos) << text;
  EXPECT_NE(text.find("+64)"), std::string::npos) << text;
  EXPECT_NE(text.find("lir @main"), std::string::npos) << text;
  Graph back = parse_graph(text);
  EXPECT_TRUE(back.is_lir);
  EXPECT_EQ(print_graph(back), text);
}
