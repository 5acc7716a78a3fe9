// Host memory for tensors and arenas: 64-byte aligned (aligned vector loads), and large blocks
// on transparent huge pages where the kernel offers them (madvise mode): decode streams the
// whole weight set every token, and 2 MiB pages spare it a TLB miss every 4 KiB (+10-15% read
// bandwidth measured on the 2-core dev machine).
#pragma once
#include <cstddef>
#include <memory>
#include <string>

namespace rlx {

// `bytes` (rounded up to 64) of uninitialized memory, or of zeros when `zero` (the rounding's
// padding is always zeroed); throws
// out_of_memory naming `what` when the allocation fails.
std::shared_ptr<void> host_alloc(size_t bytes, bool zero, const char* what);

// ---- the memory limit (RLX_MEMORY_LIMIT, `rlx … --memory-limit`): host_alloc refuses an
// allocation that would take the bytes live in host_alloc blocks over it, with an error saying
// how much was asked, how much is in use and what the limit is — instead of the OOM killer.
// 0 = no limit. Memory-mapped weight files are not allocations and do not count.
size_t memory_limit();
void set_memory_limit(size_t bytes);
size_t host_bytes_in_use();
// "8G", "512M", "64K", "1.5G" or a byte count; throws invalid_argument naming `what` otherwise.
size_t parse_byte_size(const std::string& text, const char* what);
// "1.50 GiB", "12.0 MiB", "512 B".
std::string byte_size_text(size_t bytes);
// Throws out_of_memory when `bytes` more would exceed the limit: "<what> needs …; <advice>".
void check_memory_limit(size_t bytes, const std::string& what, const std::string& advice);

}  // namespace rlx
