// Models turn one pre-tokenized word into token ids: WordPiece (BERT), BPE (GPT-2 family,
// SentencePiece BPE) and Unigram (T5, XLM-R, ALBERT).
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "text/json_fields.h"
#include "text/vocab.h"

namespace rlx::text {

class Model {
 public:
  virtual ~Model() = default;
  virtual const char* type() const = 0;  // "WordPiece", "BPE" or "Unigram", as in tokenizer.json
  virtual void tokenize(std::string_view word, std::vector<int32_t>& ids) const = 0;
  // The ids and their token strings: the vocabulary's, except where a model reports another
  // (Unigram's unknown pieces keep their own text, as tokenizers does).
  virtual void tokenize_tokens(std::string_view word, std::vector<int32_t>& ids, std::vector<std::string>& tokens) const {
    size_t first = ids.size();
    tokenize(word, ids);
    for (size_t i = first; i < ids.size(); ++i) {
      const std::string* t = vocab_.token(ids[i]);
      tokens.push_back(t ? *t : std::string());
    }
  }
  const Vocab& vocab() const { return vocab_; }

 protected:
  Vocab vocab_;
};

struct WordPieceOptions {
  std::string unk_token = "[UNK]";
  std::string continuing_subword_prefix = "##";
  size_t max_input_chars_per_word = 100;
};
std::unique_ptr<Model> make_wordpiece(Vocab vocab, const WordPieceOptions& options);

struct BpeOptions {
  std::optional<std::string> unk_token;
  std::optional<std::string> continuing_subword_prefix;
  std::optional<std::string> end_of_word_suffix;
  bool fuse_unk = false;
  bool byte_fallback = false;
  bool ignore_merges = false;  // a word that is itself a token skips the merges (Llama-3)
};
// Merges are in rank order. Throws rlx::Error(format) naming `where` when a merge names a
// token, or produces one, that is not in the vocabulary.
std::unique_ptr<Model> make_bpe(Vocab vocab, const std::vector<std::pair<std::string, std::string>>& merges,
                                const BpeOptions& options, const std::string& where);

struct UnigramOptions {
  std::optional<int32_t> unk_id;
  bool byte_fallback = false;
};
// Pieces by id with their log-probabilities; the best segmentation (Viterbi, tokenizers' tie
// order), unknown characters fused into one unk piece, or bytes with byte_fallback. Throws
// rlx::Error(format) naming `where` for an empty vocabulary or an unk_id outside it.
std::unique_ptr<Model> make_unigram(std::vector<std::pair<std::string, double>> pieces, const UnigramOptions& options,
                                    const std::string& where);

// The "model" object of tokenizer.json (WordPiece, BPE or Unigram).
std::unique_ptr<Model> model_from_json(const Json& j, const std::string& where);

}  // namespace rlx::text
