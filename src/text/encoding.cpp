#include "text/encoding.h"

#include <algorithm>

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::text {

void Encoding::push(int32_t id, std::string token, int32_t type_id, bool special) {
  ids.push_back(id);
  tokens.push_back(std::move(token));
  type_ids.push_back(type_id);
  attention_mask.push_back(1);
  special_tokens_mask.push_back(special ? 1 : 0);
}

void Encoding::append(const Encoding& o) {
  ids.insert(ids.end(), o.ids.begin(), o.ids.end());
  tokens.insert(tokens.end(), o.tokens.begin(), o.tokens.end());
  type_ids.insert(type_ids.end(), o.type_ids.begin(), o.type_ids.end());
  attention_mask.insert(attention_mask.end(), o.attention_mask.begin(), o.attention_mask.end());
  special_tokens_mask.insert(special_tokens_mask.end(), o.special_tokens_mask.begin(), o.special_tokens_mask.end());
}

namespace {

template <class T>
void keep(std::vector<T>& v, size_t length, Direction d) {
  if (v.size() <= length) return;
  if (d == Direction::right)
    v.resize(length);
  else
    v.erase(v.begin(), v.end() - static_cast<ptrdiff_t>(length));
}

template <class T>
void pad(std::vector<T>& v, size_t length, const T& value, Direction d) {
  if (v.size() >= length) return;
  if (d == Direction::right)
    v.resize(length, value);
  else
    v.insert(v.begin(), length - v.size(), value);
}

}  // namespace

void truncate_encoding(Encoding& e, size_t length, Direction d) {
  keep(e.ids, length, d);
  keep(e.tokens, length, d);
  keep(e.type_ids, length, d);
  keep(e.attention_mask, length, d);
  keep(e.special_tokens_mask, length, d);
}

void truncate_encodings(Encoding& a, Encoding* b, size_t max_length, const TruncationOptions& o) {
  size_t total = a.size() + (b ? b->size() : 0);
  if (total <= max_length) return;
  size_t to_remove = total - max_length;
  if (o.strategy == TruncationStrategy::longest_first) {
    if (!b) {
      truncate_encoding(a, max_length, o.direction);
      return;
    }
    // The shorter sequence keeps its length when the longer can absorb the cut; otherwise both
    // get half of max_length (the longer one the odd token).
    size_t n1 = a.size(), n2 = b->size();
    bool swap = n1 > n2;
    if (swap) std::swap(n1, n2);
    n2 = n1 > max_length ? n1 : std::max(n1, max_length - n1);
    if (n1 + n2 > max_length) {
      n1 = max_length / 2;
      n2 = n1 + max_length % 2;
    }
    if (swap) std::swap(n1, n2);
    truncate_encoding(a, n1, o.direction);
    truncate_encoding(*b, n2, o.direction);
    return;
  }
  Encoding* target = o.strategy == TruncationStrategy::only_first ? &a : b;
  if (!target) throw Error(ErrorKind::invalid_argument, "truncation only_second needs a second sequence");
  if (target->size() <= to_remove)
    throw Error(ErrorKind::invalid_argument,
                cat("cannot truncate to max_length ", max_length, ": the sequence to cut has ", target->size(),
                    " tokens but ", to_remove, " must go"));
  truncate_encoding(*target, target->size() - to_remove, o.direction);
}

void pad_encodings(std::vector<Encoding>& encodings, const PaddingOptions& o) {
  if (encodings.empty()) return;
  size_t length = 0;
  if (o.length) {
    length = *o.length;
  } else {
    for (const auto& e : encodings) length = std::max(length, e.size());
  }
  if (o.pad_to_multiple_of > 0 && length % o.pad_to_multiple_of)
    length += o.pad_to_multiple_of - length % o.pad_to_multiple_of;
  for (auto& e : encodings) {
    pad(e.ids, length, o.pad_id, o.direction);
    pad(e.tokens, length, o.pad_token, o.direction);
    pad(e.type_ids, length, o.pad_type_id, o.direction);
    pad(e.attention_mask, length, 0, o.direction);
    pad(e.special_tokens_mask, length, 1, o.direction);
  }
}

}  // namespace rlx::text
