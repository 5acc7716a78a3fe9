// The megakernel's stretches and waits (backends/cuda/megakernel_plan.h): pure host logic, so it
// runs wherever the cuda backend is built.
#include <gtest/gtest.h>

#include "backends/cuda/megakernel_plan.h"
#include "rlx/error.h"

using namespace rlx::backends::cuda;

namespace {

MegaOp gemv(bool blocks, int64_t tiles) {
  MegaOp op;
  op.kind = blocks ? MegaKind::gemv_blocks : MegaKind::gemv_half;
  op.gemv.w_bf16 = !blocks;
  op.tiles = tiles;
  return op;
}

MegaOp rope(int64_t tiles) {
  MegaOp op;
  op.kind = MegaKind::norm_rope;
  op.rope.dt = Dt::f32;
  op.tiles = tiles;
  return op;
}

TEST(MegakernelPlan, StretchesSplitWhereTheVariantChangesAndWaitOnlyInside) {
  // 0: a bf16 GEMV writes [0, 100); 1: a rope reads it, writes [100, 200); 2: a GEMV of ggml
  // blocks (another kernel variant) reads that; 3: not an op; 4–5: two independent ropes.
  std::vector<MegaOp> ops = {gemv(false, 500), rope(2), gemv(true, 300), MegaOp{}, rope(1), rope(1)};
  std::vector<bool> ok = {true, true, true, false, true, true};
  std::vector<StepAccess> acc = {
      {{{1000, 1100}}, {{0, 100}}}, {{{0, 100}}, {{100, 200}}}, {{{100, 200}}, {{200, 300}}},
      {{{200, 300}}, {{300, 400}}}, {{{300, 400}}, {{400, 500}}}, {{{300, 400}}, {{500, 600}}},
  };
  std::vector<MegaStretch> s = plan_mega_stretches(ops, ok, acc, 396, 1);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].first, 0u);
  EXPECT_EQ(s[0].end, 2u);
  EXPECT_EQ(s[0].w, kWeightsBf16);
  EXPECT_EQ(s[1].first, 2u);
  EXPECT_EQ(s[1].end, 3u);
  EXPECT_EQ(s[1].w, kWeightsBlocks);
  EXPECT_EQ(s[2].first, 4u);
  EXPECT_EQ(s[2].end, 6u);
  // the rope waits for all the GEMV's blocks (its 500 tiles on a grid of 396)
  ASSERT_EQ(ops[1].n_deps, 1);
  EXPECT_EQ(ops[1].deps[0], 0);
  EXPECT_EQ(ops[1].need[0], 396u);
  EXPECT_EQ(ops[1].first_block, 500 % 396);
  // the second GEMV's input came from the stretch before it: stream order, no wait
  EXPECT_EQ(ops[2].n_deps, 0);
  EXPECT_EQ(ops[2].first_block, 0);
  // the two ropes touch none of each other's bytes
  EXPECT_EQ(ops[5].n_deps, 0);
  // at least 3 steps a stretch: only nothing qualifies
  std::vector<MegaOp> again = ops;
  EXPECT_TRUE(plan_mega_stretches(again, ok, acc, 396, 3).empty());
}

TEST(MegakernelPlan, OpKindsChosenByName) {
  EXPECT_TRUE(megakernel_kind_chosen(MegaKind::attention, "all"));
  EXPECT_TRUE(megakernel_kind_chosen(MegaKind::gemv_blocks, "rope,gemv"));
  EXPECT_TRUE(megakernel_kind_chosen(MegaKind::norm_rope, "rope,gemv"));
  EXPECT_FALSE(megakernel_kind_chosen(MegaKind::attention, "rope,gemv"));
  EXPECT_FALSE(megakernel_kind_chosen(MegaKind::binary, "gemv"));
  EXPECT_THROW(megakernel_kind_chosen(MegaKind::gemv_half, "gemv,matmul"), rlx::Error);
}

}  // namespace
