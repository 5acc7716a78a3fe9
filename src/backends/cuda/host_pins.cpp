#include "backends/cuda/host_pins.h"

#include <cuda_runtime_api.h>

#include <map>
#include <mutex>

namespace rlx::backends::cuda {

namespace {

constexpr size_t kMinBytes = size_t{64} << 10;  // below this the copy costs about the same either way
constexpr size_t kBudget = size_t{2} << 30;     // page-locked bytes at most

struct Entry {
  Tensor keep;  // holds the memory while it is registered
  size_t bytes = 0;
  bool pinned = false;
  uint64_t last_use = 0;
};

struct Registry {
  std::mutex mu;
  std::map<const void*, Entry> entries;
  size_t pinned_bytes = 0;
  uint64_t clock = 0;

  void evict_one() {
    auto victim = entries.end();
    for (auto it = entries.begin(); it != entries.end(); ++it)
      if (victim == entries.end() || it->second.last_use < victim->second.last_use) victim = it;
    if (victim == entries.end()) return;
    if (victim->second.pinned) {
      cudaHostUnregister(const_cast<void*>(victim->first));
      pinned_bytes -= victim->second.bytes;
    }
    entries.erase(victim);
  }
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: unregistering at exit would race CUDA's teardown
  return *r;
}

}  // namespace

bool pin_host_tensor(const Tensor& t) {
  size_t bytes = t.nbytes();
  if (bytes < kMinBytes || !t.is_contiguous()) return false;
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  const void* p = t.data();
  auto it = r.entries.find(p);
  if (it != r.entries.end() && it->second.bytes == bytes) {
    Entry& e = it->second;
    e.last_use = ++r.clock;
    if (e.pinned) return true;
    // seen before: pin it now (the reference we keep stops the memory from going away)
    while (r.pinned_bytes + bytes > kBudget && r.entries.size() > 1) r.evict_one();
    if (r.pinned_bytes + bytes > kBudget) return false;
    if (cudaHostRegister(const_cast<void*>(p), bytes, cudaHostRegisterDefault) != cudaSuccess) {
      cudaGetLastError();  // overlapping another registration, say: the pageable path works too
      r.entries.erase(it);
      return false;
    }
    e.keep = t;
    e.pinned = true;
    r.pinned_bytes += bytes;
    return true;
  }
  if (it != r.entries.end()) r.entries.erase(it);  // same address, other size: a different tensor now
  if (r.entries.size() >= 4096) r.evict_one();
  r.entries[p] = Entry{Tensor(), bytes, false, ++r.clock};  // first sighting: remembered, not held
  return false;
}

}  // namespace rlx::backends::cuda
