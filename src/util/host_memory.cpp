#include "util/host_memory.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx {

namespace {
constexpr size_t kHugePage = size_t{2} << 20;
}  // namespace

std::shared_ptr<void> host_alloc(size_t bytes, bool zero, const char* what) {
  size_t padded = bytes == 0 ? 64 : (bytes + 63) / 64 * 64;
  // A block of a huge page or more starts on a huge-page boundary, so every whole 2 MiB of it
  // can be one (a 2.1 MB weight matrix gets one huge page and 4 KiB pages for the rest; the
  // alignment costs address space, not memory).
  bool huge = padded >= kHugePage;
  void* p = std::aligned_alloc(huge ? kHugePage : 64, padded);
  if (!p) throw Error(ErrorKind::out_of_memory, cat("could not allocate ", bytes, " bytes for ", what));
  // Advice only: a kernel without THP (or with it off) keeps 4 KiB pages and runs the same.
  if (huge) ::madvise(p, (padded + 4095) / 4096 * 4096, MADV_HUGEPAGE);
  // The padding is zeroed either way: vector loops may read it, and must find no garbage.
  if (zero) std::memset(p, 0, padded);
  else std::memset(static_cast<uint8_t*>(p) + bytes, 0, padded - bytes);
  return std::shared_ptr<void>(p, [](void* q) { std::free(q); });
}

}  // namespace rlx
