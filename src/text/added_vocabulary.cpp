#include "text/added_vocabulary.h"

#include <algorithm>

#include "rlx/error.h"
#include "text/model.h"
#include "text/normalizer.h"
#include "text/unicode.h"
#include "text/utf8.h"
#include "util/strings.h"

namespace rlx::text {

namespace {

char32_t last_char(std::string_view s) {
  size_t b = s.size() - 1;
  while (b > 0 && (static_cast<unsigned char>(s[b]) & 0xc0) == 0x80) --b;
  return utf8_next(s, b);
}

// Start of the whitespace run that ends s (Rust regex `\s*$`).
size_t trailing_space_start(std::string_view s) {
  size_t end = s.size();
  while (end > 0) {
    size_t b = end - 1;
    while (b > 0 && (static_cast<unsigned char>(s[b]) & 0xc0) == 0x80) --b;
    size_t i = b;
    if (!is_whitespace(utf8_next(s, i))) break;
    end = b;
  }
  return end;
}

// Length of the whitespace run that starts s (Rust regex `^\s*`).
size_t leading_space_len(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    size_t j = i;
    if (!is_whitespace(utf8_next(s, j))) break;
    i = j;
  }
  return i;
}

}  // namespace

void AddedVocabulary::add(const std::vector<AddedToken>& tokens, const Model& model, const Normalizer* normalizer) {
  for (const auto& t : tokens)
    if (t.special && !t.content.empty() && !special_set_.count(t.content)) {
      special_tokens_.push_back(t);
      special_set_.insert(t.content);
    }
  int64_t vocab_size = static_cast<int64_t>(model.vocab().size());
  for (const auto& t : tokens) {
    if (t.content.empty()) continue;
    if (std::any_of(by_id_.begin(), by_id_.end(), [&](const auto& kv) { return kv.second == t; })) continue;
    int32_t id;
    if (auto known = id_of(t.content)) {
      id = *known;
    } else if (auto in_model = model.vocab().find(t.content)) {
      id = *in_model;
    } else if (by_content_.empty()) {
      id = static_cast<int32_t>(vocab_size);
    } else {
      int32_t max = 0;
      for (const auto& kv : by_content_) max = std::max(max, kv.second);
      id = (max >= vocab_size || vocab_size == 0) ? max + 1 : static_cast<int32_t>(vocab_size);
    }
    by_content_[t.content] = id;
    by_id_[id] = t;
    if (!special_set_.count(t.content)) added_tokens_.push_back(t);
  }
  rebuild(model, normalizer);
}

void AddedVocabulary::rebuild(const Model& model, const Normalizer* normalizer) {
  raw_ = Matcher();
  normalized_ = Matcher();
  decode_form_.clear();
  for (const auto& [id, t] : by_id_)
    decode_form_[id] = t.normalized && normalizer ? normalizer->normalize(t.content) : t.content;
  auto insert = [&](const AddedToken& t) {
    auto id = id_of(t.content);
    if (!id) id = model.vocab().find(t.content);
    if (!id) throw Error(ErrorKind::internal, cat("added token '", t.content, "' has no id"));
    std::string pattern = t.normalized && normalizer ? normalizer->normalize(t.content) : t.content;
    if (pattern.empty()) return;
    Matcher& m = t.normalized ? normalized_ : raw_;
    m.by_first_byte[static_cast<unsigned char>(pattern[0])].emplace_back(pattern, *id);
    m.empty = false;
  };
  for (const auto& t : special_tokens_) insert(t);
  for (const auto& t : added_tokens_) insert(t);
  for (Matcher* m : {&raw_, &normalized_})
    for (auto& bucket : m->by_first_byte)
      std::stable_sort(bucket.begin(), bucket.end(), [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
}

std::optional<int32_t> AddedVocabulary::id_of(std::string_view content) const {
  auto it = by_content_.find(content);
  if (it == by_content_.end()) return std::nullopt;
  return it->second;
}

const std::string* AddedVocabulary::decode_form(int32_t id) const {
  auto it = decode_form_.find(id);
  return it == decode_form_.end() ? nullptr : &it->second;
}

const AddedToken* AddedVocabulary::token_of(int32_t id) const {
  auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : &it->second;
}

std::vector<TextSplit> AddedVocabulary::find_matches(std::string_view text, const Matcher& m) const {
  std::vector<TextSplit> splits;
  if (text.empty() || m.empty) {
    splits.push_back({text, -1});
    return splits;
  }
  // The leftmost-longest, non-overlapping matches are found first; the word and strip rules then
  // filter and widen them without changing where the scan went (as aho-corasick's find_iter).
  size_t start_offset = 0;
  for (size_t pos = 0; pos < text.size();) {
    const auto& bucket = m.by_first_byte[static_cast<unsigned char>(text[pos])];
    const std::pair<std::string, int32_t>* hit = nullptr;
    for (const auto& p : bucket)
      if (text.compare(pos, p.first.size(), p.first) == 0) {
        hit = &p;
        break;
      }
    if (!hit) {
      ++pos;
      continue;
    }
    size_t start = pos, stop = pos + hit->first.size();
    pos = stop;
    const AddedToken& token = by_id_.at(hit->second);
    if (token.single_word) {
      bool start_space = start == 0 || !is_word_char(last_char(text.substr(0, start)));
      bool stop_space = stop == text.size() || [&] {
        size_t i = stop;
        return !is_word_char(utf8_next(text, i));
      }();
      if (!start_space || !stop_space) continue;
    }
    if (token.lstrip) start = std::max(trailing_space_start(text.substr(0, start)), start_offset);
    if (token.rstrip) stop += leading_space_len(text.substr(stop));
    if (start_offset < start) splits.push_back({text.substr(start_offset, start - start_offset), -1});
    splits.push_back({text.substr(start, stop - start), hit->second});
    start_offset = stop;
  }
  if (start_offset != text.size()) splits.push_back({text.substr(start_offset), -1});
  return splits;
}

}  // namespace rlx::text
