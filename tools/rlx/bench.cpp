// rlx bench: dispatches to the workload named first and holds the shared timing loop.
#include "bench.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <numeric>

#include "commands.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::cli {

const std::vector<BenchWorkload>& bench_workloads() {
  // One line per workload; its code lives in bench_<name>.cpp.
  static const std::vector<BenchWorkload> w = {
      {"minilm", "[--batch 1,8,32] [--seq 128] [--device D] [--precision f32] [--threads N] [--warmup N] [--runs N | --min-runs N --min-time S] [--seed N] [--save DIR] [--versus DEVICE] [--json [--times]]",
       "sentence-embedding latency on the all-MiniLM-L6-v2 architecture (random weights)", bench_minilm},
      {"gemm", "[--size 1024[,2048]] [--device D] [--threads N] [--warmup N] [--runs N] [--min-time S] [--json]",
       "matmul GFLOP/s, f32 and bf16, against a direct OpenBLAS sgemm in the same run", bench_gemm},
      {"mlp-train", "[--hidden 128|512,512] [--batch N] [--steps N] [--warmup N] [--precision P] [--device D] [--threads N] [--json]",
       "MLP training images/s on resident synthetic batches (default: 784-128-10 b128 and 784-512-512-10 b256)", bench_mlp_train},
      {"qwen3", "[--model DIR|FILE.gguf | --config 0.6b|30b-a3b|30b-a3b-dense] [--precision f32|bf16|f16|q8_0|q6_k|q5_k_m|q5_k|q5_1|q5_0|q4_k_m|q4_k|q4_1|q4_0|iq4_nl|iq4_xs|q3_k|q2_k] [--layers N] [--pp 512] [--tg 128] [--activations auto|q8|f32] [--device D] [--threads N] [--runs N] [--seed N] [--save FILE.gguf [--tokenizer tokenizer.json]] [--tensor-parallel T] [--pipeline-parallel P] (one rank of rlx launch -n T·P) [--json]",
       "llama-bench's pp512 / tg128 tokens/s on the Qwen3-0.6B architecture (random weights) with the measured memory bandwidth bound", bench_qwen3},
      {"collectives", "[--check] [--sizes 4K,64K,1M,16M,64M] [--runs N] [--kill-rank R] [--json]  (as every rank: rlx launch -n N [--backend gloo|mpi|nccl] -- rlx bench collectives …)",
       "all-reduce time and bus bandwidth from 4 KB to 64 MB; --check: every collective × dtype × size exact", bench_collectives},
      {"linalg", "[--ops cholesky,lu,qr,eigh,svd,solve,triangular_solve,inv,slogdet,matrix_exp] [--sizes 256,1024] [--dtype f64|f32] [--device D] [--threads N] [--warmup N] [--runs N] [--min-time S] [--json]",
       "dense linear algebra ms per n×n matrix, each result checked by its residual (bench/linalg_peers.py: side by side with NumPy/SciPy)", bench_linalg},
      {"poisson", "[--grid 300,1000] [--method cholesky|lu|auto|cg|bicgstab|gmres] [--preconditioner none|jacobi|ichol] [--rtol 1e-10] [--device D] [--threads N] [--warmup N] [--runs N] [--min-time S] [--json]",
       "the 2D Poisson equation on an N×N grid (N² unknowns) by a sparse direct solve or a Krylov method, residual checked (bench/sparse_peers.py: beside SciPy)", bench_poisson},
      {"fft", "[--cases fft:1048576,rfft2:1024x1024,…] [--dtype c128|c64] [--device D] [--threads N] [--warmup N] [--runs N] [--min-time S] [--json]",
       "Fourier transforms ms per TRANSFORM:SHAPE (fft ifft rfft irfft along the last axis, fft2 rfft2 over the last two), spot-checked against the defining sum (bench/fft_peers.py: beside numpy.fft)", bench_fft},
      {"splat", "[--gaussians 100000] [--size 512x512] [--scale 0.2] [--sh-degree 3] [--device D] [--threads N] [--warmup N] [--runs N] [--min-time S] [--json]",
       "3D Gaussian splatting ms: the forward render (project + rasterize) and forward + backward (gradients of every parameter and the pose) of a random scene, with its footprint statistics", bench_splat},
      {"soak", "[--seconds 60] [--callers 8] [--max-growth 0.01] [--device D] [--json]",
       "one compiled MiniLM run from many threads for a while: every result bitwise equal to its thread's first, RSS flat after warm-up (make soak)", bench_soak},
      {"serve-soak", "[--seconds 60] [--clients 8] [--max-growth 0.01] [--device D] [--json]",
       "rlx serve over loopback under a bounded load (greedy completions, plain and streamed, and malformed requests): every answer equal to its client's first, none failed, RSS flat after warm-up (make soak)",
       bench_serve_soak},
  };
  return w;
}

