#include "serve/request.h"

#include <algorithm>
#include <climits>

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::serve {

using json = nlohmann::json;

std::string wire(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

void bad(const std::string& message, const std::string& param, int status, const std::string& code) { throw HttpError{status, message, param, code}; }

std::string error_body(const HttpError& e) {
  json err = {{"message", e.message}, {"type", e.status == 401 ? "authentication_error" : e.status >= 500 ? "server_error" : "invalid_request_error"},
              {"param", e.param.empty() ? json(nullptr) : json(e.param)}, {"code", e.code.empty() ? json(nullptr) : json(e.code)}};
  return wire(json{{"error", err}});
}

const json* Body::find(const char* key) const {
  auto it = j.find(key);
  return it == j.end() || it->is_null() ? nullptr : &*it;
}

std::string Body::str(const char* key, const std::string& def, bool required) const {
  const json* v = find(key);
  if (!v) {
    if (required) bad(cat("'", key, "' is required"), key);
    return def;
  }
  if (!v->is_string()) bad(cat("'", key, "' must be a string"), key);
  return v->get<std::string>();
}

double Body::number(const char* key, double def, double lo, double hi) const {
  const json* v = find(key);
  if (!v) return def;
  if (!v->is_number()) bad(cat("'", key, "' must be a number"), key);
  double x = v->get<double>();
  if (!(x >= lo && x <= hi)) bad(cat("'", key, "' must be between ", lo, " and ", hi, ", got ", x), key);
  return x;
}

int64_t Body::integer(const char* key, int64_t def, int64_t lo, int64_t hi) const {
  const json* v = find(key);
  if (!v) return def;
  if (!v->is_number_integer()) bad(cat("'", key, "' must be an integer"), key);
  // an unsigned value past INT64_MAX would wrap to a negative one
  if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
    bad(cat("'", key, "' must be between ", lo, " and ", hi, ", got ", v->get<uint64_t>()), key);
  int64_t x = v->get<int64_t>();
  if (x < lo || x > hi) bad(cat("'", key, "' must be between ", lo, " and ", hi, ", got ", x), key);
  return x;
}

bool Body::flag(const char* key, bool def) const {
  const json* v = find(key);
  if (!v) return def;
  if (!v->is_boolean()) bad(cat("'", key, "' must be true or false"), key);
  return v->get<bool>();
}

Body parse_body(const std::string& text) {
  Body b;
  try {
    b.j = json::parse(text);
  } catch (const json::exception& e) {  // parse errors and out-of-range numbers (1e999999) alike
    bad(cat("the body is not valid JSON: ", e.what()));
  }
  if (!b.j.is_object()) bad("the body must be a JSON object");
  b.text = text;
  return b;
}

void check_model(const Body& b, const std::string& served, const char* what) {
  std::string m = b.str("model", "", true);
  if (served.empty()) bad(cat("this server has no ", what, " model"), "model", 404, "model_not_found");
  if (m != served) bad(cat("model '", m, "' is not served here (", what, " model: '", served, "')"), "model", 404, "model_not_found");
}

namespace {

// A token id from JSON: an integer in [0, vocab), or HttpError naming `param`.
int32_t token_id(const json& x, int64_t vocab, const char* param, const char* what) {
  if (!x.is_number_integer()) bad(cat(what, " must be integers only"), param);
  if (x.is_number_unsigned() ? x.get<uint64_t>() >= static_cast<uint64_t>(vocab) : (x.get<int64_t>() < 0 || x.get<int64_t>() >= vocab))
    bad(cat("token id ", wire(x), " is outside the vocabulary [0, ", vocab, ")"), param);
  return static_cast<int32_t>(x.get<int64_t>());
}

std::vector<int32_t> tokenize_prompt(const json& p, const models::LlamaModel& model) {
  if (p.is_string()) {
    if (!model.tokenizer) bad("this model has no tokenizer; send token ids", "prompt");
    return model.tokenizer->encode(p.get<std::string>()).ids;
  }
  if (p.is_array() && p.size() == 1 && p[0].is_string()) return tokenize_prompt(p[0], model);
  if (p.is_array() && !p.empty() && p[0].is_number_integer()) {
    std::vector<int32_t> ids;
    for (const auto& x : p) ids.push_back(token_id(x, model.spec.vocab_size, "prompt", "a token-id prompt"));
    return ids;
  }
  if (p.is_array() && p.size() > 1) bad("one prompt per request (n = 1)", "prompt");
  bad("'prompt' must be a string or an array of token ids", "prompt");
}

// The conversation rendered by the model's chat template and tokenized.
std::vector<int32_t> chat_tokens(const Body& b, const models::LlamaModel& model) {
  const json* msgs = b.find("messages");
  if (!msgs || !msgs->is_array() || msgs->empty()) bad("'messages' must be a non-empty array", "messages");
  // The template sees the request's messages and tools in the order the client wrote their
  // keys (tojson of a tool schema must match what transformers renders).
  nlohmann::ordered_json raw = nlohmann::ordered_json::parse(b.text, nullptr, false);
  models::ChatRequest chat_req;
  for (const auto& m : raw["messages"]) {
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string()) bad("every message needs a string 'role'", "messages");
    nlohmann::ordered_json msg = m;
    if (m.contains("content") && m["content"].is_array()) {
      std::string content;
      for (const auto& part : m["content"])  // [{"type": "text", "text": …}]
        if (part.is_object() && part.value("type", "") == "text" && part.contains("text") && part["text"].is_string()) content += part["text"].get<std::string>();
        else bad("only text content parts are supported", "messages");
      msg["content"] = content;
    } else if (m.contains("content") && !m["content"].is_string() && !m["content"].is_null()) {
      bad("a message's 'content' must be a string or text parts", "messages");
    }
    chat_req.messages.push_back(std::move(msg));
  }
  if (raw.contains("tools") && !raw["tools"].is_null()) {
    if (!raw["tools"].is_array()) bad("'tools' must be a list", "tools");
    chat_req.tools = raw["tools"];
  }
  if (raw.contains("chat_template_kwargs")) {
    if (!raw["chat_template_kwargs"].is_object()) bad("'chat_template_kwargs' must be an object", "chat_template_kwargs");
    chat_req.kwargs = raw["chat_template_kwargs"];
  }
  if (!model.tokenizer) bad("this model has no tokenizer for chat messages", "messages");
  std::string text;
  try {
    text = models::chat_prompt(model, chat_req);
  } catch (const Error& e) {  // the template refused the conversation (raise_exception) or failed
    bad(cat("the chat template: ", e.what()), "messages");
  }
  return model.tokenizer->encode(text, false).ids;
}

}  // namespace

CompletionPlan parse_completion(const Body& b, bool chat, const models::LlamaModel& model, int64_t capacity) {
  std::vector<int32_t> prompt;
  if (chat) {
    prompt = chat_tokens(b, model);
  } else {
    const json* p = b.find("prompt");
    if (!p) bad("'prompt' is required", "prompt");
    prompt = tokenize_prompt(*p, model);
  }
  if (prompt.empty()) bad("the prompt has no tokens", chat ? "messages" : "prompt");
  CompletionPlan p;
  if (b.integer("n", 1, 1, 1) != 1) bad("only n = 1 is served", "n");
  for (const char* k : {"presence_penalty", "frequency_penalty"})
    if (b.number(k, 0, -2, 2) != 0) bad(cat("'", k, "' is not supported; use repetition_penalty"), k);
  if (b.flag("echo", false)) bad("'echo' is not supported", "echo");
  int64_t room = capacity - static_cast<int64_t>(prompt.size());
  if (room <= 0)
    bad(cat("the prompt has ", prompt.size(), " tokens; this server holds ", capacity, " per sequence (prompt and answer)"), "prompt", 400,
        "context_length_exceeded");
  const char* budget = chat && b.find("max_completion_tokens") ? "max_completion_tokens" : "max_tokens";
  int64_t default_max = chat ? room : std::min<int64_t>(16, room);
  int64_t max_tokens = b.integer(budget, default_max, 0, INT64_MAX);
  if (max_tokens > room)
    bad(cat("'", budget, "' is ", max_tokens, " but only ", room, " positions remain after the prompt's ", prompt.size(), " (the server holds ", capacity,
            ")"),
        budget, 400, "context_length_exceeded");
  p.gen.prompt = std::move(prompt);
  p.gen.max_tokens = max_tokens;
  p.gen.sampling.temperature = b.number("temperature", 1.0, 0, 2);
  p.gen.sampling.top_p = b.number("top_p", 1.0, 1e-9, 1);
  p.gen.sampling.top_k = b.integer("top_k", 0, 0, INT32_MAX);
  p.gen.sampling.min_p = b.number("min_p", 0, 0, 1);
  p.gen.sampling.repetition_penalty = b.number("repetition_penalty", 1.0, 1e-3, 100);
  p.gen.sampling.seed = static_cast<uint64_t>(b.integer("seed", 0, INT64_MIN, INT64_MAX));
  if (!b.flag("ignore_eos", false)) p.gen.eos_token_ids = model.eos_token_ids;  // llama-server's extension
  p.return_tokens = b.flag("return_tokens", false);
  if (const json* s = b.find("stop")) {
    if (s->is_string()) p.stops.push_back(s->get<std::string>());
    else if (s->is_array() && s->size() <= 4) {
      for (const auto& x : *s) {
        if (!x.is_string() || x.get<std::string>().empty()) bad("'stop' must be up to 4 non-empty strings", "stop");
        p.stops.push_back(x.get<std::string>());
      }
    } else bad("'stop' must be a string or up to 4 strings", "stop");
  }
  p.stream = b.flag("stream", false);
  if (const json* so = b.find("stream_options")) {
    if (!so->is_object()) bad("'stream_options' must be an object", "stream_options");
    if (so->contains("include_usage") && !(*so)["include_usage"].is_boolean()) bad("'stream_options.include_usage' must be true or false", "stream_options");
    p.include_usage = so->value("include_usage", false);
  }
  if (chat) {
    if (b.flag("logprobs", false)) p.logprobs = static_cast<int>(b.integer("top_logprobs", 0, 0, 20));
  } else if (b.find("logprobs")) {
    p.logprobs = static_cast<int>(b.integer("logprobs", 0, 0, 5));
  }
  p.gen.top_logprobs = std::max(p.logprobs, 0);
  return p;
}

EmbeddingRequest parse_embeddings(const Body& b, int64_t vocab_size, int64_t max_tokens) {
  EmbeddingRequest r;
  const json* in = b.find("input");
  if (!in) bad("'input' is required", "input");
  std::string format = b.str("encoding_format", "float");
  if (format != "float" && format != "base64") bad("'encoding_format' must be float or base64", "encoding_format");
  r.base64 = format == "base64";
  auto add_ids = [&](const json& arr) {
    if (!arr.is_array()) bad("token-id inputs must be arrays of integers", "input");
    std::vector<int32_t> row;
    for (const auto& x : arr) row.push_back(token_id(x, vocab_size, "input", "token-id inputs"));
    if (row.empty()) bad("an input has no tokens", "input");
    if (static_cast<int64_t>(row.size()) > max_tokens) bad(cat("an input has ", row.size(), " tokens; the model reads at most ", max_tokens), "input");
    r.ids.push_back(std::move(row));
  };
  if (in->is_string()) r.texts.push_back(in->get<std::string>());
  else if (in->is_array() && !in->empty() && (*in)[0].is_string()) {
    for (const auto& x : *in) {
      if (!x.is_string()) bad("'input' must be strings only, or token ids", "input");
      r.texts.push_back(x.get<std::string>());
    }
  } else if (in->is_array() && !in->empty() && (*in)[0].is_number_integer()) add_ids(*in);
  else if (in->is_array() && !in->empty() && (*in)[0].is_array()) for (const auto& a : *in) add_ids(a);
  else bad("'input' must be a string, strings, or token ids", "input");
  if (r.texts.size() + r.ids.size() > 2048) bad("at most 2048 inputs per request", "input");
  return r;
}

}  // namespace rlx::serve
