// rlx bench qwen3: llama-bench's two tests on the Qwen3-0.6B architecture (28 layers, hidden
// 1024, 16 heads, 8 KV heads, head_dim 128, FFN 3072, vocab 151936, tied embeddings) with seeded
// random weights, or on a model given with --model. --config 30b-a3b is the Qwen3-30B-A3B
// mixture of experts (48 layers, hidden 2048, 32 heads, 4 KV heads, 128 experts of 768, 8 per
// token, untied) and 30b-a3b-dense its dense twin with the same active parameters (a SwiGLU of
// 8·768 = 6144): the MoE's decode cost against a dense model's (--layers to fit the machine).
//   pp512  one prefill of 512 tokens into an empty cache (tokens/s = 512 / time)
//   tg128  128 single-token decode steps from an empty cache (tokens/s = 128 / time)
// each mean ± standard deviation over the runs. Quantized precisions are written with RLX's
// own GGUF writer (cached under the temp directory) and read back through the GGUF loader, as a
// llama.cpp file would be. The machine's memory read bandwidth is measured here, and with the
// bytes one decode step must read (weights and KV cache) gives the decode bound.
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <numeric>
#include <thread>

#include <immintrin.h>

#include "bench.h"
#include "json.h"
#include "models/generate.h"
#include "models/llama_parallel.h"
#include "models/qwen3_model.h"
#include "models/qwen3_weights.h"
#include "ops/builder.h"
#include "rlx/session.h"
#include "rlx/error.h"
#include "util/flags.h"
#include "util/thread_pool.h"

namespace rlx::cli {

namespace {

namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;

double ms_since(clock_type::time_point t) { return std::chrono::duration<double, std::milli>(clock_type::now() - t).count(); }

// Sum of n words, streamed the way the decode kernels stream weights (AVX2 loads, software
// prefetch ~2 KiB ahead).
__attribute__((target("avx2"))) uint64_t stream_sum(const uint64_t* p, int64_t n) {
  __m256i a = _mm256_setzero_si256(), b = a, c = a, d = a;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    _mm_prefetch(reinterpret_cast<const char*>(p + i) + 2048, _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(p + i) + 2048 + 64, _MM_HINT_T0);
    a = _mm256_add_epi64(a, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i)));
    b = _mm256_add_epi64(b, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 4)));
    c = _mm256_add_epi64(c, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 8)));
    d = _mm256_add_epi64(d, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 12)));
  }
  alignas(32) uint64_t t[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(t), _mm256_add_epi64(_mm256_add_epi64(a, b), _mm256_add_epi64(c, d)));
  uint64_t s = t[0] + t[1] + t[2] + t[3];
  for (; i < n; ++i) s += p[i];
  return s;
}

// Best of a few passes reading 2 GiB on every pool thread, in GB/s: DRAM, even where the last
// level cache is hundreds of MiB (this machine reports a shared 480 MiB L3).
double read_bandwidth_gbs() {
  const int64_t words = (int64_t{2048} << 20) / 8;
  std::unique_ptr<uint64_t[]> buf(new uint64_t[static_cast<size_t>(words)]);
  rlx::parallel_for(words, 1 << 16, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) buf[static_cast<size_t>(i)] = static_cast<uint64_t>(i);
  });
  double best = 0;
  std::atomic<uint64_t> sink{0};
  int64_t chunk = (words + rlx::num_threads() - 1) / std::max(1, rlx::num_threads());
  for (int pass = 0; pass < 3; ++pass) {
    auto t = clock_type::now();
    rlx::parallel_for(words, chunk, [&](int64_t lo, int64_t hi) { sink += stream_sum(buf.get() + lo, hi - lo); });
    best = std::max(best, static_cast<double>(words * 8) / (ms_since(t) / 1000.0) / 1e9);
  }
  return sink.load() == 0 ? 0 : best;  // the sum is never 0; reading it keeps the loop
}