namespace {

std::string workload_list() {
  std::string s;
  for (const auto& w : bench_workloads()) s += cat("\n  rlx bench ", w.name, " ", w.usage, "\n      ", w.summary);
  return s;
}

}  // namespace

int cmd_bench(Args& args) {
  auto name = args.subcommand();
  if (!name) throw Error(ErrorKind::invalid_argument, cat("name a workload first:", workload_list()));
  for (const auto& w : bench_workloads())
    if (*name == w.name) return w.run(args);
  throw Error(ErrorKind::invalid_argument, cat("unknown workload '", *name, "'; the workloads are:", workload_list()));
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  double pos = p / 100.0 * static_cast<double>(v.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

Timing time_runs(const std::function<void()>& fn, const TimingOptions& o) {
  using clock = std::chrono::steady_clock;
  Timing t;
  t.warmup = o.warmup;
  for (int i = 0; i < o.warmup; ++i) fn();
  auto start = clock::now();
  for (;;) {
    int n = t.runs();
    if (o.runs > 0 ? n >= o.runs
                   : n >= o.max_runs || (n >= o.min_runs && std::chrono::duration<double>(clock::now() - start).count() >= o.min_seconds))
      break;
    auto a = clock::now();
    fn();
    t.ms.push_back(std::chrono::duration<double, std::milli>(clock::now() - a).count());
  }
  t.p50 = percentile(t.ms, 50);
  t.p90 = percentile(t.ms, 90);
  t.mean = std::accumulate(t.ms.begin(), t.ms.end(), 0.0) / static_cast<double>(std::max(1, t.runs()));
  t.min = t.ms.empty() ? 0 : *std::min_element(t.ms.begin(), t.ms.end());
  return t;
}

TimingOptions timing_options(Args& args) {
  TimingOptions o;
  o.warmup = static_cast<int>(args.int_or("warmup", o.warmup));
  o.runs = static_cast<int>(args.int_or("runs", 0));
  o.min_runs = static_cast<int>(args.int_or("min-runs", o.min_runs));
  o.min_seconds = args.float_or("min-time", o.min_seconds);
  if (o.warmup < 0 || o.runs < 0 || o.min_runs < 1 || !(o.min_seconds >= 0))
    throw Error(ErrorKind::invalid_argument, "--warmup, --runs and --min-time must not be negative, --min-runs at least 1");
  return o;
}

std::vector<int64_t> parse_int_list(const std::string& option, const std::string& text) {
  std::vector<int64_t> out;
  for (const auto& part : split(text, ',')) {
    char* end = nullptr;
    long long v = std::strtoll(part.c_str(), &end, 10);
    if (part.empty() || *end || v <= 0)
      throw Error(ErrorKind::invalid_argument, cat("--", option, " expects positive integers like 8 or 1,8,32; got '", text, "'"));
    out.push_back(v);
  }
  return out;
}

}  // namespace rlx::cli
