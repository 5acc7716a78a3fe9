// The orderings a concurrent capture keeps (backends/cuda/step_order.h): pure host logic, so it
// runs wherever the cuda backend is built.
#include <gtest/gtest.h>

#include <algorithm>

#include "backends/cuda/step_order.h"

using namespace rlx::backends::cuda;

namespace {

ByteRange at(uintptr_t lo, uintptr_t n) { return {lo, lo + n}; }

// A decode layer in miniature: h = norm(x); q, k, v = h·W; k, v into the caches; attention reads
// q and the caches; the output reuses h's bytes (the memory plan's reuse after h's last reader).
std::vector<StepAccess> layer() {
  const uintptr_t x = 0, h = 100, q = 200, k = 300, v = 400, kc = 1000, vc = 2000;
  return {
      {{at(x, 100)}, {at(h, 100)}},              // 0 norm
      {{at(h, 100)}, {at(q, 100)}},              // 1 q = h·Wq
      {{at(h, 100)}, {at(k, 100)}},              // 2 k = h·Wk
      {{at(h, 100)}, {at(v, 100)}},              // 3 v = h·Wv
      {{at(k, 100), at(kc, 1000)}, {at(kc, 1000)}},  // 4 k into its cache (in place)
      {{at(v, 100), at(vc, 1000)}, {at(vc, 1000)}},  // 5 v into its cache
      {{at(q, 100), at(kc, 1000), at(vc, 1000)}, {at(h, 100)}},  // 6 attention → h's bytes
  };
}

}  // namespace

TEST(StepOrder, DependenciesFollowTheBytes) {
  auto deps = step_dependencies(layer());
  EXPECT_EQ(deps[0], (std::vector<int>{}));
  EXPECT_EQ(deps[1], (std::vector<int>{0}));
  EXPECT_EQ(deps[2], (std::vector<int>{0}));
  EXPECT_EQ(deps[3], (std::vector<int>{0}));
  EXPECT_EQ(deps[4], (std::vector<int>{2}));
  EXPECT_EQ(deps[5], (std::vector<int>{3}));
  // attention reads q and both caches and overwrites h, which 1, 2 and 3 read (1 is implied by
  // nothing else, 2 and 3 through the cache updates)
  EXPECT_EQ(deps[6], (std::vector<int>{5, 4, 1}));
}

TEST(StepOrder, DisjointStepsAreIndependent) {
  std::vector<StepAccess> s = {{{at(0, 8)}, {at(8, 8)}}, {{at(0, 8)}, {at(16, 8)}}, {{at(8, 8)}, {at(0, 8)}}};
  auto deps = step_dependencies(s);
  EXPECT_TRUE(deps[1].empty());                        // both only read [0, 8)
  EXPECT_EQ(deps[2], (std::vector<int>{1, 0}));        // reads 0's output; overwrites what 0 and 1 read
}

TEST(StepOrder, StreamsWaitOnlyWhereTheOrderIsNotImplied) {
  auto deps = step_dependencies(layer());
  StreamPlan p = plan_streams(deps, 4);
  ASSERT_EQ(p.stream.size(), 7u);
  EXPECT_EQ(p.used, 3);
  EXPECT_EQ(p.stream[0], 0);
  EXPECT_EQ(p.stream[1], 0);  // continues the norm's chain
  EXPECT_NE(p.stream[2], 0);  // q's stream is busy: k and v fork
  EXPECT_NE(p.stream[3], p.stream[2]);
  EXPECT_EQ(p.waits[2], (std::vector<int>{0}));
  EXPECT_EQ(p.waits[3], (std::vector<int>{0}));
  EXPECT_EQ(p.stream[4], p.stream[2]);
  EXPECT_TRUE(p.waits[4].empty());
  EXPECT_TRUE(p.waits[5].empty());
  // attention continues the v chain and waits for the k chain and for q
  EXPECT_EQ(p.stream[6], p.stream[5]);
  EXPECT_EQ(p.waits[6], (std::vector<int>{4, 1}));
  // every step's dependencies are finished before it starts, on one stream or through a wait
  for (size_t j = 0; j < deps.size(); ++j)
    for (int i : deps[j]) {
      bool same = p.stream[static_cast<size_t>(i)] == p.stream[j];
      bool waited = std::find(p.waits[j].begin(), p.waits[j].end(), i) != p.waits[j].end();
      EXPECT_TRUE(same || waited) << j << " after " << i;
    }
}

TEST(StepOrder, OneStreamKeepsProgramOrder) {
  auto deps = step_dependencies(layer());
  StreamPlan p = plan_streams(deps, 1);
  EXPECT_EQ(p.used, 1);
  for (size_t j = 0; j < deps.size(); ++j) {
    EXPECT_EQ(p.stream[j], 0);
    EXPECT_TRUE(p.waits[j].empty());
  }
}
