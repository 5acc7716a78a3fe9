// Host memory for tensors and arenas: 64-byte aligned (aligned vector loads), and large blocks
// on transparent huge pages where the kernel offers them (madvise mode): decode streams the
// whole weight set every token, and 2 MiB pages spare it a TLB miss every 4 KiB (+10-15% read
// bandwidth measured on the 2-core dev machine).
#pragma once
#include <cstddef>
#include <memory>

namespace rlx {

// `bytes` (rounded up to 64) of uninitialized memory, or of zeros when `zero` (the rounding's
// padding is always zeroed); throws
// out_of_memory naming `what` when the allocation fails.
std::shared_ptr<void> host_alloc(size_t bytes, bool zero, const char* what);

}  // namespace rlx
