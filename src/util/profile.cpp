#include "util/profile.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <mutex>
#include <vector>

namespace rlx {

namespace {

struct Totals {
  std::mutex mu;
  std::map<std::string, std::map<std::string, std::pair<double, long>>> by_device;  // label → ms, runs
  ~Totals() {
    for (const auto& [device, labels] : by_device) {
      std::vector<std::pair<std::string, std::pair<double, long>>> rows(labels.begin(), labels.end());
      std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
      double total = 0;
      for (const auto& r : rows) total += r.second.first;
      std::fprintf(stderr, "%s profile: %.3f ms of kernels in all\n%10s %6s %9s %12s  %s\n", device.c_str(), total, "ms", "%", "runs", "us/run", "op");
      for (const auto& [label, v] : rows)
        std::fprintf(stderr, "%10.3f %6.1f %9ld %12.2f  %s\n", v.first, 100 * v.first / total, v.second, 1000 * v.first / static_cast<double>(v.second),
                     label.c_str());
    }
  }
};

Totals& totals() {
  static Totals t;
  return t;
}

}  // namespace

void profile_add(const char* device, const std::string& label, double ms) {
  Totals& t = totals();
  std::lock_guard<std::mutex> lock(t.mu);
  auto& v = t.by_device[device][label];
  v.first += ms;
  ++v.second;
}

}  // namespace rlx
