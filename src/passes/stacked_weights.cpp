#include "passes/stacked_weights.h"

#include <cstring>
#include <map>
#include <memory>
#include <mutex>

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::passes {

Tensor stacked_rows(const std::vector<Tensor>& parts, int64_t row_bytes) {
  static std::mutex mu;
  static std::map<std::vector<std::pair<const void*, size_t>>, std::weak_ptr<Tensor>> cache;
  std::vector<Tensor> dense;
  std::vector<std::pair<const void*, size_t>> key;
  int64_t bytes = 0;
  for (const Tensor& p : parts) {
    dense.push_back(p.contiguous());
    key.emplace_back(dense.back().data(), dense.back().nbytes());
    bytes += static_cast<int64_t>(dense.back().nbytes());
  }
  if (row_bytes <= 0 || bytes % row_bytes)
    throw Error(ErrorKind::internal, cat("stacking weights of ", bytes, " bytes in rows of ", row_bytes));
  int64_t rows = bytes / row_bytes;
  std::lock_guard<std::mutex> lock(mu);
  std::shared_ptr<Tensor> owner;
  if (auto it = cache.find(key); it != cache.end()) owner = it->second.lock();
  if (!owner) {
    owner = std::make_shared<Tensor>(Tensor::zeros(DType::u8, {rows, row_bytes}));
    auto* at = static_cast<uint8_t*>(owner->data());
    for (const Tensor& d : dense) {
      std::memcpy(at, d.data(), d.nbytes());
      at += d.nbytes();
    }
    for (auto it = cache.begin(); it != cache.end();) it = it->second.expired() ? cache.erase(it) : std::next(it);
    cache[key] = owner;
  }
  return Tensor::wrap(DType::u8, {rows, row_bytes}, owner->data(), owner);
}

}  // namespace rlx::passes
