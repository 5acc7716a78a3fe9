#include "util/host_memory.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>

#include "rlx/error.h"
#include "util/flags.h"
#include "util/strings.h"

namespace rlx {

namespace {
constexpr size_t kHugePage = size_t{2} << 20;
std::atomic<size_t> g_in_use{0};

std::atomic<size_t>& limit_bytes() {
  static std::atomic<size_t> limit{flags().RLX_MEMORY_LIMIT.empty() ? 0 : parse_byte_size(flags().RLX_MEMORY_LIMIT, "RLX_MEMORY_LIMIT")};
  return limit;
}
}  // namespace

size_t memory_limit() { return limit_bytes().load(); }
void set_memory_limit(size_t bytes) { limit_bytes().store(bytes); }
size_t host_bytes_in_use() { return g_in_use.load(); }

size_t parse_byte_size(const std::string& text, const char* what) {
  size_t pos = 0;
  double v = 0;
  try {
    v = std::stod(text, &pos);
  } catch (const std::exception&) {
    pos = 0;
  }
  std::string unit = text.substr(pos);
  double scale = unit.empty() || unit == "B" ? 1 : unit == "K" || unit == "KB" || unit == "KiB" ? 1024.0 : unit == "M" || unit == "MB" || unit == "MiB" ? 1048576.0
                 : unit == "G" || unit == "GB" || unit == "GiB" ? 1073741824.0 : unit == "T" || unit == "TB" || unit == "TiB" ? 1099511627776.0 : -1;
  if (pos == 0 || scale < 0 || !(v >= 0) || v * scale > 1.8e19)
    throw Error(ErrorKind::invalid_argument, cat(what, ": '", text, "' is not a size (8G, 512M, 64K or a byte count)"));
  return static_cast<size_t>(v * scale);
}

std::string byte_size_text(size_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, u ? "%.2f %s" : "%.0f %s", v, units[u]);
  return buf;
}

void check_memory_limit(size_t bytes, const std::string& what, const std::string& advice) {
  size_t limit = memory_limit(), used = host_bytes_in_use();
  if (!limit || used + bytes <= limit) return;
  throw Error(ErrorKind::out_of_memory, cat(what, " needs ", byte_size_text(bytes), " with ", byte_size_text(used), " already in use; the memory limit (RLX_MEMORY_LIMIT, --memory-limit) is ",
                                            byte_size_text(limit), " — ", byte_size_text(limit > used ? limit - used : 0), " would fit", advice.empty() ? "" : cat("; ", advice)));
}

std::shared_ptr<void> host_alloc(size_t bytes, bool zero, const char* what) {
  size_t padded = bytes == 0 ? 64 : (bytes + 63) / 64 * 64;
  // A block of a huge page or more starts on a huge-page boundary, so every whole 2 MiB of it
  // can be one (a 2.1 MB weight matrix gets one huge page and 4 KiB pages for the rest; the
  // alignment costs address space, not memory).
  check_memory_limit(padded, cat("allocating ", what), "");
  bool huge = padded >= kHugePage;
  // posix_memalign: aligned_alloc would also require the size to be a multiple of the alignment
  void* p = nullptr;
  if (::posix_memalign(&p, huge ? kHugePage : 64, padded) != 0) p = nullptr;
  if (!p) throw Error(ErrorKind::out_of_memory, cat("could not allocate ", bytes, " bytes for ", what));
  // Advice only: a kernel without THP (or with it off) keeps 4 KiB pages and runs the same.
  if (huge) ::madvise(p, (padded + 4095) / 4096 * 4096, MADV_HUGEPAGE);
  // The padding is zeroed either way: vector loops may read it, and must find no garbage.
  if (zero) std::memset(p, 0, padded);
  else std::memset(static_cast<uint8_t*>(p) + bytes, 0, padded - bytes);
  g_in_use += padded;
  return std::shared_ptr<void>(p, [padded](void* q) {
    g_in_use -= padded;
    std::free(q);
  });
}

}  // namespace rlx
