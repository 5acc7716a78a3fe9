#include "util/log.h"

#include <cstdio>
#include <mutex>

namespace rlx {

void log_line(const std::string& line) {
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  std::fprintf(stderr, "rlx: %s\n", line.c_str());
}

}  // namespace rlx
