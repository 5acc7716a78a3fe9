// Token ↔ id maps shared by the models.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace rlx::text {

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

class Vocab {
 public:
  // A token seen twice keeps its last id (as a JSON object read by serde would).
  void add(std::string token, int32_t id);
  std::optional<int32_t> find(std::string_view token) const;
  const std::string* token(int32_t id) const;  // nullptr when no token has this id
  size_t size() const { return to_id_.size(); }
  const std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>>& entries() const { return to_id_; }

 private:
  std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>> to_id_;
  std::vector<const std::string*> to_token_;  // by id; points into to_id_'s stable keys
  // ids far past the dense range (a file may name any 32-bit id): kept here, so a stray
  // 2,000,000,000 costs one entry rather than a 16 GB table
  std::unordered_map<int32_t, const std::string*> sparse_;
};

}  // namespace rlx::text
