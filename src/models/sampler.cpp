#include "models/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::models {

Sampler::Sampler(const SamplingOptions& o) : o_(o), rng_(o.seed) {
  auto bad = [](const std::string& m) { throw Error(ErrorKind::invalid_argument, m); };
  if (!(o.temperature >= 0)) bad(cat("temperature must be ≥ 0, got ", o.temperature));
  if (o.top_k < 0) bad(cat("top-k must be ≥ 0, got ", o.top_k));
  if (!(o.top_p > 0 && o.top_p <= 1)) bad(cat("top-p must be in (0, 1], got ", o.top_p));
  if (!(o.min_p >= 0 && o.min_p <= 1)) bad(cat("min-p must be in [0, 1], got ", o.min_p));
  if (!(o.repetition_penalty > 0)) bad(cat("the repetition penalty must be > 0, got ", o.repetition_penalty));
}

int32_t Sampler::sample(const float* logits, int64_t vocab, const std::vector<int32_t>& history) {
  scores_.assign(logits, logits + vocab);
  if (o_.repetition_penalty != 1) {
    auto r = static_cast<float>(o_.repetition_penalty);
    for (int32_t id : history) {
      if (id < 0 || id >= vocab) continue;
      float& s = scores_[static_cast<size_t>(id)];
      // Applied once per distinct token: mark done by moving it off the original value.
      if (s != logits[id]) continue;
      s = s < 0 ? s * r : s / r;
    }
  }
  if (o_.temperature == 0) return static_cast<int32_t>(std::max_element(scores_.begin(), scores_.end()) - scores_.begin());
  auto t = static_cast<float>(o_.temperature);
  for (float& s : scores_) s /= t;
  // Candidates by descending score; only as many as top-k needs get sorted.
  order_.resize(static_cast<size_t>(vocab));
  for (int64_t i = 0; i < vocab; ++i) order_[static_cast<size_t>(i)] = static_cast<int32_t>(i);
  int64_t k = o_.top_k > 0 ? std::min(o_.top_k, vocab) : vocab;
  auto by_score = [&](int32_t a, int32_t b) { return scores_[static_cast<size_t>(a)] > scores_[static_cast<size_t>(b)]; };
  std::partial_sort(order_.begin(), order_.begin() + k, order_.end(), by_score);
  order_.resize(static_cast<size_t>(k));
  // Softmax over the candidates.
  float m = scores_[static_cast<size_t>(order_[0])];
  std::vector<double> p(order_.size());
  double sum = 0;
  for (size_t i = 0; i < order_.size(); ++i) sum += p[i] = std::exp(static_cast<double>(scores_[static_cast<size_t>(order_[i])] - m));
  for (double& x : p) x /= sum;
  // top-p: the smallest prefix whose mass reaches top_p (at least one token).
  size_t keep = p.size();
  if (o_.top_p < 1) {
    double c = 0;
    for (size_t i = 0; i < p.size(); ++i) {
      c += p[i];
      if (c >= o_.top_p) {
        keep = i + 1;
        break;
      }
    }
  }
  // min-p: relative to the most likely token.
  if (o_.min_p > 0) {
    size_t n = 1;
    while (n < keep && p[n] >= o_.min_p * p[0]) ++n;
    keep = n;
  }
  double mass = 0;
  for (size_t i = 0; i < keep; ++i) mass += p[i];
  double u = std::uniform_real_distribution<double>(0.0, mass)(rng_);
  for (size_t i = 0; i < keep; ++i) {
    u -= p[i];
    if (u < 0) return order_[i];
  }
  return order_[keep - 1];
}

}  // namespace rlx::models
