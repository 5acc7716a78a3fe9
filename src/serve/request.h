// The OpenAI request bodies `rlx serve` accepts, parsed and checked apart from HTTP and the
// engine: every mistake becomes an HttpError that names its field, so the server answers 4xx
// and never runs what it cannot serve. Kept pure so that a fuzz target can drive it whole.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/qwen3_model.h"
#include "serve/engine.h"

namespace rlx::serve {

// An error that becomes an OpenAI-style JSON body with its status.
struct HttpError {
  int status;
  std::string message;
  std::string param;
  std::string code;
};

// JSON as sent to a client: bytes that are not UTF-8 (a client's malformed string echoed in an
// error, one byte of a multi-byte character as a logprob's token) become U+FFFD instead of
// making the serializer throw.
std::string wire(const nlohmann::json& j);

[[noreturn]] void bad(const std::string& message, const std::string& param = "", int status = 400, const std::string& code = "");
std::string error_body(const HttpError& e);

// Typed fields of a request body, each mistake named by its field.
struct Body {
  nlohmann::json j;
  std::string text;  // as received: the chat template sees the client's key order
  const nlohmann::json* find(const char* key) const;
  std::string str(const char* key, const std::string& def, bool required = false) const;
  double number(const char* key, double def, double lo, double hi) const;
  int64_t integer(const char* key, int64_t def, int64_t lo, int64_t hi) const;
  bool flag(const char* key, bool def) const;
};

// A JSON object, or HttpError 400.
Body parse_body(const std::string& text);

// "model" must name the served one (404 otherwise; `served` empty: none of this kind).
void check_model(const Body& b, const std::string& served, const char* what);

// A completion: the engine request (callbacks unset) and how to answer.
struct CompletionPlan {
  GenerationRequest gen;
  std::vector<std::string> stops;
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage: a last chunk with the usage
  bool return_tokens = false;  // RLX's extension: each choice (chunk) lists its token ids
  int logprobs = -1;           // -1: none
};

// /v1/completions (chat = false) or /v1/chat/completions for `model`, whose sequences hold
// `capacity` positions (prompt and answer): the prompt tokenized (or its ids checked), the chat
// rendered through the model's template, sampling and budget fields range-checked.
CompletionPlan parse_completion(const Body& b, bool chat, const models::LlamaModel& model, int64_t capacity);

// /v1/embeddings: texts, or token-id rows checked against the vocabulary and the model's length.
struct EmbeddingRequest {
  std::vector<std::string> texts;
  std::vector<std::vector<int32_t>> ids;
  bool base64 = false;
};
EmbeddingRequest parse_embeddings(const Body& b, int64_t vocab_size, int64_t max_tokens);

}  // namespace rlx::serve
