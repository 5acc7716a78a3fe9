// A one-line progress bar on stderr, redrawn in place when stderr is a terminal and printed
// every few seconds otherwise (CI logs).
#pragma once
#include <chrono>
#include <cstdio>
#include <string>

#include <unistd.h>

namespace rlx::cli {

class Progress {
 public:
  Progress(std::string label, int64_t total, bool enabled)
      : label_(std::move(label)), total_(total), enabled_(enabled), tty_(isatty(2)), start_(clock::now()), last_(start_) {}
  void update(int64_t done, const std::string& status) {
    if (!enabled_) return;
    auto now = clock::now();
    double since = std::chrono::duration<double>(now - last_).count();
    if (done < total_ && since < (tty_ ? 0.1 : 5.0)) return;
    last_ = now;
    double elapsed = std::chrono::duration<double>(now - start_).count();
    double eta = done > 0 ? elapsed * static_cast<double>(total_ - done) / static_cast<double>(done) : 0;
    const int width = 28;
    int filled = total_ ? static_cast<int>(width * done / total_) : width;
    std::string bar(static_cast<size_t>(filled), '=');
    if (filled < width) bar += '>' + std::string(static_cast<size_t>(width - filled - 1), ' ');
    std::fprintf(stderr, "%s%s [%s] %3d%% %s ETA %.0fs%s", tty_ ? "\r" : "", label_.c_str(), bar.c_str(),
                 total_ ? static_cast<int>(100 * done / total_) : 100, status.c_str(), eta, tty_ ? "\x1b[K" : "\n");
    std::fflush(stderr);
  }
  void finish() {
    if (enabled_ && tty_) std::fprintf(stderr, "\n");
  }

 private:
  using clock = std::chrono::steady_clock;
  std::string label_;
  int64_t total_;
  bool enabled_, tty_;
  clock::time_point start_, last_;
};

}  // namespace rlx::cli
