#include "export_web.h"

#include <nlohmann/json.hpp>

#include "export_web_files.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::cli {

namespace {

// What the tokenizer's normalizer does, read off its behaviour: the page's tokenizer then does
// the same, whichever way the directory declared it (tokenizer.json, tokenizer_config.json).
nlohmann::json normalizer_settings(const text::Tokenizer& tok) {
  const text::Normalizer* n = tok.normalizer();
  auto does = [&](const std::string& in, const std::string& out) { return n && n->normalize(in) == out; };
  return {{"lowercase", does("A", "a")},
          {"strip_accents", does("\xc3\xa9", "e")},                   // é
          {"handle_chinese_chars", does("\xe4\xb8\xad", " \xe4\xb8\xad ")},  // 中
          {"clean_text", does("a\x01" "b\t", "ab ")}};
}

}  // namespace

std::map<std::string, std::string> sentence_page_files(const text::Tokenizer& tok, const std::string& model_name, int64_t max_tokens) {
  if (std::string(tok.model_type()) != "WordPiece")
    throw Error(ErrorKind::unsupported, cat("rlx export: the embeddings page tokenizes with WordPiece (BERT's); this model's tokenizer is ", tok.model_type()));
  nlohmann::json spec = normalizer_settings(tok);
  const size_t n = tok.vocab_size(true);
  nlohmann::json vocab = nlohmann::json::array();
  for (size_t i = 0; i < n; ++i) vocab.push_back(tok.id_to_token(static_cast<int32_t>(i)).value_or(""));
  const text::SpecialTokenIds& s = tok.special_ids();
  auto token = [&](const std::optional<int32_t>& id, const char* what) {
    if (!id) throw Error(ErrorKind::unsupported, cat("rlx export: the tokenizer has no ", what, " token, which the embeddings page needs"));
    return tok.id_to_token(*id).value_or("");
  };
  spec["unk"] = token(s.unk, "unknown");
  spec["cls"] = token(s.cls, "[CLS]");
  spec["sep"] = token(s.sep, "[SEP]");
  spec["pad"] = s.pad ? token(s.pad, "padding") : spec["sep"].get<std::string>();
  nlohmann::json added = nlohmann::json::array();
  for (const auto& [id, t] : tok.added_vocabulary().by_id())
    added.push_back({{"content", t.content}, {"id", id}, {"normalized", t.normalized}, {"single_word", t.single_word}, {"lstrip", t.lstrip}, {"rstrip", t.rstrip}});
  spec["added"] = std::move(added);
  spec["prefix"] = "##";
  spec["max_input_chars_per_word"] = 100;
  spec["max_tokens"] = max_tokens;
  spec["model"] = model_name;
  spec["vocab"] = std::move(vocab);
  return {{"index.html", kEmbeddingsPage}, {"wordpiece.js", kWordpieceJs}, {"wordpiece.json", spec.dump() + "\n"}};
}

}  // namespace rlx::cli
