// Prometheus text exposition for `rlx serve`'s /metrics: counters, gauges and histograms with
// fixed buckets, safe to update from any thread.
#pragma once
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace rlx::serve {

class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}
  void observe(double v);
  // The series of `name` in the exposition format (_bucket{le=…}, _sum, _count).
  std::string text(const std::string& name, const std::string& help) const;

 private:
  mutable std::mutex mu_;
  std::vector<double> bounds_;
  std::vector<uint64_t> counts_;
  double sum_ = 0;
  uint64_t count_ = 0;
};

class Metrics {
 public:
  Metrics();
  void request(const std::string& endpoint, int status);
  Histogram time_to_first_token, inter_token_latency, request_duration;
  // Counters by label set, then every histogram, then the gauges given (name → value).
  std::string text(const std::vector<std::pair<std::string, double>>& gauges, int64_t prompt_tokens, int64_t generated_tokens) const;

 private:
  mutable std::mutex mu_;
  std::map<std::pair<std::string, int>, uint64_t> requests_;
};

}  // namespace rlx::serve
