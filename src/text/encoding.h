// The result of encoding: ids with their tokens and the masks models take, plus truncation and
// padding with the semantics of Hugging Face tokenizers.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rlx::text {

struct Encoding {
  std::vector<int32_t> ids;
  std::vector<std::string> tokens;
  std::vector<int32_t> type_ids;             // segment ids (0 first sentence, 1 second)
  std::vector<int32_t> attention_mask;       // 1 for tokens, 0 for padding
  std::vector<int32_t> special_tokens_mask;  // 1 for tokens the post-processor or padding added

  size_t size() const { return ids.size(); }
  void push(int32_t id, std::string token, int32_t type_id, bool special);
  void append(const Encoding& other);
};

enum class Direction { left, right };
enum class TruncationStrategy { longest_first, only_first, only_second };

struct TruncationOptions {
  size_t max_length = 512;  // including the special tokens the post-processor adds
  TruncationStrategy strategy = TruncationStrategy::longest_first;
  Direction direction = Direction::right;
};

struct PaddingOptions {
  std::optional<size_t> length;  // unset: pad a batch to its longest encoding
  size_t pad_to_multiple_of = 0;
  Direction direction = Direction::right;
  int32_t pad_id = 0;
  int32_t pad_type_id = 0;
  std::string pad_token = "[PAD]";
};

// Shortens a (or a and b) so their total length is at most max_length (tokenizers'
// truncate_encodings). Throws rlx::Error(invalid_argument) when the strategy cannot.
void truncate_encodings(Encoding& a, Encoding* b, size_t max_length, const TruncationOptions& options);
void truncate_encoding(Encoding& e, size_t length, Direction direction);
// Pads every encoding to the same length (the longest, or options.length), rounded up.
void pad_encodings(std::vector<Encoding>& encodings, const PaddingOptions& options);

}  // namespace rlx::text
