#include <gtest/gtest.h>

#include "ir/text.h"
#include "ops/builder.h"
#include "ops/verify.h"
#include "rlx/error.h"

using namespace rlx;
using namespace rlx::ir;

namespace {

std::string verify_error(const Graph& g, Level level) {
  try {
    ops::verify(g, level);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_graph);
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Verifier, AcceptsAWellFormedGraph) {
  Graph g = parse_graph("graph @g(%x: f32[B,4]) {\n  %y = mir.exp(%x) : f32[B,4]\n  return %y\n}\n");
  EXPECT_EQ(verify_error(g, Level::MIR), "");
}

TEST(Verifier, WrongDeclaredTypeNamesNodeAndBothTypes) {
  Graph g = parse_graph("graph @g(%x: f32[4,3], %w: f32[3,5]) {\n  %y = mir.dot_general(%x, %w) {contract=[[1],[0]]} : f32[4,6] loc(\"proj\")\n  return %y\n}\n");
  std::string e = verify_error(g, Level::MIR);
  EXPECT_NE(e.find("node #0 mir.dot_general \"proj\""), std::string::npos) << e;
  EXPECT_NE(e.find("declared f32[4,6]"), std::string::npos) << e;
  EXPECT_NE(e.find("produces f32[4,5]"), std::string::npos) << e;
}

TEST(Verifier, ShapeErrorsSayWhatIsWrong) {
  Graph g = parse_graph("graph @g(%x: f32[4,3], %w: f32[4,5]) {\n  %y = mir.dot_general(%x, %w) {contract=[[1],[0]]} : f32[3,5]\n  return %y\n}\n");
  std::string e = verify_error(g, Level::MIR);
  EXPECT_NE(e.find("contracting dims differ: lhs dim 1 is 3, rhs dim 0 is 4"), std::string::npos) << e;
  Graph h = parse_graph("graph @g(%x: f32[4,3], %y: f32[5]) {\n  %z = mir.add(%x, %y) : f32[4,3]\n  return %z\n}\n");
  e = verify_error(h, Level::MIR);
  EXPECT_NE(e.find("do not broadcast"), std::string::npos) << e;
}

TEST(Verifier, DTypeMismatchSuggestsACast) {
  Graph g = parse_graph("graph @g(%x: f32[4], %y: f16[4]) {\n  %z = mir.add(%x, %y) : f32[4]\n  return %z\n}\n");
  std::string e = verify_error(g, Level::MIR);
  EXPECT_NE(e.find("same dtype"), std::string::npos) << e;
  EXPECT_NE(e.find("mir.cast"), std::string::npos) << e;
}

TEST(Verifier, ReportsEveryProblemAtOnce) {
  Graph g = parse_graph(
      "graph @g(%x: f32[4]) {\n  %a = mir.exp(%x) : f32[5]\n  %b = mir.log(%x) : f64[4]\n  %c = mir.neg(%x) : f32[4]\n  return %a, %b, %c\n}\n");
  std::string e = verify_error(g, Level::MIR);
  EXPECT_NE(e.find("2 problems"), std::string::npos) << e;
  EXPECT_NE(e.find("node #0 mir.exp"), std::string::npos) << e;
  EXPECT_NE(e.find("node #1 mir.log"), std::string::npos) << e;
}

TEST(Verifier, HirOpsAreIllegalAtMirLevel) {
  Graph g = parse_graph("graph @g(%x: f32[2,4]) {\n  %y = hir.softmax(%x) : f32[2,4]\n  return %y\n}\n");
  EXPECT_EQ(verify_error(g, Level::HIR), "");
  std::string e = verify_error(g, Level::MIR);
  EXPECT_NE(e.find("HIR op at mir level"), std::string::npos) << e;
}

TEST(Verifier, StructuralProblems) {
  Graph g;
  ValueId x = g.add_input({DType::f32, {Dim(4)}}, "x");
  g.add_node(Op::add, {x}, {}, {{DType::f32, {Dim(4)}}});  // add takes two inputs
  g.add_node(Op::cast, {x}, {}, {{DType::f32, {Dim(4)}}});  // cast needs 'to'
  g.set_outputs({x});
  std::string e = verify_error(g, Level::MIR);
  EXPECT_NE(e.find("takes 2 inputs, has 1"), std::string::npos) << e;
  EXPECT_NE(e.find("needs attribute 'to'"), std::string::npos) << e;
}

TEST(Verifier, LirNeedsStaticShapesAndPlacements) {
  Graph g = parse_graph("graph @g(%x: f32[B]) {\n  %y = mir.exp(%x) : f32[B]\n  return %y\n}\n");
  g.is_lir = true;
  std::string e = verify_error(g, Level::LIR);
  EXPECT_NE(e.find("placements"), std::string::npos) << e;
}