// A device's memory bandwidth in GB/s as one of RLX's own kernels over 1 GiB kept in device
// memory reaches it (best of 5 host-timed runs), 0 where the device keeps nothing resident (the
// host figure above would bound a GPU's decode by the CPU's memory). `copy`: y = −x, counted as
// the 2 GiB it reads and writes (what a device-to-device copy's bandwidth means); otherwise
// row maxima, the 1 GiB read alone (maxima, not sums: sums accumulate in f64 like the reference
// and read at a fraction of the bandwidth).
double device_bandwidth_gbs(const std::string& device, bool copy, int64_t rows = 16384) {
  // A device that cannot bind 1 GiB at once (lavapipe: 128 MiB) takes 128 MiB, still well past
  // any cache.
  const int64_t cols = 16384, n = rows * cols;
  auto g = std::make_shared<ir::Graph>();
  g->name = copy ? "copy_bandwidth" : "read_bandwidth";
  ops::Builder b(*g);
  ir::ValueId x = g->add_input({DType::f32, {Dim(rows), Dim(cols)}}, "x");
  g->set_outputs({copy ? b.unary(ir::Op::neg, x) : b.reduce(x, "max", {1}, false)});
  CompiledModel probe = Session(device).compile(Graph(g));
  Tensor t = Tensor::zeros(DType::f32, {rows, cols});
  // without device-resident buffers (opengl, gpu) every run would upload the 1 GiB: that times
  // the host link, not the memory — no bound then (0)
  if (!probe.keep_on_device(t)) return 0;
  double best = 1e30;
  for (int i = 0; i < 6; ++i) {
    auto t0 = clock_type::now();
    try {
      probe.run({t});
    } catch (const Error& e) {
      if ((e.kind() != ErrorKind::unsupported && e.kind() != ErrorKind::out_of_memory) || rows <= 2048) throw;
      probe.release_from_device(t, false);
      return device_bandwidth_gbs(device, copy, 2048);
    }
    if (i > 0) best = std::min(best, ms_since(t0));
  }
  probe.release_from_device(t, false);
  return static_cast<double>(n) * 4 * (copy ? 2 : 1) / (best / 1000) / 1e9;
}

// The bandwidth a decode step's bound uses and what measured it: on a device the better of
// the copy and the read probe (a GPU's copy runs nearer its peak than any one reduction).
struct Bandwidth {
  double gbs = 0;
  const char* probe = "none";
};
Bandwidth device_bandwidth(const std::string& device) {
  double read = device_bandwidth_gbs(device, false);
  if (read <= 0) return {};
  double copy = 0;
  try {
    copy = device_bandwidth_gbs(device, true);
  } catch (const Error&) {
    // a device without room for the copy's output keeps the read figure
  }
  return copy > read ? Bandwidth{copy, "copy"} : Bandwidth{read, "read"};
}

struct Stats {
  double mean = 0, stddev = 0;
  int runs = 0;
};

// tokens/s of every timed run → mean and sample standard deviation (llama-bench's figures).
Stats tokens_per_second(const Timing& t, int64_t tokens) {
  Stats s;
  s.runs = t.runs();
  std::vector<double> tps;
  for (double ms : t.ms) tps.push_back(1000.0 * static_cast<double>(tokens) / ms);
  s.mean = std::accumulate(tps.begin(), tps.end(), 0.0) / std::max<size_t>(1, tps.size());
  double v = 0;
  for (double x : tps) v += (x - s.mean) * (x - s.mean);
  s.stddev = tps.size() > 1 ? std::sqrt(v / static_cast<double>(tps.size() - 1)) : 0;
  return s;
}

