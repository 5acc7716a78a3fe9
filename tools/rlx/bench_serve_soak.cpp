// rlx bench serve-soak: `rlx serve` under a bounded loopback load for a given time — a small
// Qwen3-architecture model (random weights, token-id prompts) behind the real HTTP server and
// continuous-batching engine, --clients threads each sending greedy completions, plain and
// streamed, with a malformed request now and then. Every answer must be the one its client got
// first for the same prompt (streamed or not), every malformed request a 400 with a JSON error,
// no request may fail, and the resident set must stay flat once warm. `make soak` runs it.
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <thread>

#include "bench.h"
#include "json.h"
#include "rss_watch.h"
#include "models/qwen3_weights.h"
#include "rlx/error.h"
#include "serve/engine.h"
#include "serve/server.h"
#include "util/flags.h"
#include "util/strings.h"

namespace rlx::cli {

namespace {

using Json = nlohmann::json;

models::LlamaSpec soak_spec() {
  models::LlamaSpec s;
  s.arch = "qwen3";
  s.vocab_size = 2048, s.hidden_size = 128, s.intermediate_size = 384, s.num_layers = 2;
  s.num_heads = 4, s.num_kv_heads = 2, s.head_dim = 32, s.max_position_embeddings = 512;
  s.rope_theta = 1e6, s.qk_norm = true, s.tie_word_embeddings = true;
  return s;
}

// The text of a server-sent-events body: every chunk's choices[0].text, in order.
std::string streamed_text(const std::string& body) {
  std::string text;
  size_t at = 0;
  while ((at = body.find("data: ", at)) != std::string::npos) {
    size_t end = body.find("\n\n", at);
    std::string data = body.substr(at + 6, end == std::string::npos ? std::string::npos : end - at - 6);
    at = end == std::string::npos ? body.size() : end;
    if (data == "[DONE]") break;
    Json c = Json::parse(data, nullptr, false);
    if (c.is_object() && c.contains("choices") && !c["choices"].empty()) text += c["choices"][0].value("text", "");
  }
  return text;
}

struct Tally {
  std::atomic<int64_t> requests{0}, streamed{0}, malformed{0}, differing{0}, failed{0};
  std::mutex mu;
  std::string first_failure;
  void fail(const std::string& what) {
    ++failed;
    std::lock_guard<std::mutex> l(mu);
    if (first_failure.empty()) first_failure = what;
  }
};

void client_loop(int port, int t, const std::atomic<bool>& stop, Tally& tally) {
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(60, 0);
  Json prompt = Json::array();
  for (int i = 0; i < 4 + t % 5; ++i) prompt.push_back((t * 131 + i * 17) % 2000 + 1);
  Json req = {{"model", "soak"}, {"prompt", prompt}, {"max_tokens", 8 + t % 8}, {"temperature", 0}, {"ignore_eos", true}};
  std::string first;
  for (int64_t n = 0; !stop; ++n) {
    if (n % 8 == 7) {  // malformed: a budget of the wrong type
      auto r = c.Post("/v1/completions", R"({"model":"soak","prompt":[1,2],"max_tokens":"many"})", "application/json");
      ++tally.malformed;
      if (!r || r->status != 400 || !Json::parse(r->body, nullptr, false).contains("error"))
        tally.fail(cat("client ", t, ": a malformed request got ", r ? cat("status ", r->status) : std::string("no answer")));
      continue;
    }
    bool stream = n % 4 == 3;
    Json q = req;
    q["stream"] = stream;
    auto r = c.Post("/v1/completions", q.dump(), "application/json");
    ++tally.requests;
    if (!r || r->status != 200) {
      tally.fail(cat("client ", t, ": request ", n, " got ", r ? cat("status ", r->status, ": ", r->body.substr(0, 200)) : std::string("no answer")));
      continue;
    }
    std::string text;
    if (stream) {
      ++tally.streamed;
      text = streamed_text(r->body);
    } else {
      Json a = Json::parse(r->body, nullptr, false);
      if (!a.is_object() || !a.contains("choices")) {
        tally.fail(cat("client ", t, ": an answer that is not a completion: ", r->body.substr(0, 200)));
        continue;
      }
      text = a["choices"][0].value("text", "");
    }
    if (first.empty()) first = text;
    else if (text != first) ++tally.differing;
  }
}

}  // namespace

int bench_serve_soak(Args& args) {
  double seconds = args.float_or("seconds", 60);
  int clients = static_cast<int>(args.int_or("clients", 8));
  double max_growth = args.float_or("max-growth", 0.01);
  std::string device = args.value_or("device", flags().RLX_DEVICE);
  bool json = args.flag("json");
  args.finish();
  if (seconds <= 0 || clients < 1) throw Error(ErrorKind::invalid_argument, "--seconds must be positive and --clients at least 1");
  models::LlamaModel model;
  model.spec = soak_spec();
  model.weights = models::random_llama_weights(model.spec, 11, DType::f32);
  models::SlotRunnerOptions ro;
  ro.device = device;
  ro.slots = 4;
  ro.capacity = 128;
  serve::Engine engine(model, ro);
  serve::ServerOptions so;
  so.port = 0;
  so.model_name = "soak";
  serve::Server server(so, &model, &engine, nullptr);
  int port = server.start();
  std::atomic<bool> stop{false};
  Tally tally;
  std::vector<std::thread> threads;
  for (int t = 0; t < clients; ++t) threads.emplace_back(client_loop, port, t, std::cref(stop), std::ref(tally));
  RssWatch rss;
  if (!json) std::printf("serve-soak: Qwen3 architecture (2 layers, random weights), %d clients over loopback, %.0f s on %s\n", clients, seconds, device.c_str());
  rss.run(seconds);
  stop = true;
  for (auto& th : threads) th.join();
  server.stop();
  const double growth = rss.growth();
  bool ok = tally.failed == 0 && tally.differing == 0 && tally.requests > 0 && growth <= max_growth;
  if (json)
    std::printf("{\"workload\":\"serve-soak\",\"device\":%s,\"clients\":%d,\"seconds\":%s,\"requests\":%lld,\"streamed\":%lld,\"malformed\":%lld,\"differing\":%lld,"
                "\"failed\":%lld,\"rss_warm\":%zu,\"rss_peak_after\":%zu,\"growth\":%s,\"ok\":%s,\"rss_samples\":[%s]}\n",
                json_quote(device).c_str(), clients, format_double(seconds).c_str(), static_cast<long long>(tally.requests.load()),
                static_cast<long long>(tally.streamed.load()), static_cast<long long>(tally.malformed.load()), static_cast<long long>(tally.differing.load()),
                static_cast<long long>(tally.failed.load()), rss.warm, rss.peak_after, format_double(growth).c_str(), ok ? "true" : "false", join(rss.samples, ",").c_str());
  else {
    std::printf("%lld completions (%lld streamed) and %lld malformed requests; %lld answers differing from their client's first, %lld failed; "
                "RSS %.1f MiB when warm, peak after %.1f MiB (%+.2f %%, limit %.1f %%): %s\n",
                static_cast<long long>(tally.requests.load()), static_cast<long long>(tally.streamed.load()), static_cast<long long>(tally.malformed.load()),
                static_cast<long long>(tally.differing.load()), static_cast<long long>(tally.failed.load()), rss.warm / 1048576.0, rss.peak_after / 1048576.0,
                growth * 100, max_growth * 100, ok ? "ok" : "FAILED");
    if (!tally.first_failure.empty()) std::printf("first failure: %s\n", tally.first_failure.c_str());
  }
  return ok ? 0 : 1;
}

}  // namespace rlx::cli
