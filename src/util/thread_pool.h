// The CPU thread pool: one knob (RLX_NUM_THREADS / set_num_threads), workers that spin only
// briefly after a job and then sleep (never burning a core while idle), and a caller that
// works too. Nested or concurrent calls run inline instead of oversubscribing the machine.
#pragma once
#include <cstdint>
#include <functional>

namespace rlx {

// Threads kernels may use: RLX_NUM_THREADS when set (> 0), otherwise every core.
int num_threads();
// Changes the thread count (0 = every core); takes effect for the next parallel_for.
void set_num_threads(int n);

// Splits [0, n) into contiguous chunks of at least `grain` items and runs fn(lo, hi) on each,
// in parallel. Returns when all chunks are done. Exceptions in fn propagate to the caller.
void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t lo, int64_t hi)>& fn);

}  // namespace rlx
