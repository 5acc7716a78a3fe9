#include <gtest/gtest.h>

#include "ir/text.h"
#include "ops/builder.h"
#include "ops/verify.h"

using namespace rlx;
using namespace rlx::ir;

TEST(IrText, PrintsAndParsesAHirGraph) {
  Graph g;
  ops::Builder b(g);
  ValueId x = g.add_input({DType::f32, {Dim::symbol("B"), Dim(784)}}, "x");
  ValueId w = g.add_input({DType::f32, {Dim(128), Dim(784)}}, "w");
  ValueId bias = g.add_input({DType::f32, {Dim(128)}}, "b");
  b.set_context("fc1", "");
  ValueId h = b.emit1(Op::linear, {x, w, bias});
  ValueId r = b.emit1(Op::relu, {h});
  auto tk = b.emit(Op::topk, {r}, Attrs{{"k", int64_t{5}}});
  g.set_outputs({r, tk[1]});
  ops::verify(g);
  std::string text = print_graph(g);
  Graph back = parse_graph(text);
  ops::verify(back);
  EXPECT_EQ(print_graph(back), text) << text;
}
