// Pre-tokenizers: split normalized text into the words the model tokenizes one at a time.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "text/json_fields.h"

namespace rlx::text {

class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  // Splits every piece further, in place; empty pieces are dropped (as tokenizers does).
  virtual void pre_tokenize(std::vector<std::string>& pieces) const = 0;
  // The same, told whether the first piece begins the input (offset 0 of the original text):
  // Metaspace's prepend_scheme "first" prepends only there.
  virtual void pre_tokenize_at(std::vector<std::string>& pieces, bool at_start) const {
    (void)at_start;
    pre_tokenize(pieces);
  }
};

// How a split treats the delimiters it finds (tokenizers' SplitDelimiterBehavior).
enum class SplitBehavior { removed, isolated, merged_with_previous, merged_with_next, contiguous };

std::unique_ptr<PreTokenizer> make_bert_pre_tokenizer();
// GPT-2's byte-level step: optional prefix space, optional GPT-2 regex split, bytes → characters.
std::unique_ptr<PreTokenizer> make_byte_level_pre_tokenizer(bool add_prefix_space, bool use_regex);
// A regex Split (as Qwen2/Llama-3 use before ByteLevel).
std::unique_ptr<PreTokenizer> make_regex_split_pre_tokenizer(const std::string& regex, SplitBehavior behavior,
                                                             bool invert);
std::unique_ptr<PreTokenizer> make_sequence_pre_tokenizer(std::vector<std::unique_ptr<PreTokenizer>> items);

// Any pre-tokenizer of tokenizer.json ("type": BertPreTokenizer, ByteLevel, Split, Whitespace,
// WhitespaceSplit, Punctuation, Digits, Metaspace, Sequence).
std::unique_ptr<PreTokenizer> pre_tokenizer_from_json(const Json& j, const std::string& where);

// The regex GPT-2's ByteLevel pre-tokenizer splits with (use_regex).
extern const char* const kGpt2Pattern;

}  // namespace rlx::text