// The GGUF matrix type of a --precision; "_m" names llama.cpp's mix (Q6_K for the LM head and
// some attn_v / ffn_down).
formats::WeightType gguf_type(const std::string& p) {
  static const std::pair<const char*, formats::WeightType> types[] = {
      {"f16", formats::WeightType::f16},   {"q8_0", formats::WeightType::q8_0},   {"q6_k", formats::WeightType::q6_k},
      {"q5_k", formats::WeightType::q5_k}, {"q5_k_m", formats::WeightType::q5_k}, {"q5_1", formats::WeightType::q5_1},
      {"q5_0", formats::WeightType::q5_0}, {"q4_k", formats::WeightType::q4_k},   {"q4_k_m", formats::WeightType::q4_k},
      {"q4_1", formats::WeightType::q4_1}, {"q4_0", formats::WeightType::q4_0},   {"q3_k", formats::WeightType::q3_k},
      {"q2_k", formats::WeightType::q2_k}, {"iq4_nl", formats::WeightType::iq4_nl}, {"iq4_xs", formats::WeightType::iq4_xs}};
  for (const auto& [name, t] : types)
    if (p == name) return t;
  throw Error(ErrorKind::invalid_argument, cat("--precision ", p, " is not one of f32, bf16, f16, q8_0, q6_k, q5_k_m, q5_k, q5_1, q5_0, q4_k_m, q4_k, q4_1, q4_0, iq4_nl, iq4_xs, q3_k, q2_k"));
}

// Writes the seeded random model as a GGUF file with matrices in `precision` (and, when given,
// a tokenizer.json's vocabulary, padded to the model's, as tokenizer.ggml.*).
void write_random_gguf(const std::string& path, const models::LlamaSpec& spec, const std::string& precision, uint64_t seed,
                       const std::optional<std::string>& tokenizer_json) {
  models::GgufExportOptions o;
  o.matrix_type = gguf_type(precision);
  if (auto mix = models::k_quant_mix_from_name(precision)) o.k_quant_mix = mix->first;
  o.tokenizer_json = tokenizer_json;
  o.name = spec.num_experts ? "qwen3-30b-a3b-architecture-random" : "qwen3-architecture-random";
  std::string tmp = path + ".partial";
  models::write_llama_gguf(
      tmp, spec,
      [&](const std::string& name, const std::vector<int64_t>& shape) {
        int64_t n = 1;
        for (int64_t d : shape) n *= d;
        return models::random_llama_tensor(spec, seed, name, n);
      },
      o);
  fs::rename(tmp, path);
}

// Seeded random weights: dense in memory for f32/bf16, otherwise through a GGUF file.
models::LlamaModel random_model(const std::string& config, const models::LlamaSpec& spec, const std::string& precision, uint64_t seed, bool quiet) {
  models::LlamaModel m;
  m.spec = spec;
  if (precision == "f32" || precision == "bf16") {
    m.weights = models::random_llama_weights(spec, seed, precision == "bf16" ? DType::bf16 : DType::f32);
    return m;
  }
  std::string path = (fs::temp_directory_path() / cat("rlx_bench_qwen3_v1_", config == "0.6b" ? "" : config + "_", spec.num_layers, "l_", precision, "_s", seed, ".gguf")).string();
  if (!fs::exists(path)) {
    if (!quiet) std::fprintf(stderr, "writing %s with RLX's GGUF writer (once)…\n", path.c_str());
    write_random_gguf(path, spec, precision, seed, std::nullopt);
  }
  models::LlamaLoadOptions lo;
  lo.tokenizer = false;
  return models::load_llama_model(path, lo);
}

// Bytes one decode step reads: every matrix once (the embedding only as the tied LM head, one
// row otherwise), norms, and the whole KV cache of `capacity` positions.
double decode_bytes(const models::LlamaModel& m, int64_t capacity) {
  double b = 0;
  for (const auto& [name, w] : m.weights) {
    if (name == "model.embed_tokens.weight" && !m.spec.tie_word_embeddings) continue;
    double bytes = static_cast<double>(w.bytes());
    // a stack of experts: a token reads only its experts_per_token of them
    if (w.shape.size() == 3) bytes = bytes * static_cast<double>(m.spec.experts_per_token) / static_cast<double>(m.spec.num_experts);
    b += bytes;
  }
  b += 2.0 * static_cast<double>(m.spec.num_layers * m.spec.num_kv_heads * capacity * m.spec.head_dim) * 4;
  return b;
}

