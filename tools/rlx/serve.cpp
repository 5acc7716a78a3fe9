// rlx serve: the OpenAI-compatible HTTP server — completions and chat with a Qwen3 / llama-family
// model under continuous batching (--parallel sequences decode together), embeddings with a BERT
// directory. Runs until SIGINT or SIGTERM, then stops accepting, cancels what is in flight and exits.
#include <csignal>
#include <cstdio>
#include <memory>
#include <optional>
#include <pthread.h>

#include "commands.h"
#include "models/qwen3_model.h"
#include "models/sentence_embedder.h"
#include "rlx/error.h"
#include "serve/engine.h"
#include "serve/server.h"
#include "util/flags.h"
#include "util/strings.h"

namespace rlx::cli {

namespace {

// The id clients name a model by: its file or directory name without .gguf.
std::string default_name(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  size_t slash = path.rfind('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  if (base.ends_with(".gguf")) base.resize(base.size() - 5);
  return base;
}

}  // namespace

int cmd_serve(Args& args) {
  auto model_path = args.value("model");
  auto embedding_path = args.value("embedding-model");
  serve::ServerOptions so;
  so.host = args.value_or("host", "127.0.0.1");
  so.port = static_cast<int>(args.int_or("port", 8080));
  so.api_key = args.value_or("api-key", "");
  auto model_name = args.value("model-name");
  auto embedding_name = args.value("embedding-model-name");
  int64_t parallel = args.int_or("parallel", 4);
  int64_t ctx = args.int_or("ctx", 1024);
  so.max_body_bytes = static_cast<size_t>(args.int_or("max-body", 4 << 20));
  std::string device = args.value_or("device", flags().RLX_DEVICE);
  std::string precision = args.value_or("precision", "f32");
  // 8-bit activations for every quantized type, Q8_0 included, as llama.cpp: batched decode and
  // prefill then take the integer kernels (on cpu, the repacked Q8_0 of quant_q8_r16.h).
  std::string activations = args.value_or("activations", "q8");
  auto threads = args.value("threads");
  auto chat_template = args.value("chat-template");
  args.finish();
  if (chat_template && !model_path) throw Error(ErrorKind::invalid_argument, "--chat-template goes with --model");
  if (!model_path && !embedding_path) throw Error(ErrorKind::invalid_argument, "give --model DIR|FILE.gguf (completions and chat) and/or --embedding-model DIR");
  if (parallel < 1 || parallel > 256) throw Error(ErrorKind::invalid_argument, cat("--parallel must be in [1, 256], got ", parallel));
  if (ctx < 2) throw Error(ErrorKind::invalid_argument, cat("--ctx must be at least 2, got ", ctx));
  if (so.port < 0 || so.port > 65535) throw Error(ErrorKind::invalid_argument, cat("--port must be in [0, 65535], got ", so.port));
  if (so.max_body_bytes < 1024) throw Error(ErrorKind::invalid_argument, "--max-body must be at least 1024 bytes");
  if (threads) set_flag("RLX_NUM_THREADS", *threads);

  // SIGINT/SIGTERM go to a sigwait below, not to whichever thread they hit: blocked here, before
  // any thread exists, so every thread inherits the mask.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  PrecisionPolicy policy(precision);
  policy.quantized_activations = activations;
  std::optional<models::LlamaModel> model;
  std::unique_ptr<serve::Engine> engine;
  if (model_path) {
    models::LlamaLoadOptions lo;
    lo.precision = policy;
    model.emplace(models::load_llama_model(*model_path, lo));
    if (chat_template) model->chat_template = models::read_chat_template(*chat_template);
    models::SlotRunnerOptions ro;
    ro.device = device;
    ro.precision = policy;
    ro.slots = parallel;
    ro.capacity = std::min<int64_t>(ctx, model->spec.max_position_embeddings > 0 ? model->spec.max_position_embeddings : ctx);
    engine = std::make_unique<serve::Engine>(*model, ro);
    so.model_name = model_name.value_or(default_name(*model_path));
  }
  std::optional<models::SentenceEmbedder> embedder;
  if (embedding_path) {
    SessionOptions eo;
    eo.precision = precision;
    embedder.emplace(models::SentenceEmbedder::open(*embedding_path, device, eo));
    so.embedding_model_name = embedding_name.value_or(default_name(*embedding_path));
  }
  serve::Server server(so, model ? &*model : nullptr, engine.get(), embedder ? &*embedder : nullptr);
  int port = server.start();
  std::fprintf(stderr, "rlx serve: listening on http://%s:%d/v1", so.host.c_str(), port);
  if (model) std::fprintf(stderr, " — '%s' (%lld sequences × %lld positions on %s)", so.model_name.c_str(), static_cast<long long>(parallel),
                          static_cast<long long>(engine->capacity()), device.c_str());
  if (embedder) std::fprintf(stderr, " — embeddings '%s'", so.embedding_model_name.c_str());
  std::fprintf(stderr, "%s\n", so.api_key.empty() ? "" : " (API key required)");
  int sig = 0;
  sigwait(&stop_signals, &sig);
  std::fprintf(stderr, "rlx serve: %s, stopping\n", sig == SIGINT ? "interrupted" : "terminated");
  server.stop();
  return 0;
}

}  // namespace rlx::cli
