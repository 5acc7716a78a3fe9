// Stop strings over streamed text: text is released as soon as it cannot be the start of a stop
// string, and nothing from the first stop string on is ever released. A suffix that could still
// grow into a stop string is held back until the next piece decides it (or flush() ends the
// stream). Stop strings begin at a UTF-8 lead byte, so what is held back never splits a character.
#pragma once
#include <algorithm>
#include <string>
#include <vector>

namespace rlx::serve {

class StopScanner {
 public:
  explicit StopScanner(std::vector<std::string> stops) : stops_(std::move(stops)) {}

  // Adds `piece`; returns the text that is now safe to send.
  std::string feed(const std::string& piece) {
    if (stopped_) return {};
    held_ += piece;
    size_t cut = std::string::npos;
    for (const auto& s : stops_) cut = std::min(cut, held_.find(s));
    if (cut != std::string::npos) {
      stopped_ = true;
      std::string out = held_.substr(0, cut);
      held_.clear();
      return out;
    }
    size_t keep = 0;  // the longest suffix of held_ that is a proper prefix of a stop string
    for (const auto& s : stops_)
      for (size_t n = std::min(s.size() - 1, held_.size()); n > keep; --n)
        if (held_.compare(held_.size() - n, n, s, 0, n) == 0) {
          keep = n;
          break;
        }
    std::string out = held_.substr(0, held_.size() - keep);
    held_.erase(0, held_.size() - keep);
    return out;
  }
  // The stream ended: what was held back is text after all.
  std::string flush() {
    std::string out;
    if (!stopped_) out.swap(held_);
    return out;
  }
  bool stopped() const { return stopped_; }

 private:
  std::vector<std::string> stops_;
  std::string held_;
  bool stopped_ = false;
};

}  // namespace rlx::serve
