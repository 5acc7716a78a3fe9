#include "backends/cuda/constants.h"

#include <map>
#include <mutex>

namespace rlx::backends::cuda {

DeviceConstant::DeviceConstant(const Tensor& t) : host(t), buffer(t.nbytes(), "a constant") {
  if (t.nbytes()) check(cudaMemcpy(buffer.data(), t.data(), t.nbytes(), cudaMemcpyHostToDevice), "uploading a constant");
}

std::shared_ptr<DeviceConstant> device_constant(const Tensor& t) {
  static std::mutex mu;
  static std::map<std::pair<const void*, size_t>, std::weak_ptr<DeviceConstant>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto key = std::make_pair(static_cast<const void*>(t.data()), t.nbytes());
  if (auto it = cache.find(key); it != cache.end())
    if (auto c = it->second.lock()) return c;
  // drop expired entries now and then so the map stays as small as the live uploads
  if (cache.size() > 1024)
    for (auto it = cache.begin(); it != cache.end();) it = it->second.expired() ? cache.erase(it) : std::next(it);
  auto c = std::make_shared<DeviceConstant>(t);
  cache[key] = c;
  return c;
}

}  // namespace rlx::backends::cuda
