// Page-locked views of host tensors that come back run after run (a trainer's parameters and
// batches, a server's input buffers): copies from and to pinned memory are true DMA at full
// link speed and run asynchronously, where pageable memory is staged through a bounce buffer.
// A tensor is pinned the second time it is seen, and the registry keeps a reference to it, so
// its memory cannot be freed (and reused) while registered; the least recently used
// registrations are dropped beyond a byte budget.
#pragma once
#include "rlx/tensor.h"

namespace rlx::backends::cuda {

// Notes that `t` is about to be copied; true when its bytes are page-locked now.
bool pin_host_tensor(const Tensor& t);

}  // namespace rlx::backends::cuda
