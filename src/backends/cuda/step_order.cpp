#include "backends/cuda/step_order.h"

#include <algorithm>

namespace rlx::backends::cuda {

namespace {

// A set of step indices, one bit each.
class StepSet {
 public:
  explicit StepSet(size_t n = 0) : w_((n + 63) / 64, 0) {}
  bool has(int i) const { return (w_[static_cast<size_t>(i) / 64] >> (i % 64)) & 1; }
  void add(int i) { w_[static_cast<size_t>(i) / 64] |= uint64_t{1} << (i % 64); }
  void add_all(const StepSet& o) {
    for (size_t k = 0; k < w_.size(); ++k) w_[k] |= o.w_[k];
  }

 private:
  std::vector<uint64_t> w_;
};

bool overlap(const std::vector<ByteRange>& a, const std::vector<ByteRange>& b) {
  for (const ByteRange& x : a)
    for (const ByteRange& y : b)
      if (x.lo < y.hi && y.lo < x.hi) return true;
  return false;
}

bool conflict(const StepAccess& earlier, const StepAccess& later) {
  return overlap(earlier.writes, later.reads) || overlap(earlier.writes, later.writes) || overlap(earlier.reads, later.writes);
}

}  // namespace

std::vector<std::vector<int>> step_dependencies(const std::vector<StepAccess>& steps) {
  const size_t n = steps.size();
  std::vector<std::vector<int>> deps(n);
  std::vector<StepSet> before(n, StepSet(n));  // every step a step follows, directly or not
  for (size_t j = 0; j < n; ++j) {
    StepSet& b = before[j];
    for (int i = static_cast<int>(j) - 1; i >= 0; --i) {
      if (b.has(i) || !conflict(steps[static_cast<size_t>(i)], steps[j])) continue;
      deps[j].push_back(i);
      b.add(i);
      b.add_all(before[static_cast<size_t>(i)]);
    }
  }
  return deps;
}

StreamPlan plan_streams(const std::vector<std::vector<int>>& deps, int streams) {
  const size_t n = deps.size();
  StreamPlan p;
  p.stream.assign(n, 0);
  p.waits.assign(n, {});
  std::vector<int> tail(static_cast<size_t>(std::max(1, streams)), -1);
  std::vector<StepSet> done(n, StepSet(n));  // steps certainly finished when a step starts
  for (size_t j = 0; j < n; ++j) {
    StepSet must(n);  // what j follows through its dependencies
    for (int i : deps[j]) {
      must.add(i);
      must.add_all(done[static_cast<size_t>(i)]);
    }
    int s = -1;
    for (int i : deps[j])  // nearest first: continue its chain
      if (tail[static_cast<size_t>(p.stream[static_cast<size_t>(i)])] == i) {
        s = p.stream[static_cast<size_t>(i)];
        break;
      }
    for (int t = 0; s < 0 && t < p.used; ++t)
      if (tail[static_cast<size_t>(t)] < 0 || must.has(tail[static_cast<size_t>(t)])) s = t;
    if (s < 0 && p.used < static_cast<int>(tail.size())) s = p.used++;
    if (s < 0) s = static_cast<int>(std::min_element(tail.begin(), tail.end()) - tail.begin());
    StepSet have(n);
    if (int t = tail[static_cast<size_t>(s)]; t >= 0) {
      have.add(t);
      have.add_all(done[static_cast<size_t>(t)]);
    }
    for (int i : deps[j]) {
      if (have.has(i)) continue;
      p.waits[j].push_back(i);
      have.add(i);
      have.add_all(done[static_cast<size_t>(i)]);
    }
    done[j] = std::move(have);
    p.stream[j] = s;
    tail[static_cast<size_t>(s)] = static_cast<int>(j);
  }
  return p;
}

}  // namespace rlx::backends::cuda
