#include "models/qwen3_model.h"

#include "text/chat_template.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <filesystem>

#include "formats/gguf.h"
#include "formats/hf_config.h"
#include "formats/hf_dir.h"
#include "formats/json_util.h"
#include "formats/mapped_file.h"
#include "formats/safetensors.h"
#include "models/gguf_tokenizer_metadata.h"
#include "models/qwen3_weights.h"
#include "rlx/error.h"
#include "text/tokenizer_loader.h"
#include "util/strings.h"

namespace rlx::models {

namespace {

namespace fs = std::filesystem;
using formats::GgufFile;
using formats::GgufValue;
using json = nlohmann::json;

void add_ids(std::vector<int64_t>& ids, const std::vector<int64_t>& more) {
  for (int64_t id : more)
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
}

// generation_config.json: eos_token_id (one or several) and the sampling defaults.
void read_generation_config(const std::string& path, LlamaModel& m) {
  json j = formats::parse_json_checked(formats::read_text_file(path, 1u << 20), path, 1u << 20, 16);
  if (!j.is_object()) throw Error(ErrorKind::format, cat(path, ": expected a JSON object"));
  auto number = [&](const char* key) -> std::optional<double> {
    if (!j.contains(key) || j[key].is_null()) return std::nullopt;
    if (!j[key].is_number()) throw Error(ErrorKind::format, cat(path, ": \"", key, "\" must be a number, found ", j[key].dump()));
    return j[key].get<double>();
  };
  if (j.contains("eos_token_id")) {
    const json& e = j["eos_token_id"];
    std::vector<int64_t> ids;
    if (e.is_number_integer()) ids.push_back(e.get<int64_t>());
    else if (e.is_array())
      for (const auto& x : e) {
        if (!x.is_number_integer()) throw Error(ErrorKind::format, cat(path, ": \"eos_token_id\" must hold integers, found ", x.dump()));
        ids.push_back(x.get<int64_t>());
      }
    else if (!e.is_null()) throw Error(ErrorKind::format, cat(path, ": \"eos_token_id\" must be an integer or a list, found ", e.dump()));
    add_ids(m.eos_token_ids, ids);
  }
  if (j.contains("do_sample") && j["do_sample"].is_boolean()) m.generation.do_sample = j["do_sample"].get<bool>();
  m.generation.temperature = number("temperature");
  m.generation.top_p = number("top_p");
  m.generation.min_p = number("min_p");
  m.generation.repetition_penalty = number("repetition_penalty");
  if (auto k = number("top_k")) m.generation.top_k = static_cast<int64_t>(*k);
}

std::string tokenizer_config_template(const std::string& path) {
  json j = formats::parse_json_checked(formats::read_text_file(path, 64u << 20), path, 64u << 20, 64);
  if (!j.is_object() || !j.contains("chat_template")) return "";
  const json& t = j["chat_template"];
  if (t.is_string()) return t.get<std::string>();
  if (t.is_array())  // [{"name": "default", "template": …}, {"name": "tool_use", …}]: the default one
    for (const json& e : t)
      if (e.is_object() && e.value("name", "") == "default" && e.contains("template") && e["template"].is_string()) return e["template"].get<std::string>();
  return "";
}

LlamaModel load_gguf(const std::string& path, const LlamaLoadOptions& o) {
  auto file = std::make_shared<GgufFile>(formats::read_gguf(path));
  LlamaModel m;
  m.path = path;
  m.format = "gguf";
  m.spec = llama_spec_from_gguf(*file);
  m.weights = load_llama_weights(formats::GgufSource(*file), m.spec, "as-stored");
  m.eos_token_ids = m.spec.eos_token_ids;
  if (o.tokenizer) m.tokenizer = gguf_tokenizer(*file);
  if (const GgufValue* t = file->find("tokenizer.chat_template"); t && t->as_string()) m.chat_template = *t->as_string();
  return m;
}

LlamaModel load_directory(const std::string& path, const LlamaLoadOptions& o) {
  formats::HfDirectory dir = formats::scan_hf_directory(path);
  if (!dir.config) {
    if (dir.gguf.size() == 1) return load_gguf(dir.gguf[0], o);
    throw Error(ErrorKind::io, cat(path, ": no config.json (expected a Hugging Face model directory or a .gguf file)"));
  }
  LlamaModel m;
  m.path = path;
  m.format = "safetensors";
  m.spec = llama_spec_from_hf(formats::read_hf_config(*dir.config), *dir.config);
  formats::SafetensorsModel st = formats::open_safetensors_model(path);
  m.weights = load_llama_weights(formats::SafetensorsSource(st), m.spec, o.precision.compute);
  m.eos_token_ids = m.spec.eos_token_ids;
  if (dir.generation_config) read_generation_config(*dir.generation_config, m);
  if (o.tokenizer && dir.tokenizer.tokenizer_json) {
    auto tok = std::make_shared<text::Tokenizer>(text::load_tokenizer(path));
    m.tokenizer = tok;
    if (tok->special_ids().eos) add_ids(m.eos_token_ids, {*tok->special_ids().eos});
  }
  if (dir.tokenizer.tokenizer_config) m.chat_template = tokenizer_config_template(*dir.tokenizer.tokenizer_config);
  return m;
}

}  // namespace

std::shared_ptr<text::Tokenizer> load_gguf_tokenizer(const std::string& path) {
  GgufFile f = formats::read_gguf(path);
  auto tok = gguf_tokenizer(f);
  if (!tok) throw Error(ErrorKind::format, cat(path, ": no tokenizer in this GGUF file (tokenizer.ggml.model is missing)"));
  return tok;
}

int64_t LlamaModel::weight_bytes() const {
  int64_t n = 0;
  for (const auto& [name, w] : weights)
    if (!(spec.tie_word_embeddings && name == "lm_head.weight")) n += w.bytes();
  return n;
}

LlamaModel load_llama_model(const std::string& path, const LlamaLoadOptions& o) {
  if (fs::is_directory(path)) return load_directory(path, o);
  if (!fs::exists(path)) throw Error(ErrorKind::io, cat(path, ": no such file or directory"));
  if (fs::path(path).extension() == ".gguf") return load_gguf(path, o);
  if (fs::path(path).extension() == ".safetensors") return load_directory(fs::path(path).parent_path().string(), o);
  throw Error(ErrorKind::invalid_argument, cat(path, ": expected a model directory or a .gguf file"));
}

namespace {

// Without a template: the two formats the tokenizer's special tokens identify.
std::string builtin_chat_format(const LlamaModel& m, const ChatRequest& r) {
  auto text = [](const nlohmann::ordered_json& msg, const char* key) {
    const auto it = msg.find(key);
    return it != msg.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  bool thinking = !(r.kwargs.contains("enable_thinking") && r.kwargs["enable_thinking"].is_boolean() && !r.kwargs["enable_thinking"].get<bool>());
  std::string s;
  if (m.tokenizer->token_to_id("<|im_start|>")) {
    for (const auto& msg : r.messages) s += "<|im_start|>" + text(msg, "role") + "\n" + text(msg, "content") + "<|im_end|>\n";
    if (!r.add_generation_prompt) return s;
    s += "<|im_start|>assistant\n";
    if (!thinking) s += "<think>\n\n</think>\n\n";
    return s;
  }
  if (m.tokenizer->token_to_id("<|start_header_id|>")) {
    s = "<|begin_of_text|>";
    for (const auto& msg : r.messages) s += "<|start_header_id|>" + text(msg, "role") + "<|end_header_id|>\n\n" + text(msg, "content") + "<|eot_id|>";
    return r.add_generation_prompt ? s + "<|start_header_id|>assistant<|end_header_id|>\n\n" : s;
  }
  throw Error(ErrorKind::unsupported, "this model ships no chat template, and its tokenizer has neither ChatML's (<|im_start|>) nor Llama 3's "
                                      "(<|start_header_id|>) tokens: format the prompt yourself (/v1/completions, rlx generate without --chat)");
}

}  // namespace

std::string read_chat_template(const std::string& path) {
  std::string src = formats::read_text_file(path, 4u << 20);
  try {
    text::ChatTemplate check(src);
  } catch (const Error& e) {
    throw Error(e.kind(), cat(path, ": ", e.what()));
  }
  return src;
}

std::string chat_prompt(const LlamaModel& m, const ChatRequest& r) {
  if (!m.tokenizer) throw Error(ErrorKind::unsupported, "a chat prompt needs the model's tokenizer; this model ships none");
  if (!r.messages.is_array()) throw Error(ErrorKind::invalid_argument, "chat messages must be a list");
  if (m.chat_template.empty()) return builtin_chat_format(m, r);
  nlohmann::ordered_json ctx = nlohmann::ordered_json::object();
  ctx["messages"] = r.messages;
  if (!r.tools.is_null()) ctx["tools"] = r.tools;
  ctx["add_generation_prompt"] = r.add_generation_prompt;
  const text::SpecialTokenIds& sp = m.tokenizer->special_ids();
  for (auto [name, id] : {std::pair{"bos_token", sp.bos}, {"eos_token", sp.eos}, {"pad_token", sp.pad}, {"unk_token", sp.unk}})
    if (id)
      if (auto t = m.tokenizer->id_to_token(*id)) ctx[name] = *t;
  for (const auto& [k, v] : r.kwargs.items()) ctx[k] = v;
  return text::ChatTemplate(m.chat_template).render(ctx);
}

std::string chat_prompt(const LlamaModel& m, const std::vector<ChatMessage>& messages, bool thinking) {
  ChatRequest r;
  for (const auto& msg : messages) r.messages.push_back({{"role", msg.role}, {"content", msg.content}});
  r.kwargs["enable_thinking"] = thinking;
  return chat_prompt(m, r);
}

std::string chat_prompt(const LlamaModel& m, const std::string& user, bool thinking) { return chat_prompt(m, std::vector<ChatMessage>{{"user", user}}, thinking); }


}  // namespace rlx::models
