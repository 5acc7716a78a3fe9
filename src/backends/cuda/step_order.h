// Which kernels of a run must wait for which: the steps of an LIR run in program order on one
// stream, but most of a transformer layer's kernels are independent of each other (the Q, K and V
// projections, the K and V cache updates, the gate and up projections). The CUDA graph a run
// context replays is captured over several streams with exactly the orderings the memory needs,
// so independent kernels overlap and the chain the GPU must walk is shorter.
//
// Orderings come from the device bytes each step touches, not from the IR's values: the memory
// plan reuses arena bytes between values whose lifetimes do not overlap in program order, and a
// later writer of reused bytes must wait for the earlier readers (and writers) of them.
#pragma once
#include <cstdint>
#include <vector>

namespace rlx::backends::cuda {

struct ByteRange {
  uintptr_t lo = 0, hi = 0;  // [lo, hi)
};

struct StepAccess {
  std::vector<ByteRange> reads, writes;  // a step's scratch counts as written
};

// For every step, the earlier steps it must follow (a read after a write, or a write after a read
// or a write of overlapping bytes), nearest first, leaving out those already implied through
// another dependency.
std::vector<std::vector<int>> step_dependencies(const std::vector<StepAccess>& steps);

// Streams for a capture of the steps over at most `streams` streams (0 = the capture's own):
// a step continues the stream of its nearest dependency when that dependency is the stream's
// last step, else takes a stream whose last step it already follows, a fresh one, or the one
// idle longest. The capture waits on another stream's step only where the order is not implied.
struct StreamPlan {
  std::vector<int> stream;             // per step
  std::vector<std::vector<int>> waits;  // per step: the steps on other streams to wait for first
  int used = 1;                         // streams in use
};
StreamPlan plan_streams(const std::vector<std::vector<int>>& deps, int streams);

}  // namespace rlx::backends::cuda
