// rlx bench soak: one compiled model (the all-MiniLM-L6-v2 architecture, random weights) run from
// many threads at once for a given time — the way a server uses it. Every result must equal, bit
// for bit, the first result its thread got for the same input, and the resident set must stay
// flat once warm (growth ≤ --max-growth after the first tenth of the time). `make soak` runs it.

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>

#include "bench.h"
#include "json.h"
#include "rss_watch.h"
#include "models/bert.h"
#include "rlx/error.h"
#include "rlx/session.h"
#include "util/flags.h"
#include "util/thread_pool.h"

namespace rlx::cli {

namespace {

// Token ids for thread `t`: each thread its own sequence length (so the executable cache is shared
// by several shapes) and its own ids.
std::vector<Tensor> inputs_for(int t, int64_t vocab) {
  int64_t seq = 16 + 8 * (t % 4);
  Tensor ids = Tensor::zeros(DType::i64, {1, seq}), mask = Tensor::zeros(DType::i64, {1, seq}), types = Tensor::zeros(DType::i64, {1, seq});
  for (int64_t i = 0; i < seq; ++i) {
    ids.data_as<int64_t>()[i] = 1000 + (i * 7919 + t * 104729) % (vocab - 1000);
    mask.data_as<int64_t>()[i] = 1;
  }
  return {ids, mask, types};
}

}  // namespace

int bench_soak(Args& args) {
  double seconds = args.float_or("seconds", 60);
  int callers = static_cast<int>(args.int_or("callers", 8));
  double max_growth = args.float_or("max-growth", 0.01);
  std::string device = args.value_or("device", flags().RLX_DEVICE);
  bool json = args.flag("json");
  args.finish();
  if (seconds <= 0 || callers < 1) throw Error(ErrorKind::invalid_argument, "--seconds must be positive and --callers at least 1");
  models::BertSpec spec = models::minilm_l6_spec();
  models::BertWeights weights = models::random_bert_weights(spec, 7);
  CompiledModel model = Session(device).compile(Graph(std::make_shared<ir::Graph>(models::build_bert_graph(spec, models::PoolingSpec{}, weights))));
  std::atomic<bool> stop{false};
  std::atomic<int64_t> runs{0}, mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < callers; ++t)
    threads.emplace_back([&, t] {
      std::vector<Tensor> in = inputs_for(t, spec.vocab_size);
      Tensor first = model.run(in)[0];
      while (!stop) {
        Tensor got = model.run(in)[0];
        if (!got.bytes_equal(first)) ++mismatches;
        ++runs;
      }
    });
  RssWatch rss;
  if (!json) std::printf("soak: MiniLM-L6 architecture, %d callers on %d threads, %.0f s on %s\n", callers, num_threads(), seconds, device.c_str());
  rss.run(seconds);
  stop = true;
  for (auto& th : threads) th.join();
  const double growth = rss.growth();
  bool ok = mismatches == 0 && growth <= max_growth;
  if (json)
    std::printf("{\"workload\":\"soak\",\"device\":%s,\"callers\":%d,\"seconds\":%s,\"runs\":%lld,\"mismatches\":%lld,\"rss_warm\":%zu,\"rss_peak_after\":%zu,\"growth\":%s,\"ok\":%s,\"rss_samples\":[%s]}\n",
                json_quote(device).c_str(), callers, format_double(seconds).c_str(), static_cast<long long>(runs.load()), static_cast<long long>(mismatches.load()), rss.warm,
                rss.peak_after, format_double(growth).c_str(), ok ? "true" : "false", join(rss.samples, ",").c_str());
  else
    std::printf("%lld runs, %lld results differing from their thread's first; RSS %.1f MiB when warm, peak after %.1f MiB (%+.2f %%, limit %.1f %%): %s\n",
                static_cast<long long>(runs.load()), static_cast<long long>(mismatches.load()), rss.warm / 1048576.0, rss.peak_after / 1048576.0, growth * 100, max_growth * 100,
                ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}

}  // namespace rlx::cli
