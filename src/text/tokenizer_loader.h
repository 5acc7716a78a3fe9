// Building tokenizers from Hugging Face files: tokenizer.json (any supported pipeline), a BERT
// vocab.txt with tokenizer_config.json, or a whole model directory.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "text/tokenizer.h"

namespace rlx::text {

// A tokenizer.json document; `source` names it in error messages. Its "truncation" and
// "padding" apply as in tokenizers (transformers-style callers reset them per call).
Tokenizer tokenizer_from_json(std::string_view json_text, const std::string& source);
Tokenizer load_tokenizer_json(const std::string& path);

// BERT's vocab.txt (one token per line, id = line number) with BertTokenizer's options, built
// the way transformers converts it to a fast tokenizer.
struct BertVocabOptions {
  bool do_lower_case = true;
  std::optional<bool> strip_accents;  // unset: follows do_lower_case
  bool tokenize_chinese_chars = true;
  std::string unk_token = "[UNK]", sep_token = "[SEP]", pad_token = "[PAD]", cls_token = "[CLS]",
              mask_token = "[MASK]";
  size_t max_input_chars_per_word = 100;
};
Tokenizer load_bert_vocab(const std::string& vocab_path, const BertVocabOptions& options);

// A Hugging Face model directory (or a tokenizer.json path): tokenizer.json when present, else
// vocab.txt; tokenizer_config.json and special_tokens_map.json supply the special tokens,
// model_max_length and BERT's do_lower_case / strip_accents / tokenize_chinese_chars.
Tokenizer load_tokenizer(const std::string& path);

}  // namespace rlx::text
