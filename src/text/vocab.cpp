#include "text/vocab.h"

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::text {

void Vocab::add(std::string token, int32_t id) {
  if (id < 0) throw Error(ErrorKind::format, cat("token '", token, "' has negative id ", id));
  auto [it, inserted] = to_id_.insert_or_assign(std::move(token), id);
  if (static_cast<size_t>(id) >= to_token_.size()) to_token_.resize(static_cast<size_t>(id) + 1, nullptr);
  to_token_[id] = &it->first;
  (void)inserted;
}

std::optional<int32_t> Vocab::find(std::string_view token) const {
  auto it = to_id_.find(token);
  if (it == to_id_.end()) return std::nullopt;
  return it->second;
}

const std::string* Vocab::token(int32_t id) const {
  if (id < 0 || static_cast<size_t>(id) >= to_token_.size()) return nullptr;
  return to_token_[id];
}

}  // namespace rlx::text
