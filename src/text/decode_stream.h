// Streaming detokenization: push one generated id at a time, get back only newly completed text.
// Text whose last character is still incomplete (a multi-byte UTF-8 sequence split across byte
// tokens) is held back until a later id completes it, so no chunk ever ends mid-character.
// This is the algorithm of tokenizers' DecodeStream: decode a short window of ids and emit the
// difference, which keeps decoders that depend on context (WordPiece's spaces) right.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace rlx::text {

class Tokenizer;

class DecodeStream {
 public:
  DecodeStream(const Tokenizer& tokenizer, bool skip_special_tokens);
  // Newly completed text after adding `id`; empty while a character is still incomplete.
  std::string step(int32_t id);
  // Whatever is still held back (an incomplete tail decodes to U+FFFD); call at the end.
  std::string finish();

 private:
  const Tokenizer* tokenizer_;
  bool skip_special_;
  std::vector<int32_t> ids_;
  std::string prefix_;
  size_t prefix_index_ = 0;
};

}  // namespace rlx::text
