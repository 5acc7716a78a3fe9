// Every HIR decomposition against the reference's direct definition of the op, on random
// inputs: the reference compiled with force-common (the decomposition, run naively) versus
// prefer-native (the reference's own HIR kernel).
#include <gtest/gtest.h>

#include "common/op_cases.h"
#include "rlx/graph.h"
#include "rlx/session.h"

using namespace rlx;

class Decomposition : public ::testing::TestWithParam<int> {};

TEST_P(Decomposition, MatchesTheReferenceDefinition) {
  auto op = static_cast<ir::Op>(GetParam());
  SessionOptions common;
  common.policy = "force-common";
  SessionOptions native;
  native.policy = "prefer-native";
  for (uint32_t seed : {1u, 2u}) {
    for (auto& c : rlx::testing::op_cases(op, seed)) {
      Graph g(std::make_shared<ir::Graph>(c.graph));
      auto expected = Session("reference", native).compile(g).run(c.inputs);
      auto got = Session("reference", common).compile(g).run(c.inputs);
      ASSERT_EQ(expected.size(), got.size());
      for (size_t k = 0; k < got.size(); ++k) EXPECT_EQ(rlx::testing::compare_tensors(expected[k], got[k], c.tolerance_dtype), "") << c.name;
    }
  }
}

std::vector<int> hir_ops() {
  std::vector<int> out;
  for (int i = 0; i < ir::kNumOps; ++i)
    if (ir::op_info(static_cast<ir::Op>(i)).level == ir::Level::HIR) out.push_back(i);
  return out;
}

INSTANTIATE_TEST_SUITE_P(HirOps, Decomposition, ::testing::ValuesIn(hir_ops()),
                         [](const ::testing::TestParamInfo<int>& info) { return std::string(ir::op_name(static_cast<ir::Op>(info.param))); });
