// Normalizers: the first stage of the Hugging Face pipeline, text → text.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "text/json_fields.h"
#include "text/regex.h"

namespace rlx::text {

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  virtual std::string normalize(std::string_view text) const = 0;
};

// BERT's basic cleaning (BertNormalizer in tokenizers, BasicTokenizer in transformers).
struct BertNormalizerOptions {
  bool clean_text = true;            // drop NUL, U+FFFD and control characters; whitespace → ' '
  bool handle_chinese_chars = true;  // surround CJK ideographs with spaces
  std::optional<bool> strip_accents;  // NFD and drop Mn; unset: follows lowercase
  bool lowercase = true;
};
std::unique_ptr<Normalizer> make_bert_normalizer(const BertNormalizerOptions& options);
std::unique_ptr<Normalizer> make_nfc_normalizer();

// Any normalizer of tokenizer.json ("type": BertNormalizer, NFC, NFD, NFKC, NFKD, Lowercase,
// StripAccents, Strip, Replace, Prepend, ByteLevel, Sequence). `where` names the field path.
// A Split/Replace pattern: {"String": "..."} or {"Regex": "..."}.
Pattern pattern_from_json(const Json& j, const std::string& where);

std::unique_ptr<Normalizer> normalizer_from_json(const Json& j, const std::string& where);

}  // namespace rlx::text
