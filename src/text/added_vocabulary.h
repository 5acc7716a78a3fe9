// Added and special tokens: found in the text before normalization/pre-tokenization (or after
// normalization for `normalized` ones) with tokenizers' exact matching rules: leftmost-longest,
// single_word, lstrip/rstrip.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "text/vocab.h"

namespace rlx::text {

class Normalizer;
class Model;

struct AddedToken {
  std::string content;
  bool single_word = false;  // only match where no word character touches either side
  bool lstrip = false;       // swallow the whitespace on the left
  bool rstrip = false;       // swallow the whitespace on the right
  bool normalized = true;    // match against the normalized text
  bool special = false;      // skipped by decode(skip_special_tokens)
  bool operator==(const AddedToken&) const = default;
};

// A piece of text: either an added token (id >= 0) or text still to tokenize (id < 0).
struct TextSplit {
  std::string_view text;
  int32_t id = -1;
};

class AddedVocabulary {
 public:
  // Assigns ids as tokenizers does: the model's id when the content is in its vocabulary, else the
  // next id after the model vocabulary and the tokens added so far.
  void add(const std::vector<AddedToken>& tokens, const Model& model, const Normalizer* normalizer);

  std::vector<TextSplit> split_raw(std::string_view text) const { return find_matches(text, raw_); }
  std::vector<TextSplit> split_normalized(std::string_view text) const { return find_matches(text, normalized_); }

  std::optional<int32_t> id_of(std::string_view content) const;
  const AddedToken* token_of(int32_t id) const;
  // The string an added token decodes as: its normalized form when it is matched normalized
  // (tokenizers caches that so decoders can invert it), else its content.
  const std::string* decode_form(int32_t id) const;
  bool is_special(std::string_view content) const { return special_set_.count(std::string(content)) > 0; }
  size_t size() const { return by_content_.size(); }
  const std::unordered_map<int32_t, AddedToken>& by_id() const { return by_id_; }

 private:
  struct Matcher {
    // Patterns bucketed by first byte, longest first, so the first hit is the longest.
    std::vector<std::vector<std::pair<std::string, int32_t>>> by_first_byte = std::vector<std::vector<std::pair<std::string, int32_t>>>(256);
    bool empty = true;
  };
  void rebuild(const Model& model, const Normalizer* normalizer);
  std::vector<TextSplit> find_matches(std::string_view text, const Matcher& m) const;

  std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>> by_content_;
  std::unordered_map<int32_t, AddedToken> by_id_;
  std::unordered_map<int32_t, std::string> decode_form_;
  std::vector<AddedToken> special_tokens_, added_tokens_;  // in the order given
  std::unordered_set<std::string> special_set_;
  Matcher raw_, normalized_;
};

}  // namespace rlx::text
