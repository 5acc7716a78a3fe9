// rlx bench WORKLOAD: each workload lives in its own file (bench_<name>.cpp) and is listed once
// in bench.cpp's table; they share the timing loop and statistics below so every workload
// reports p50/p90 the same way.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "args.h"

namespace rlx::cli {

struct BenchWorkload {
  const char* name;
  const char* usage;    // options after the workload name
  const char* summary;  // one line
  int (*run)(Args& args);
};
const std::vector<BenchWorkload>& bench_workloads();

int bench_minilm(Args& args);
int bench_gemm(Args& args);
int bench_mlp_train(Args& args);
int bench_qwen3(Args& args);
int bench_collectives(Args& args);
int bench_linalg(Args& args);
int bench_poisson(Args& args);
int bench_fft(Args& args);
int bench_soak(Args& args);
int bench_serve_soak(Args& args);
int bench_splat(Args& args);

// Warm-up runs first (not timed), then timed runs until both min_runs and min_seconds are
// reached (or max_runs); runs > 0 asks for exactly that many timed runs instead.
struct TimingOptions {
  int warmup = 3;
  int runs = 0;
  int min_runs = 10;
  int max_runs = 1000;
  double min_seconds = 3.0;
};

struct Timing {
  std::vector<double> ms;  // every timed run, in order
  double p50 = 0, p90 = 0, mean = 0, min = 0;
  int warmup = 0;
  int runs() const { return static_cast<int>(ms.size()); }
};

Timing time_runs(const std::function<void()>& fn, const TimingOptions& options);
// Percentile with linear interpolation between order statistics (numpy's default).
double percentile(std::vector<double> values, double p);
// --warmup N, --runs N, --min-runs N, --min-time SEC, read from the workload's arguments.
TimingOptions timing_options(Args& args);
// "1,8,32" → {1, 8, 32}; each value positive.
std::vector<int64_t> parse_int_list(const std::string& option, const std::string& text);

}  // namespace rlx::cli
