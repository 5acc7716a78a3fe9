// WordPiece: greedy longest-match-first over the word, continuations carry the "##" prefix;
// a word with any unmatched remainder (or too long) becomes the single unknown token.
#include "rlx/error.h"
#include "text/model.h"
#include "text/utf8.h"
#include "util/strings.h"

namespace rlx::text {

namespace {

class WordPiece : public Model {
 public:
  WordPiece(Vocab vocab, const WordPieceOptions& o) : options_(o) { vocab_ = std::move(vocab); }
  const char* type() const override { return "WordPiece"; }

  void tokenize(std::string_view word, std::vector<int32_t>& ids) const override {
    if (word.empty()) return;
    if (utf8_char_count(word) > options_.max_input_chars_per_word) {
      ids.push_back(unk_id());
      return;
    }
    size_t mark = ids.size();
    std::string candidate;
    for (size_t start = 0; start < word.size();) {
      size_t end = word.size();
      std::optional<int32_t> found;
      while (start < end) {
        candidate.clear();
        if (start > 0) candidate = options_.continuing_subword_prefix;
        candidate.append(word.substr(start, end - start));
        if ((found = vocab_.find(candidate))) break;
        do --end;  // drop the last character of the candidate
        while (end > start && (static_cast<unsigned char>(word[end]) & 0xc0) == 0x80);
      }
      if (!found) {
        ids.resize(mark);
        ids.push_back(unk_id());
        return;
      }
      ids.push_back(*found);
      start = end;
    }
  }

 private:
  int32_t unk_id() const {
    auto id = vocab_.find(options_.unk_token);
    if (!id)
      throw Error(ErrorKind::format,
                  cat("WordPiece unk_token '", options_.unk_token, "' is not in the vocabulary, but a word needs it"));
    return *id;
  }
  WordPieceOptions options_;
};

}  // namespace

std::unique_ptr<Model> make_wordpiece(Vocab vocab, const WordPieceOptions& options) {
  return std::make_unique<WordPiece>(std::move(vocab), options);
}

}  // namespace rlx::text