// The benchmark architectures (--config).
models::LlamaSpec bench_spec(const std::string& config) {
  if (config == "0.6b") return models::qwen3_0_6b_spec();
  if (config != "30b-a3b" && config != "30b-a3b-dense")
    throw Error(ErrorKind::invalid_argument, cat("--config ", config, " is not known (0.6b, 30b-a3b, 30b-a3b-dense)"));
  models::LlamaSpec s = models::qwen3_0_6b_spec();
  s.arch = "qwen3";
  s.hidden_size = 2048;
  s.num_layers = 48;
  s.num_heads = 32;
  s.num_kv_heads = 4;
  s.head_dim = 128;
  s.tie_word_embeddings = false;
  s.intermediate_size = 6144;  // the dense twin: 8 experts' worth
  if (config == "30b-a3b") {
    s.arch = "qwen3moe";
    s.num_experts = 128;
    s.experts_per_token = 8;
    s.expert_intermediate_size = 768;
    s.norm_topk_prob = true;
  }
  return s;
}

std::string describe(const models::LlamaSpec& s) {
  std::string ffn = s.num_experts ? cat(s.num_experts, " experts of ", s.expert_intermediate_size, ", ", s.experts_per_token, " per token")
                                  : cat("FFN ", s.intermediate_size);
  return cat(s.num_layers, " layers, hidden ", s.hidden_size, ", ", s.num_heads, " heads, ", s.num_kv_heads, " KV heads, head_dim ", s.head_dim,
             ", ", ffn, ", vocab ", s.vocab_size, s.tie_word_embeddings ? ", tied" : ", untied");
}

}  // namespace

