#include "serve/metrics.h"

#include <cstdio>

#include "util/strings.h"

namespace rlx::serve {

namespace {
std::string num(double v) {
  char b[40];
  std::snprintf(b, sizeof(b), "%.9g", v);
  return b;
}
const std::vector<double> kLatency = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30};
}  // namespace

void Histogram::observe(double v) {
  std::lock_guard<std::mutex> lock(mu_);
  size_t i = 0;
  while (i < bounds_.size() && v > bounds_[i]) ++i;
  ++counts_[i];
  sum_ += v;
  ++count_;
}

std::string Histogram::text(const std::string& name, const std::string& help) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string s = cat("# HELP ", name, " ", help, "\n# TYPE ", name, " histogram\n");
  uint64_t cum = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    cum += counts_[i];
    s += cat(name, "_bucket{le=\"", num(bounds_[i]), "\"} ", cum, "\n");
  }
  s += cat(name, "_bucket{le=\"+Inf\"} ", count_, "\n", name, "_sum ", num(sum_), "\n", name, "_count ", count_, "\n");
  return s;
}

Metrics::Metrics() : time_to_first_token(kLatency), inter_token_latency(kLatency), request_duration(kLatency) {}

void Metrics::request(const std::string& endpoint, int status) {
  std::lock_guard<std::mutex> lock(mu_);
  ++requests_[{endpoint, status}];
}

std::string Metrics::text(const std::vector<std::pair<std::string, double>>& gauges, int64_t prompt_tokens, int64_t generated_tokens) const {
  std::string s = "# HELP rlx_requests_total HTTP requests by endpoint and status.\n# TYPE rlx_requests_total counter\n";
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [k, v] : requests_) s += cat("rlx_requests_total{endpoint=\"", k.first, "\",status=\"", k.second, "\"} ", v, "\n");
  }
  s += cat("# HELP rlx_prompt_tokens_total Prompt tokens prefilled.\n# TYPE rlx_prompt_tokens_total counter\nrlx_prompt_tokens_total ",
           prompt_tokens, "\n# HELP rlx_generated_tokens_total Tokens generated.\n# TYPE rlx_generated_tokens_total counter\nrlx_generated_tokens_total ",
           generated_tokens, "\n");
  s += time_to_first_token.text("rlx_time_to_first_token_seconds", "From a request's arrival to its first generated token.");
  s += inter_token_latency.text("rlx_inter_token_latency_seconds", "Between consecutive tokens of one sequence.");
  s += request_duration.text("rlx_request_duration_seconds", "From a request's arrival to its last byte.");
  for (const auto& [name, v] : gauges) s += cat("# TYPE ", name, " gauge\n", name, " ", num(v), "\n");
  return s;
}

}  // namespace rlx::serve
