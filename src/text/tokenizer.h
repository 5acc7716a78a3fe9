// The tokenizer: Hugging Face's pipeline (added tokens → normalizer → pre-tokenizer → model →
// post-processor, and a decoder back) behind one interface for WordPiece and byte-level BPE.
// Build one with load_tokenizer() (tokenizer_loader.h) or from its parts.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "text/added_vocabulary.h"
#include "text/decoder.h"
#include "text/encoding.h"
#include "text/model.h"
#include "text/normalizer.h"
#include "text/post_processor.h"
#include "text/pre_tokenizer.h"

namespace rlx::text {

// Ids of the tokens models and generation loops ask for; unset when the tokenizer has none.
struct SpecialTokenIds {
  std::optional<int32_t> bos, eos, pad, unk, cls, sep, mask;
};

class DecodeStream;

class Tokenizer {
 public:
  struct Parts {
    std::unique_ptr<Normalizer> normalizer;        // optional
    std::unique_ptr<PreTokenizer> pre_tokenizer;   // optional
    std::unique_ptr<Model> model;                  // required
    std::unique_ptr<PostProcessor> post_processor; // optional
    std::unique_ptr<Decoder> decoder;              // optional: tokens joined by spaces
    std::vector<AddedToken> added_tokens;
  };
  explicit Tokenizer(Parts parts);
  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

  // Text must be valid UTF-8 (rlx::Error(invalid_argument) otherwise). Truncation and padding
  // apply when set.
  Encoding encode(std::string_view text, bool add_special_tokens = true) const;
  Encoding encode_pair(std::string_view first, std::string_view second, bool add_special_tokens = true) const;
  std::vector<Encoding> encode_batch(const std::vector<std::string>& texts, bool add_special_tokens = true) const;
  std::vector<Encoding> encode_pair_batch(const std::vector<std::pair<std::string, std::string>>& pairs,
                                          bool add_special_tokens = true) const;

  std::string decode(const std::vector<int32_t>& ids, bool skip_special_tokens = false) const;
  // Incremental detokenization for streaming generation (see decode_stream.h).
  DecodeStream decode_stream(bool skip_special_tokens = false) const;

  std::optional<int32_t> token_to_id(std::string_view token) const;
  std::optional<std::string> id_to_token(int32_t id) const;
  bool is_special_id(int32_t id) const;
  size_t vocab_size(bool with_added_tokens = true) const;
  const char* model_type() const { return model_->type(); }

  const SpecialTokenIds& special_ids() const { return special_ids_; }
  void set_special_ids(const SpecialTokenIds& ids) { special_ids_ = ids; }
  // The longest input the model accepts (tokenizer_config.json's model_max_length), if known.
  std::optional<size_t> model_max_length() const { return model_max_length_; }
  void set_model_max_length(std::optional<size_t> n) { model_max_length_ = n; }

  void set_truncation(std::optional<TruncationOptions> t) { truncation_ = std::move(t); }
  void set_padding(std::optional<PaddingOptions> p) { padding_ = std::move(p); }
  const std::optional<TruncationOptions>& truncation() const { return truncation_; }
  const std::optional<PaddingOptions>& padding() const { return padding_; }

  // Replaces the normalizer (transformers does this for BERT when tokenizer_config.json's
  // do_lower_case/strip_accents disagree with tokenizer.json); rebuilds the added-token matcher.
  void set_normalizer(std::unique_ptr<Normalizer> normalizer);
  const Normalizer* normalizer() const { return normalizer_.get(); }
  const AddedVocabulary& added_vocabulary() const { return added_; }

 private:
  Encoding encode_sequence(std::string_view text, int32_t type_id) const;
  Encoding post_process(Encoding a, std::optional<Encoding> b, bool add_special_tokens) const;

  std::unique_ptr<Normalizer> normalizer_;
  std::unique_ptr<PreTokenizer> pre_tokenizer_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<PostProcessor> post_processor_;
  std::unique_ptr<Decoder> decoder_;
  std::vector<AddedToken> added_tokens_;
  AddedVocabulary added_;
  SpecialTokenIds special_ids_;
  std::optional<size_t> model_max_length_;
  std::optional<TruncationOptions> truncation_;
  std::optional<PaddingOptions> padding_;
};

}  // namespace rlx::text
