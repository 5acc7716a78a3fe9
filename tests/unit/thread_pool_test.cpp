// The CPU thread pool under churn: jobs of every chunk count back to back (a worker that loops
// back late must never take a chunk of the next job), exceptions, callers from many threads.
// `make tsan` runs these under ThreadSanitizer.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

#include "util/thread_pool.h"

using namespace rlx;

namespace {

// Sets the pool's size for one test and restores it afterwards.
struct PoolSize {
  explicit PoolSize(int n) : before(num_threads()) { set_num_threads(n); }
  ~PoolSize() { set_num_threads(before); }
  int before;
};

}  // namespace

TEST(ThreadPool, EveryItemRunsExactlyOnceAcrossJobsOfEveryChunkCount) {
  PoolSize size(4);  // more workers than this machine's cores: late workers are the point
  std::vector<std::atomic<int>> hits(64);
  for (int job = 0; job < 3000; ++job) {
    int64_t n = 1 + job % 64, grain = 1 + job % 17;  // 1 to 4 chunks, changing every job
    for (int64_t i = 0; i < n; ++i) hits[static_cast<size_t>(i)].store(0, std::memory_order_relaxed);
    parallel_for(n, grain, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) hits[static_cast<size_t>(i)].fetch_add(1, std::memory_order_relaxed);
    });
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << "job " << job << " (n " << n << ", grain " << grain << "), item " << i;
  }
}

TEST(ThreadPool, AChunksExceptionReachesTheCallerAndThePoolGoesOn) {
  PoolSize size(3);
  for (int round = 0; round < 50; ++round) {
    EXPECT_THROW(parallel_for(300, 1, [&](int64_t lo, int64_t) {
                   if (lo > 0) throw std::runtime_error("chunk failed");
                 }),
                 std::runtime_error);
    std::atomic<int64_t> sum{0};
    parallel_for(300, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) sum += i;
    });
    ASSERT_EQ(sum.load(), 300 * 299 / 2) << "round " << round;
  }
}

TEST(ThreadPool, CallersOnManyThreadsEachGetTheirWholeRange) {
  PoolSize size(4);
  std::vector<std::thread> callers;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 6; ++t)
    callers.emplace_back([&, t] {
      for (int job = 0; job < 400; ++job) {
        int64_t n = 50 + (job * 7 + t) % 200;
        std::atomic<int64_t> sum{0};
        parallel_for(n, 8, [&](int64_t lo, int64_t hi) {
          int64_t s = 0;
          for (int64_t i = lo; i < hi; ++i) s += i + 1;
          sum += s;
        });
        if (sum.load() != n * (n + 1) / 2) wrong++;
      }
    });
  for (auto& c : callers) c.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(ThreadPool, ANestedCallRunsInline) {
  PoolSize size(2);
  std::atomic<int64_t> inner{0};
  parallel_for(4, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i)
      parallel_for(100, 1, [&](int64_t a, int64_t b) { inner += b - a; });
  });
  EXPECT_EQ(inner.load(), 400);
}
