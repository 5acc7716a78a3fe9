// `rlx serve`: an OpenAI-compatible HTTP server (cpp-httplib) over the continuous-batching
// engine — /v1/models, /v1/completions, /v1/chat/completions (server-sent events when streamed),
// /v1/embeddings, /health and /metrics (Prometheus). Every error is a JSON body with the status
// it deserves (400 malformed, 401 without the API key, 404 unknown model or route, 413 too
// large, 503 shutting down); a client that goes away frees its slot before the next pass.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "models/qwen3_model.h"
#include "models/sentence_embedder.h"
#include "serve/engine.h"

namespace rlx::serve {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                     // 0: any free port (port() tells which)
  std::string api_key;                 // empty: no authentication
  std::string model_name = "rlx";      // the id clients name in "model"
  std::string embedding_model_name;    // likewise for /v1/embeddings
  size_t max_body_bytes = 4u << 20;
  int threads = 32;                    // HTTP worker threads (a streamed request holds one)
};

class Server {
 public:
  // `model` and `engine` serve completions (both null: embeddings only); `embedder` serves
  // /v1/embeddings (null: none). All must outlive the server.
  Server(ServerOptions options, const models::LlamaModel* model, Engine* engine, const models::SentenceEmbedder* embedder);
  ~Server();
  // Binds (throws rlx::Error(io) when it cannot) and serves until stop(); blocks.
  void run();
  // Binds and serves on a thread of its own; returns the port.
  int start();
  void stop();
  int port() const { return port_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
};

}  // namespace rlx::serve
