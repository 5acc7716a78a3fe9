// PCRE2 (UTF + Unicode properties) for the regex patterns of tokenizer.json, which Hugging Face
// runs with Oniguruma; the patterns in use (GPT-2, Qwen2, Llama-3 …) mean the same in both.
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rlx::text {

class Regex {
 public:
  // Throws rlx::Error(invalid_argument) naming `where` and the offset when the pattern is bad.
  Regex(std::string_view pattern, std::string_view where);
  ~Regex();
  Regex(Regex&&) noexcept;
  Regex& operator=(Regex&&) noexcept;
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  const std::string& pattern() const { return pattern_; }
  // Non-overlapping leftmost matches, left to right, as [begin, end) byte offsets.
  std::vector<std::pair<size_t, size_t>> find_all(std::string_view text) const;

 private:
  struct Impl;
  std::string pattern_;
  std::unique_ptr<Impl> impl_;
};

// A Split/Replace pattern of tokenizer.json: a literal string or a regex.
class Pattern {
 public:
  static Pattern literal(std::string s);
  static Pattern regex(std::string_view pattern, std::string_view where);
  std::vector<std::pair<size_t, size_t>> find_all(std::string_view text) const;

 private:
  std::string literal_;
  std::shared_ptr<const Regex> regex_;
};

}  // namespace rlx::text
