// The parity figure of each test: the largest error against the reference seen while it ran,
// printed when it ends (only by tests that compared something).
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

namespace rlx::test {

inline double g_worst_error = -1;  // -1: nothing compared yet

inline void record_error(double e) { g_worst_error = std::max(g_worst_error, e); }

class ParityReport : public ::testing::EmptyTestEventListener {
  void OnTestStart(const ::testing::TestInfo&) override { g_worst_error = -1; }
  void OnTestEnd(const ::testing::TestInfo& t) override {
    if (g_worst_error >= 0) std::printf("    %s: max abs error vs the PyTorch reference %.3g\n", t.name(), g_worst_error);
  }
};

inline const bool g_parity_listener = [] {
  ::testing::UnitTest::GetInstance()->listeners().Append(new ParityReport);
  return true;
}();

}  // namespace rlx::test