int bench_qwen3(Args& args) {
  auto model_path = args.value("model");
  std::string precision = args.value_or("precision", model_path ? "f32" : "q8_0");
  std::string config = args.value_or("config", "0.6b");
  auto layers = args.value("layers");
  int64_t pp = args.int_or("pp", 512), tg = args.int_or("tg", 128);
  std::string device = args.value_or("device", flags().RLX_DEVICE);
  auto threads = args.value("threads");
  std::string activations = args.value_or("activations", "auto");
  int64_t seed = args.int_or("seed", 0);
  auto save = args.value("save");
  auto tokenizer = args.value("tokenizer");
  TimingOptions timing = timing_options(args);
  bool json = args.flag("json");
  // one rank of `rlx launch -n T·P -- rlx bench qwen3 --tensor-parallel T --pipeline-parallel P`
  // (--pp is llama-bench's prompt length here)
  int64_t tensor_parallel = args.int_or("tensor-parallel", 1), pipeline_parallel = args.int_or("pipeline-parallel", 1);
  args.finish();
  if (threads) set_flag("RLX_NUM_THREADS", *threads);
  if (tokenizer && !save) throw Error(ErrorKind::invalid_argument, "--tokenizer goes with --save (it is written into the saved GGUF)");
  if (save) {  // the benchmark's model as a file, for `rlx serve` or llama.cpp to load
    if (model_path) throw Error(ErrorKind::invalid_argument, "--save writes the random-weight model; it cannot be combined with --model");
    if (precision == "f32" || precision == "bf16") throw Error(ErrorKind::invalid_argument, "--save writes GGUF matrices: give --precision q8_0, q4_k, f16, …");
    models::LlamaSpec spec = bench_spec(config);
    if (layers) spec.num_layers = parse_int_list("layers", *layers).at(0);
    write_random_gguf(*save, spec, precision, static_cast<uint64_t>(seed), tokenizer);
    std::fprintf(stderr, "wrote %s (%s, %lld layers%s)\n", save->c_str(), precision.c_str(), static_cast<long long>(spec.num_layers),
                 tokenizer ? ", with the tokenizer" : "");
    return 0;
  }
  if (pp < 0 || tg < 0) throw Error(ErrorKind::invalid_argument, "--pp and --tg must not be negative");
  // llama-bench repeats each test 5 times after one warm-up.
  if (timing.runs == 0) timing.runs = 5;
  timing.warmup = std::min(timing.warmup, 1);
  int64_t nthreads = flags().RLX_NUM_THREADS > 0 ? flags().RLX_NUM_THREADS : std::thread::hardware_concurrency();

  models::LlamaParallel par(tensor_parallel, pipeline_parallel);
  const bool parallel = par.comm() != nullptr;
  if (!par.lead()) json = true;  // the other ranks print nothing (below)
  auto t0 = clock_type::now();
  models::LlamaModel m;
  std::string what;
  if (model_path) {
    models::LlamaLoadOptions lo;
    lo.precision = precision;
    lo.tokenizer = false;
    m = models::load_llama_model(*model_path, lo);
    what = *model_path;
  } else {
    models::LlamaSpec spec = bench_spec(config);
    if (layers) spec.num_layers = parse_int_list("layers", *layers).at(0);
    if (parallel && !par.lead()) par.comm()->barrier();  // rank 0 writes the GGUF file once
    m = random_model(config, spec, precision, static_cast<uint64_t>(seed), json);
    if (parallel && par.lead()) par.comm()->barrier();
    what = cat(config == "0.6b" ? "Qwen3-0.6B" : config == "30b-a3b" ? "Qwen3-30B-A3B" : "Qwen3-30B-A3B's dense twin", " architecture (",
               describe(spec), "), random weights");
  }
  double load_ms = ms_since(t0);
  t0 = clock_type::now();
  models::LlamaRunnerOptions ro;
  ro.device = device;
  ro.precision.quantized_activations = activations;
  par.prepare(m.spec, m.weights, ro);
  models::LlamaRunner runner(par.spec(), par.weights(), ro);
  double compile_ms = ms_since(t0);
  bool host = device == "cpu";
  // tensor/pipeline parallel: each rank reads its share, so no one-device bound is printed
  auto bandwidth = [&]() -> Bandwidth { return parallel ? Bandwidth{} : host ? Bandwidth{read_bandwidth_gbs(), "read"} : device_bandwidth(device); };
  Bandwidth measured = bandwidth();
  double bw = measured.gbs;
  double weight_mb = static_cast<double>(m.weight_bytes()) / 1e6;
  const std::string bw_text = bw > 0 ? cat(host ? "memory" : "device memory", " ", measured.probe, " bandwidth ", format_double(std::round(bw * 10) / 10), " GB/s (measured now; again after tg)")
                                    : parallel ? cat("tensor parallel ", tensor_parallel, " × pipeline parallel ", pipeline_parallel, " (rank 0's timings; no one-device bound)")
                                    : cat("no bandwidth bound (", device, " keeps no buffers on the device between runs: a probe would time host copies)");
  if (!json)
    std::printf("qwen3: %s, %s (%.0f MB of weights)\ndevice %s, %lld threads; loaded in %.0f ms, graphs built in %.0f ms; %s\n\n%-7s %12s %10s %6s %12s\n",
                what.c_str(), precision.c_str(), weight_mb, device.c_str(), static_cast<long long>(nthreads), load_ms, compile_ms, bw_text.c_str(),
                "test", "tokens/s", "± stddev", "runs", "first ms");

  // Token ids spread over the vocabulary; no sampling is timed (llama-bench feeds tokens too).
  // A decode step is a greedy one: the graph's argmax picks the next token on the device (what
  // `rlx generate --temperature 0` does), so a GPU returns 8 bytes a token, not the logits.
  auto token = [&](int64_t i) { return static_cast<int32_t>((1000 + i * 7919) % m.spec.vocab_size); };
  std::vector<std::string> rows;
  auto report = [&](const std::string& test, int64_t tokens, const Timing& t, double first_ms, std::string extra_json, const std::string& extra) {
    Stats s = tokens_per_second(t, tokens);
    rows.push_back(cat("{\"test\":\"", test, "\",\"tokens\":", tokens, ",\"tokens_per_second\":", format_double(s.mean), ",\"stddev\":",
                       format_double(s.stddev), ",\"runs\":", s.runs, ",\"first_run_ms\":", format_double(first_ms), extra_json, "}"));
    if (!json) std::printf("%-7s %12.2f %10.2f %6d %12.0f%s\n", test.c_str(), s.mean, s.stddev, s.runs, first_ms, extra.c_str());
    std::fflush(stdout);
    return s;
  };
  if (pp > 0) {
    std::vector<int32_t> prompt;
    for (int64_t i = 0; i < pp; ++i) prompt.push_back(token(i));
    auto run = [&] {
      runner.reset(pp);
      runner.forward(prompt);
    };
    auto f = clock_type::now();
    run();  // specializes the graph for this shape
    double first = ms_since(f);
    report(cat("pp", pp), pp, time_runs(run, timing), first, "", "");
  }
  if (tg > 0) {
    auto run = [&] {
      runner.reset(tg);
      for (int64_t i = 0; i < tg; ++i) runner.forward_greedy(token(i));
    };
    auto f = clock_type::now();
    run();
    double first = ms_since(f);
    Timing t = time_runs(run, timing);
    // The machine is shared: measure again and keep the better figure (a loaded moment reads less).
    if (bw > 0) {
      Bandwidth again = bandwidth();
      if (again.gbs > bw) bw = again.gbs, measured = again;
    }
    double bytes = decode_bytes(m, tg);
    double bound = bw * 1e9 / bytes;
    Stats s = tokens_per_second(t, tg);
    if (bw <= 0) {
      report(cat("tg", tg), tg, t, first, cat(",\"bytes_per_token\":", format_double(bytes), ",\"bound_tokens_per_second\":null,\"fraction_of_bound\":null"), "");
    } else {
      report(cat("tg", tg), tg, t, first,
             cat(",\"bytes_per_token\":", format_double(bytes), ",\"bound_tokens_per_second\":", format_double(bound), ",\"fraction_of_bound\":",
                 format_double(s.mean / bound)),
             cat("   bound ", format_double(std::round(bound * 10) / 10), " tokens/s (", format_double(std::round(bytes / 1e6)), " MB per token at ",
                 format_double(std::round(bw * 10) / 10), " GB/s): ", format_double(std::round(100 * s.mean / bound)), "%"));
    }
  }
  if (!par.lead()) return 0;
  if (json)
    std::printf("{\"workload\":\"qwen3\",\"tensor_parallel\":%lld,\"pipeline_parallel\":%lld,\"model\":%s,\"precision\":%s,\"device\":%s,\"threads\":%lld,\"layers\":%lld,\"weight_bytes\":%lld,"
                "\"bandwidth_gb_s\":%s,\"bandwidth_probe\":%s,\"load_ms\":%s,\"compile_ms\":%s,\"results\":%s}\n",
                static_cast<long long>(tensor_parallel), static_cast<long long>(pipeline_parallel), json_quote(what).c_str(), json_quote(precision).c_str(),
                json_quote(device).c_str(), static_cast<long long>(nthreads),
                static_cast<long long>(m.spec.num_layers), static_cast<long long>(m.weight_bytes()), bw > 0 ? format_double(bw).c_str() : "null",
                json_quote(measured.probe).c_str(), format_double(load_ms).c_str(), format_double(compile_ms).c_str(), json_array(rows).c_str());
  return 0;
}

}  // namespace rlx::cli
