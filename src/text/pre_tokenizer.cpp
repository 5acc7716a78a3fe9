#include "text/pre_tokenizer.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <utility>

#include "rlx/error.h"
#include "text/byte_level.h"
#include "text/normalizer.h"
#include "text/regex.h"
#include "text/unicode.h"
#include "text/utf8.h"
#include "util/strings.h"

namespace rlx::text {

const char* const kGpt2Pattern = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

namespace {

using Span = std::pair<size_t, size_t>;
struct Part {
  Span span;
  bool is_match;
};

// Turns the delimiter matches found in `text` into pieces the way NormalizedString::split does.
void apply_behavior(std::string_view text, const std::vector<Span>& found, SplitBehavior behavior, bool invert,
                    std::vector<std::string>& out) {
  std::vector<Part> parts;
  size_t prev = 0;
  for (auto [b, e] : found) {
    if (prev != b) parts.push_back({{prev, b}, false});
    parts.push_back({{b, e}, true});
    prev = e;
  }
  if (prev != text.size()) parts.push_back({{prev, text.size()}, false});
  if (invert)
    for (auto& p : parts) p.is_match = !p.is_match;

  std::vector<Part> merged;
  switch (behavior) {
    case SplitBehavior::removed:
      for (auto& p : parts)
        if (!p.is_match) merged.push_back(p);
      break;
    case SplitBehavior::isolated:
      merged = parts;
      break;
    case SplitBehavior::merged_with_previous: {
      bool previous_match = false;
      for (auto& p : parts) {
        if (p.is_match && !previous_match && !merged.empty())
          merged.back().span.second = p.span.second;
        else
          merged.push_back(p);
        previous_match = p.is_match;
      }
      break;
    }
    case SplitBehavior::merged_with_next: {
      bool previous_match = false;
      for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
        if (it->is_match && !previous_match && !merged.empty())
          merged.back().span.first = it->span.first;
        else
          merged.push_back(*it);
        previous_match = it->is_match;
      }
      std::reverse(merged.begin(), merged.end());
      break;
    }
    case SplitBehavior::contiguous: {
      bool previous_match = false;
      for (auto& p : parts) {
        if (p.is_match == previous_match && !merged.empty())
          merged.back().span.second = p.span.second;
        else
          merged.push_back(p);
        previous_match = p.is_match;
      }
      break;
    }
  }
  for (auto& p : merged)
    if (p.span.second > p.span.first) out.emplace_back(text.substr(p.span.first, p.span.second - p.span.first));
}

// Every character for which pred holds is one delimiter match.
std::vector<Span> char_matches(std::string_view text, const std::function<bool(char32_t)>& pred) {
  std::vector<Span> found;
  for (size_t i = 0; i < text.size();) {
    size_t b = i;
    if (pred(utf8_next(text, i))) found.emplace_back(b, i);
  }
  return found;
}

template <class F>
void split_each(std::vector<std::string>& pieces, F&& split_one) {
  std::vector<std::string> out;
  out.reserve(pieces.size());
  for (const auto& p : pieces) split_one(std::string_view(p), out);
  pieces = std::move(out);
}

class BertPreTokenizer : public PreTokenizer {
 public:
  void pre_tokenize(std::vector<std::string>& pieces) const override {
    split_each(pieces, [](std::string_view s, std::vector<std::string>& out) {
      apply_behavior(s, char_matches(s, is_whitespace), SplitBehavior::removed, false, out);
    });
    split_each(pieces, [](std::string_view s, std::vector<std::string>& out) {
      apply_behavior(s, char_matches(s, is_bert_punctuation), SplitBehavior::isolated, false, out);
    });
  }
};

class CharSplitPreTokenizer : public PreTokenizer {
 public:
  CharSplitPreTokenizer(std::function<bool(char32_t)> pred, SplitBehavior b) : pred_(std::move(pred)), behavior_(b) {}
  void pre_tokenize(std::vector<std::string>& pieces) const override {
    split_each(pieces, [&](std::string_view s, std::vector<std::string>& out) {
      apply_behavior(s, char_matches(s, pred_), behavior_, false, out);
    });
  }

 private:
  std::function<bool(char32_t)> pred_;
  SplitBehavior behavior_;
};

class PatternSplitPreTokenizer : public PreTokenizer {
 public:
  PatternSplitPreTokenizer(Pattern p, SplitBehavior b, bool invert) : pattern_(std::move(p)), behavior_(b), invert_(invert) {}
  void pre_tokenize(std::vector<std::string>& pieces) const override {
    split_each(pieces, [&](std::string_view s, std::vector<std::string>& out) {
      apply_behavior(s, pattern_.find_all(s), behavior_, invert_, out);
    });
  }

