#include "formats/hf_dir.h"

#include <algorithm>
#include <filesystem>

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::formats {

namespace fs = std::filesystem;

namespace {

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

bool HfTokenizerFiles::any() const {
  return tokenizer_json || tokenizer_config || special_tokens_map || vocab_txt || vocab_json || merges_txt ||
         sentencepiece_model || added_tokens;
}

HfDirectory scan_hf_directory(const std::string& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) throw Error(ErrorKind::io, cat("'", path, "' is not a directory"));
  HfDirectory d;
  d.path = path;
  fs::path dir(path);
  auto found = [&](const char* name) -> std::optional<std::string> {
    fs::path p = dir / name;
    if (fs::is_regular_file(p, ec)) return p.string();
    return std::nullopt;
  };
  d.config = found("config.json");
  d.generation_config = found("generation_config.json");
  d.tokenizer.tokenizer_json = found("tokenizer.json");
  d.tokenizer.tokenizer_config = found("tokenizer_config.json");
  d.tokenizer.special_tokens_map = found("special_tokens_map.json");
  d.tokenizer.vocab_txt = found("vocab.txt");
  d.tokenizer.vocab_json = found("vocab.json");
  d.tokenizer.merges_txt = found("merges.txt");
  d.tokenizer.sentencepiece_model = found("tokenizer.model");
  if (!d.tokenizer.sentencepiece_model) d.tokenizer.sentencepiece_model = found("sentencepiece.bpe.model");
  d.tokenizer.added_tokens = found("added_tokens.json");
  d.sentence_transformers_modules = found("modules.json");
  d.pooling_config = found("1_Pooling/config.json");
  fs::directory_iterator it(dir, ec);
  if (ec) throw Error(ErrorKind::io, cat("cannot list '", path, "': ", ec.message()));
  for (const auto& e : it) {
    if (!e.is_regular_file(ec)) continue;
    std::string name = e.path().filename().string();
    if (ends_with(name, ".safetensors.index.json")) {
      // model.safetensors.index.json wins when several indexes exist.
      if (!d.safetensors_index || name == "model.safetensors.index.json") d.safetensors_index = e.path().string();
    } else if (ends_with(name, ".safetensors")) {
      d.safetensors.push_back(e.path().string());
    } else if (ends_with(name, ".gguf")) {
      d.gguf.push_back(e.path().string());
    } else if ((starts_with(name, "pytorch_model") && ends_with(name, ".bin")) || ends_with(name, ".pt") ||
               ends_with(name, ".pth")) {
      d.pickles.push_back(e.path().string());
    }
  }
  std::sort(d.safetensors.begin(), d.safetensors.end());
  std::sort(d.gguf.begin(), d.gguf.end());
  std::sort(d.pickles.begin(), d.pickles.end());
  return d;
}

std::vector<std::string> HfDirectory::listing() const {
  std::vector<std::string> out;
  auto add = [&](const std::optional<std::string>& p) {
    if (p) out.push_back(fs::relative(*p, path).string());
  };
  add(config);
  add(generation_config);
  add(safetensors_index);
  for (const auto& p : safetensors) add(p);
  for (const auto& p : gguf) add(p);
  for (const auto& p : pickles) add(p);
  add(tokenizer.tokenizer_json);
  add(tokenizer.tokenizer_config);
  add(tokenizer.special_tokens_map);
  add(tokenizer.vocab_txt);
  add(tokenizer.vocab_json);
  add(tokenizer.merges_txt);
  add(tokenizer.sentencepiece_model);
  add(tokenizer.added_tokens);
  add(sentence_transformers_modules);
  add(pooling_config);
  return out;
}

}  // namespace rlx::formats
