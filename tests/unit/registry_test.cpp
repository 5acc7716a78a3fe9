// The backend registry fills once, whoever asks first: threads that race to the first lookup
// all see every built backend (a fresh process, so no earlier test has filled it).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <thread>
#include <vector>

#include "runtime/registry.h"

namespace {

void race_first_lookup() {
  constexpr int kThreads = 8;
  std::atomic<bool> go{false};
  std::vector<size_t> seen(kThreads, 0);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] {
      while (!go.load()) std::this_thread::yield();
      seen[static_cast<size_t>(i)] = rlx::runtime::backends().size();
    });
  go = true;
  for (auto& t : threads) t.join();
  size_t all = rlx::runtime::backends().size();
  for (size_t s : seen)
    if (s != all || all < 3) std::exit(1);  // reference, cpu and null are always built
  std::exit(0);
}

}  // namespace

TEST(RegistryDeathTest, ConcurrentFirstLookupsSeeEveryBackend) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // re-executes the binary: an unfilled registry
  EXPECT_EXIT(race_first_lookup(), ::testing::ExitedWithCode(0), "");
}
