#include "models/sentence_layout.h"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "formats/json_util.h"
#include "formats/mapped_file.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::models {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
constexpr size_t kMaxJsonBytes = 1u << 20;

struct ModeKey {
  const char* key;   // 1_Pooling/config.json flag
  const char* name;  // "pooling_mode" value
  PoolingMode mode;
};
const ModeKey kModes[] = {
    {"pooling_mode_cls_token", "cls", PoolingMode::cls},
    {"pooling_mode_max_tokens", "max", PoolingMode::max},
    {"pooling_mode_mean_tokens", "mean", PoolingMode::mean},
    {"pooling_mode_mean_sqrt_len_tokens", "mean_sqrt_len_tokens", PoolingMode::mean_sqrt_len},
    {"pooling_mode_weightedmean_tokens", "weightedmean", PoolingMode::weighted_mean},
    {"pooling_mode_lasttoken", "lasttoken", PoolingMode::last_token},
};

json read_json(const std::string& path) {
  return formats::parse_json_checked(formats::read_text_file(path, kMaxJsonBytes), path, kMaxJsonBytes, 16);
}

// "sentence_transformers.models.Pooling" → "Pooling"
std::string module_kind(const std::string& type) {
  size_t dot = type.rfind('.');
  return dot == std::string::npos ? type : type.substr(dot + 1);
}

// A module path must stay inside the model directory.
std::string module_dir(const std::string& dir, const std::string& path, const std::string& source) {
  fs::path p(path);
  if (p.is_absolute() || path.find("..") != std::string::npos)
    throw Error(ErrorKind::format, cat(source, ": module path '", path, "' must be a subdirectory of the model directory"));
  return path.empty() ? dir : (fs::path(dir) / p).string();
}

void read_sentence_bert_config(const std::string& dir, SentenceLayout& layout) {
  std::string path = (fs::path(dir) / "sentence_bert_config.json").string();
  if (!fs::exists(path)) return;
  json j = read_json(path);
  if (!j.is_object()) throw Error(ErrorKind::format, cat(path, ": must be a JSON object"));
  if (auto it = j.find("max_seq_length"); it != j.end() && !it->is_null()) {
    if (!it->is_number_integer() || it->get<int64_t>() <= 0)
      throw Error(ErrorKind::format, cat(path, ": \"max_seq_length\" must be a positive integer, found ", it->dump()));
    layout.max_seq_length = it->get<int64_t>();
  }
  // sentence-transformers lowercases the raw text itself in this case; RLX does not yet.
  if (auto it = j.find("do_lower_case"); it != j.end() && it->is_boolean() && it->get<bool>())
    throw Error(ErrorKind::unsupported, cat(path, ": \"do_lower_case\": true is not supported yet"));
}

}  // namespace

const char* pooling_mode_name(PoolingMode mode) {
  for (const auto& m : kModes)
    if (m.mode == mode) return m.name;
  return "?";
}

PoolingSpec parse_pooling_config(const std::string& text, const std::string& source) {
  json j = formats::parse_json_checked(text, source, kMaxJsonBytes, 16);
  if (!j.is_object()) throw Error(ErrorKind::format, cat(source, ": must be a JSON object"));
  PoolingSpec p;
  p.modes.clear();
  p.normalize = false;  // only the Normalize module turns it on
  if (auto it = j.find("pooling_mode"); it != j.end() && !it->is_null()) {
    if (!it->is_string()) throw Error(ErrorKind::format, cat(source, ": \"pooling_mode\" must be a string"));
    std::string name = it->get<std::string>();
    for (const auto& m : kModes)
      if (name == m.name || (name == "mean_tokens" && m.mode == PoolingMode::mean) ||
          (name == "cls_token" && m.mode == PoolingMode::cls))
        p.modes.push_back(m.mode);
    if (p.modes.empty()) throw Error(ErrorKind::format, cat(source, ": unknown \"pooling_mode\" '", name, "'"));
  } else {
    for (const auto& m : kModes) {
      auto it = j.find(m.key);
      if (it == j.end() || it->is_null()) continue;
      if (!it->is_boolean()) throw Error(ErrorKind::format, cat(source, ": \"", m.key, "\" must be true or false"));
      if (it->get<bool>()) p.modes.push_back(m.mode);
    }
    if (p.modes.empty()) throw Error(ErrorKind::format, cat(source, ": no pooling_mode_* flag is true"));
  }
  if (auto it = j.find("word_embedding_dimension"); it != j.end() && !it->is_null()) {
    if (!it->is_number_integer() || it->get<int64_t>() <= 0)
      throw Error(ErrorKind::format, cat(source, ": \"word_embedding_dimension\" must be a positive integer"));
    p.dimension = it->get<int64_t>();
  }
  return p;
}

SentenceLayout read_sentence_layout(const std::string& dir) {
  SentenceLayout layout;
  layout.transformer_dir = dir;
  std::string modules_path = (fs::path(dir) / "modules.json").string();
  if (!fs::exists(modules_path)) {
    layout.defaulted = true;
    layout.description = "no modules.json (a plain Hugging Face directory): mean pooling + L2 normalize by default";
    read_sentence_bert_config(dir, layout);
    return layout;
  }
  json modules = read_json(modules_path);
  if (!modules.is_array()) throw Error(ErrorKind::format, cat(modules_path, ": must be a list of modules"));
  bool have_transformer = false, have_pooling = false, normalize = false;
  std::vector<std::string> kinds;
  for (size_t i = 0; i < modules.size(); ++i) {
    const json& m = modules[i];
    std::string where = cat(modules_path, " module ", i);
    if (!m.is_object() || !m.contains("type") || !m["type"].is_string())
      throw Error(ErrorKind::format, cat(where, ": needs a string \"type\""));
    std::string path = m.contains("path") && m["path"].is_string() ? m["path"].get<std::string>() : "";
    std::string kind = module_kind(m["type"].get<std::string>());
    kinds.push_back(kind);
    if (kind == "Transformer" && !have_transformer && i == 0) {
      layout.transformer_dir = module_dir(dir, path, where);
      have_transformer = true;
    } else if (kind == "Pooling" && have_transformer && !have_pooling) {
      std::string cfg = (fs::path(module_dir(dir, path, where)) / "config.json").string();
      layout.pooling = parse_pooling_config(formats::read_text_file(cfg, kMaxJsonBytes), cfg);
      have_pooling = true;
    } else if (kind == "Normalize" && have_pooling && !normalize) {
      normalize = true;
    } else {
      throw Error(ErrorKind::unsupported,
                  cat(where, ": module '", m["type"].get<std::string>(), "' at this position is not supported ",
                      "(RLX runs Transformer, then Pooling, then optionally Normalize)"));
    }
  }
  if (!have_pooling) throw Error(ErrorKind::unsupported, cat(modules_path, ": no Pooling module; RLX needs one to produce sentence vectors"));
  layout.pooling.normalize = normalize;
  read_sentence_bert_config(layout.transformer_dir, layout);
  layout.description = cat("modules.json: ", join(kinds, " → "), " (",
                           join(layout.pooling.modes, "+", [](PoolingMode m) { return std::string(pooling_mode_name(m)); }),
                           " pooling", normalize ? ", L2 normalized" : "", ")");
  return layout;
}

}  // namespace rlx::models