 private:
  Pattern pattern_;
  SplitBehavior behavior_;
  bool invert_;
};

class ByteLevelPreTokenizer : public PreTokenizer {
 public:
  ByteLevelPreTokenizer(bool add_prefix_space, bool use_regex)
      : add_prefix_space_(add_prefix_space), regex_(use_regex ? std::optional<Regex>(Regex(kGpt2Pattern, "ByteLevel")) : std::nullopt) {}
  void pre_tokenize(std::vector<std::string>& pieces) const override {
    split_each(pieces, [&](std::string_view s, std::vector<std::string>& out) {
      // The prefix space is added to every piece this step sees, as tokenizers does.
      std::string text = add_prefix_space_ && (s.empty() || s[0] != ' ') ? " " + std::string(s) : std::string(s);
      if (regex_)
        apply_behavior(text, regex_->find_all(text), SplitBehavior::isolated, false, out);
      else if (!text.empty())
        out.push_back(text);
    });
    for (auto& p : pieces) p = bytes_to_byte_level(p);
  }

 private:
  bool add_prefix_space_;
  std::optional<Regex> regex_;
};

// SentencePiece's spaces (tokenizers' Metaspace): ' ' becomes the replacement ("▁"), one is
// prepended (always, or only at the start of the input for "first", unless already there), and
// with `split` each "▁" starts a new piece.
class MetaspacePreTokenizer : public PreTokenizer {
 public:
  enum class Prepend { always, first, never };
  MetaspacePreTokenizer(std::string replacement, Prepend prepend, bool split) : rep_(std::move(replacement)), prepend_(prepend), split_(split) {}
  void pre_tokenize(std::vector<std::string>& pieces) const override { pre_tokenize_at(pieces, true); }
  void pre_tokenize_at(std::vector<std::string>& pieces, bool at_start) const override {
    std::vector<std::string> out;
    for (size_t k = 0; k < pieces.size(); ++k) {
      std::string t;
      for (char c : pieces[k]) {
        if (c == ' ') t += rep_;
        else t += c;
      }
      bool first = at_start && k == 0;
      if ((prepend_ == Prepend::always || (prepend_ == Prepend::first && first)) && t.compare(0, rep_.size(), rep_) != 0) t = rep_ + t;
      if (!split_) {
        if (!t.empty()) out.push_back(std::move(t));
        continue;
      }
      size_t start = 0;  // MergedWithNext: each replacement begins a piece
      for (size_t at = t.find(rep_, rep_.size() <= t.size() ? 1 : t.size()); at != std::string::npos; at = t.find(rep_, at + rep_.size())) {
        if (at > start) out.push_back(t.substr(start, at - start));
        start = at;
      }
      if (start < t.size()) out.push_back(t.substr(start));
    }
    pieces = std::move(out);
  }

 private:
  std::string rep_;
  Prepend prepend_;
  bool split_;
};

class SequencePreTokenizer : public PreTokenizer {
 public:
  explicit SequencePreTokenizer(std::vector<std::unique_ptr<PreTokenizer>> items) : items_(std::move(items)) {}
  void pre_tokenize(std::vector<std::string>& pieces) const override { pre_tokenize_at(pieces, true); }
  void pre_tokenize_at(std::vector<std::string>& pieces, bool at_start) const override {
    for (const auto& p : items_) p->pre_tokenize_at(pieces, at_start);
  }

 private:
  std::vector<std::unique_ptr<PreTokenizer>> items_;
};

SplitBehavior behavior_from_json(const Json& j, const std::string& where, SplitBehavior def) {
  auto name = json_opt_string(j, "behavior", where);
  if (!name) return def;
  if (*name == "Removed") return SplitBehavior::removed;
  if (*name == "Isolated") return SplitBehavior::isolated;
  if (*name == "MergedWithPrevious") return SplitBehavior::merged_with_previous;
  if (*name == "MergedWithNext") return SplitBehavior::merged_with_next;
  if (*name == "Contiguous") return SplitBehavior::contiguous;
  json_fail(where, cat("field 'behavior': unknown value '", *name,
                       "' (expected Removed, Isolated, MergedWithPrevious, MergedWithNext or Contiguous)"));
}

}  // namespace

