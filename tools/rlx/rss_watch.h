// The resident set of this process sampled every 500 ms for a soak's duration: its value once
// warm (after a tenth of the time, at least 5 s when there is room) and its peak after that.
// Shared by `rlx bench soak` and `rlx bench serve-soak`.
#pragma once
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "json.h"
#include "util/strings.h"

namespace rlx::cli {

struct RssWatch {
  size_t warm = 0, peak_after = 0;
  std::vector<std::string> samples;  // "[seconds,bytes]"

  static size_t resident_bytes() {
    std::ifstream f("/proc/self/statm");
    size_t pages = 0, resident = 0;
    f >> pages >> resident;
    return resident * static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  }

  // Blocks for `seconds`, sampling.
  void run(double seconds) {
    const auto start = std::chrono::steady_clock::now();
    const double warm_at = std::max(seconds * 0.1, std::min(5.0, seconds / 2));
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      double at = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      size_t rss = resident_bytes();
      samples.push_back(cat("[", format_double(at), ",", rss, "]"));
      if (at >= warm_at && warm == 0) warm = rss;
      if (warm) peak_after = std::max(peak_after, rss);
      if (at >= seconds) break;
    }
  }

  // Peak after warm-up over the warm value, minus one (0 when never warm).
  double growth() const { return warm ? static_cast<double>(peak_after) / static_cast<double>(warm) - 1 : 0; }
};

}  // namespace rlx::cli
