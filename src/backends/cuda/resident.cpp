#include "backends/cuda/resident.h"

#include <atomic>
#include <map>
#include <memory>
#include <mutex>

#include "backends/cuda/device.h"
#include "rlx/error.h"
#include "util/flags.h"

namespace rlx::backends::cuda {

namespace {

struct Entry {
  Tensor keep;  // holds the host memory, so its address is not reused while resident
  std::unique_ptr<DeviceBuffer> buffer;
};

struct Registry {
  std::mutex mu;
  std::map<const void*, Entry> entries;
  std::atomic<size_t> count{0};
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: freeing at exit would race CUDA's teardown
  return *r;
}

}  // namespace

bool make_resident(const Tensor& t) {
  if (!t.defined() || !t.is_contiguous()) throw Error(ErrorKind::invalid_argument, "cuda: only a contiguous tensor can be kept on the device");
  if (!flags().RLX_CUDA_RESIDENT) return false;
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.entries.find(t.data());
  if (it != r.entries.end()) {
    if (it->second.keep.nbytes() == t.nbytes()) return true;
    throw Error(ErrorKind::invalid_argument, "cuda: a tensor overlapping one kept on the device cannot be kept too");
  }
  use_device();
  auto buf = std::make_unique<DeviceBuffer>(t.nbytes(), "a tensor kept on the device");
  if (t.nbytes()) check(cudaMemcpy(buf->data(), t.data(), t.nbytes(), cudaMemcpyHostToDevice), "uploading a tensor kept on the device");
  r.entries[t.data()] = Entry{t, std::move(buf)};
  r.count.store(r.entries.size());
  return true;
}

void release_resident(const Tensor& t, bool copy_back) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.entries.find(t.data());
  if (it == r.entries.end() || it->second.keep.nbytes() != t.nbytes()) return;
  use_device();
  if (copy_back && t.nbytes())
    check(cudaMemcpy(t.data(), it->second.buffer->data(), t.nbytes(), cudaMemcpyDeviceToHost), "copying a tensor kept on the device back");
  r.entries.erase(it);
  r.count.store(r.entries.size());
}

void* resident_ptr(const Tensor& t) {
  Registry& r = registry();
  if (r.count.load(std::memory_order_relaxed) == 0 || !t.defined()) return nullptr;
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.entries.find(t.data());
  if (it == r.entries.end() || it->second.keep.nbytes() != t.nbytes()) return nullptr;
  return it->second.buffer->data();
}

}  // namespace rlx::backends::cuda
