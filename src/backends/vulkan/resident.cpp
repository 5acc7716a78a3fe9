#include "backends/vulkan/resident.h"

#include <map>
#include <mutex>

#include "rlx/error.h"

namespace rlx::backends::vulkan {

namespace {

struct Entry {
  Tensor keep;  // holds the host memory, so its address is not reused while resident
  Region region;
};

struct Registry {
  std::mutex mu;
  std::map<const void*, Entry> entries;
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: the context may be gone at exit
  return *r;
}

}  // namespace

bool make_resident(const Tensor& t) {
  if (!t.defined() || !t.is_contiguous()) throw Error(ErrorKind::invalid_argument, "vulkan: only a contiguous tensor can be kept on the device");
  if (!t.on_host()) return false;
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.entries.find(t.data());
  if (it != r.entries.end()) {
    if (it->second.keep.nbytes() == t.nbytes()) return true;
    throw Error(ErrorKind::invalid_argument, "vulkan: a tensor overlapping one kept on the device cannot be kept too");
  }
  Context& c = Context::get();
  Region region = c.device_alloc(std::max<size_t>(t.nbytes(), 16));
  c.upload(region, t.data(), t.nbytes());
  r.entries[t.data()] = Entry{t, region};
  return true;
}

void release_resident(const Tensor& t, bool copy_back) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.entries.find(t.data());
  if (it == r.entries.end() || it->second.keep.nbytes() != t.nbytes()) return;
  Context& c = Context::get();
  if (copy_back && t.nbytes()) c.download(it->second.region, t.data(), t.nbytes());
  c.device_free(it->second.region);
  r.entries.erase(it);
}

std::optional<Region> resident_region(const Tensor& t) {
  if (!t.defined() || !t.on_host()) return std::nullopt;
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.entries.find(t.data());
  if (it == r.entries.end() || it->second.keep.nbytes() != t.nbytes()) return std::nullopt;
  return it->second.region;
}

}  // namespace rlx::backends::vulkan