std::unique_ptr<PreTokenizer> make_bert_pre_tokenizer() { return std::make_unique<BertPreTokenizer>(); }

std::unique_ptr<PreTokenizer> make_byte_level_pre_tokenizer(bool add_prefix_space, bool use_regex) {
  return std::make_unique<ByteLevelPreTokenizer>(add_prefix_space, use_regex);
}

std::unique_ptr<PreTokenizer> make_regex_split_pre_tokenizer(const std::string& regex, SplitBehavior behavior,
                                                             bool invert) {
  return std::make_unique<PatternSplitPreTokenizer>(Pattern::regex(regex, "Split"), behavior, invert);
}

std::unique_ptr<PreTokenizer> make_sequence_pre_tokenizer(std::vector<std::unique_ptr<PreTokenizer>> items) {
  return std::make_unique<SequencePreTokenizer>(std::move(items));
}

std::unique_ptr<PreTokenizer> pre_tokenizer_from_json(const Json& j, const std::string& where) {
  std::string type = json_string(j, "type", where);
  if (type == "BertPreTokenizer") return make_bert_pre_tokenizer();
  if (type == "ByteLevel")
    return make_byte_level_pre_tokenizer(json_bool(j, "add_prefix_space", true, where), json_bool(j, "use_regex", true, where));
  if (type == "Split")
    return std::make_unique<PatternSplitPreTokenizer>(pattern_from_json(json_required(j, "pattern", where), where + ".pattern"),
                                                      behavior_from_json(j, where, SplitBehavior::isolated),
                                                      json_bool(j, "invert", false, where));
  if (type == "Whitespace") {
    // `\w+|[^\w\s]+` with Rust regex's Unicode \w spelled out (PCRE2's lacks marks).
    const char* w = R"(\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\x{200C}\x{200D})";
    return std::make_unique<PatternSplitPreTokenizer>(Pattern::regex(cat("[", w, "]+|[^", w, "\\s]+"), where),
                                                      SplitBehavior::removed, true);
  }
  if (type == "WhitespaceSplit") return std::make_unique<CharSplitPreTokenizer>(is_whitespace, SplitBehavior::removed);
  if (type == "Punctuation")
    return std::make_unique<CharSplitPreTokenizer>(is_bert_punctuation, behavior_from_json(j, where, SplitBehavior::isolated));
  if (type == "Digits") {
    bool individual = json_bool(j, "individual_digits", false, where);
    return std::make_unique<CharSplitPreTokenizer>(is_numeric, individual ? SplitBehavior::isolated : SplitBehavior::contiguous);
  }
  if (type == "Metaspace") {
    std::string rep = json_opt_string(j, "replacement", where).value_or("\u2581");
    MetaspacePreTokenizer::Prepend prepend = MetaspacePreTokenizer::Prepend::always;
    if (auto scheme = json_opt_string(j, "prepend_scheme", where)) {
      if (*scheme == "always") prepend = MetaspacePreTokenizer::Prepend::always;
      else if (*scheme == "first") prepend = MetaspacePreTokenizer::Prepend::first;
      else if (*scheme == "never") prepend = MetaspacePreTokenizer::Prepend::never;
      else json_fail(where, cat("field 'prepend_scheme': unknown value '", *scheme, "' (expected always, first or never)"));
    } else if (!json_bool(j, "add_prefix_space", true, where)) {  // the older files' spelling
      prepend = MetaspacePreTokenizer::Prepend::never;
    }
    return std::make_unique<MetaspacePreTokenizer>(rep, prepend, json_bool(j, "split", true, where));
  }
  if (type == "Sequence") {
    const Json& list = json_required(j, "pretokenizers", where);
    if (!list.is_array()) json_fail(where, "field 'pretokenizers': expected an array");
    std::vector<std::unique_ptr<PreTokenizer>> items;
    for (size_t i = 0; i < list.size(); ++i)
      items.push_back(pre_tokenizer_from_json(list[i], cat(where, ".pretokenizers[", i, "]")));
    return make_sequence_pre_tokenizer(std::move(items));
  }
  throw Error(ErrorKind::unsupported,
              cat(where, ": pre-tokenizer type '", type,
                  "' is not supported (supported: BertPreTokenizer, ByteLevel, Split, Whitespace, WhitespaceSplit, Metaspace, "
                  "Punctuation, Digits, Sequence)"));
}

}  // namespace rlx::text
