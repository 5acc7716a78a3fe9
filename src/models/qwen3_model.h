// A llama-family model ready to run: spec, weights, tokenizer and generation defaults, read
// from a Hugging Face directory (config.json, generation_config.json, safetensors,
// tokenizer.json) or one GGUF file (metadata, tensors, tokenizer.ggml.*).
#pragma once
#include <nlohmann/json.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/qwen3.h"
#include "rlx/session.h"
#include "text/tokenizer.h"

namespace rlx::models {

// generation_config.json (or GGUF) defaults; unset fields fall back to greedy decoding.
struct GenerationDefaults {
  bool do_sample = false;
  std::optional<double> temperature, top_p, min_p, repetition_penalty;
  std::optional<int64_t> top_k;
};

struct LlamaModel {
  std::string path;
  std::string format;  // "safetensors" or "gguf"
  LlamaSpec spec;
  LlamaWeights weights;
  std::shared_ptr<const text::Tokenizer> tokenizer;  // null when the model ships none
  GenerationDefaults generation;
  std::vector<int64_t> eos_token_ids;  // config.json, generation_config.json and GGUF ids, merged
  std::string chat_template;           // the Jinja text when the model ships one

  int64_t weight_bytes() const;
};

struct LlamaLoadOptions {
  // The precision policy's compute precision is the matrices' (a llama graph multiplies its
  // weights as stored): Hugging Face weights load as f32 or bf16; GGUF tensors stay as stored.
  PrecisionPolicy precision;
  bool tokenizer = true;           // load the tokenizer too
};

// `path`: a model directory, a .safetensors file inside one, or a .gguf file. Throws rlx::Error
// naming the file and field that is missing or malformed.
LlamaModel load_llama_model(const std::string& path, const LlamaLoadOptions& options = {});

// The tokenizer a GGUF file carries (tokenizer.ggml.*), without its weights. Throws
// rlx::Error(format) when it has none, (unsupported) naming what RLX reads when its tokenizer
// model or pre-tokenizer is one RLX does not.
std::shared_ptr<text::Tokenizer> load_gguf_tokenizer(const std::string& path);

// A conversation rendered as the model's prompt, ready for the assistant's answer. With a
// chat template (tokenizer_config.json's `chat_template` — the "default" one of a list — or
// GGUF's `tokenizer.chat_template`), it is rendered as transformers' apply_chat_template does:
// messages, tools, add_generation_prompt, bos/eos/pad/unk token strings and `kwargs` (e.g.
// enable_thinking) as variables. A model without one gets ChatML (Qwen: <|im_start|>) or
// Llama 3 (<|start_header_id|>) when its tokenizer has those tokens; anything else throws
// rlx::Error(unsupported). A template's raise_exception or error throws rlx::Error.
struct ChatMessage {
  std::string role;  // system, user, assistant, tool
  std::string content;
};
struct ChatRequest {
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();  // [{role, content, …}]
  nlohmann::ordered_json tools;                                        // null: none
  nlohmann::ordered_json kwargs = nlohmann::ordered_json::object();    // extra template variables
  bool add_generation_prompt = true;
};
std::string chat_prompt(const LlamaModel& model, const ChatRequest& request);
// A chat template from a file (--chat-template: one to use instead of the model's), parsed once
// to report a syntax error with its line now rather than at the first request.
std::string read_chat_template(const std::string& path);
// thinking false: enable_thinking=false (Qwen3's empty <think></think> block).
std::string chat_prompt(const LlamaModel& model, const std::vector<ChatMessage>& messages, bool thinking);
std::string chat_prompt(const LlamaModel& model, const std::string& user, bool thinking);


}  // namespace rlx::models
