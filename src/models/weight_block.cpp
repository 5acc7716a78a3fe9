#include "models/weight_block.h"

#include <cstring>

#include "util/flags.h"
#include "util/host_memory.h"

namespace rlx::models {

void copy_weights_to_one_block(std::map<std::string, Tensor>& weights, const std::string& what) {
  if (flags().RLX_MMAP_WEIGHTS) return;
  size_t total = 0;
  for (auto& [name, t] : weights) total += (t.nbytes() + 63) / 64 * 64;
  if (total == 0) return;
  std::shared_ptr<void> block = host_alloc(total, false, what.c_str());
  size_t used = 0;
  for (auto& [name, t] : weights) {
    Tensor c = t.contiguous();
    auto* dst = static_cast<uint8_t*>(block.get()) + used;
    std::memcpy(dst, c.data(), c.nbytes());
    used += (c.nbytes() + 63) / 64 * 64;
    t = Tensor::wrap(c.dtype(), c.shape(), dst, block);
  }
}

}  // namespace rlx::models
