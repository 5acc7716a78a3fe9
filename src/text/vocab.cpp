#include "text/vocab.h"

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::text {

namespace {
// The dense table grows to an id only while that keeps it at most twice the tokens it holds
// (plus this many): real vocabularies number their tokens 0…n−1 with few gaps.
constexpr size_t kDenseSlack = size_t{1} << 16;
}  // namespace

void Vocab::add(std::string token, int32_t id) {
  if (id < 0) throw Error(ErrorKind::format, cat("token '", token, "' has negative id ", id));
  auto [it, inserted] = to_id_.insert_or_assign(std::move(token), id);
  (void)inserted;
  const size_t at = static_cast<size_t>(id);
  if (at >= to_token_.size() && at >= 2 * to_id_.size() + kDenseSlack) {
    sparse_[id] = &it->first;
    return;
  }
  if (at >= to_token_.size()) to_token_.resize(at + 1, nullptr);
  to_token_[at] = &it->first;
}

std::optional<int32_t> Vocab::find(std::string_view token) const {
  auto it = to_id_.find(token);
  if (it == to_id_.end()) return std::nullopt;
  return it->second;
}

const std::string* Vocab::token(int32_t id) const {
  if (id < 0) return nullptr;
  if (static_cast<size_t>(id) < to_token_.size() && to_token_[static_cast<size_t>(id)]) return to_token_[static_cast<size_t>(id)];
  auto it = sparse_.find(id);
  return it == sparse_.end() ? nullptr : it->second;
}

}  // namespace rlx::text
