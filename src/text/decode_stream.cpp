#include "text/decode_stream.h"

#include "text/tokenizer.h"
#include "util/strings.h"

namespace rlx::text {

namespace {

bool ends_with_replacement(const std::string& s) { return s.size() >= 3 && s.compare(s.size() - 3, 3, "\xef\xbf\xbd") == 0; }

}  // namespace

DecodeStream::DecodeStream(const Tokenizer& tokenizer, bool skip_special_tokens)
    : tokenizer_(&tokenizer), skip_special_(skip_special_tokens) {}

std::string DecodeStream::step(int32_t id) {
  ids_.push_back(id);
  std::string text = tokenizer_->decode(ids_, skip_special_);
  if (text.size() <= prefix_.size() || ends_with_replacement(text)) return {};
  // The window's text must extend the previous window's; when a decoder rewrites earlier text
  // (rare), emitting from the common prefix is the best that can be done.
  size_t common = 0;
  while (common < prefix_.size() && text[common] == prefix_[common]) ++common;
  std::string fresh = text.substr(common);
  // Keep the ids since the last emission as context for the next window.
  size_t new_prefix_index = ids_.size() - prefix_index_;
  ids_.erase(ids_.begin(), ids_.begin() + static_cast<ptrdiff_t>(prefix_index_));
  prefix_ = tokenizer_->decode(ids_, skip_special_);
  prefix_index_ = new_prefix_index;
  return fresh;
}

std::string DecodeStream::finish() {
  std::string text = tokenizer_->decode(ids_, skip_special_);
  std::string rest = text.size() > prefix_.size() ? text.substr(prefix_.size()) : std::string();
  ids_.clear();
  prefix_.clear();
  prefix_index_ = 0;
  return rest;
}

}  // namespace rlx::text
