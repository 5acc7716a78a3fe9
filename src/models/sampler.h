// Next-token selection from logits, as Hugging Face's generate() does it: repetition penalty,
// then (when sampling) temperature, top-k, top-p and min-p, then a draw from a seeded
// generator; greedy (argmax) when the temperature is 0.
#pragma once
#include <cstdint>
#include <random>
#include <vector>

namespace rlx::models {

struct SamplingOptions {
  double temperature = 0;          // 0: greedy
  int64_t top_k = 0;               // 0: all tokens
  double top_p = 1;                // nucleus mass kept
  double min_p = 0;                // drop tokens below min_p × the best token's probability
  double repetition_penalty = 1;   // > 1 discourages tokens already in the sequence
  uint64_t seed = 0;
};

class Sampler {
 public:
  // Throws rlx::Error(invalid_argument) naming an option out of range.
  explicit Sampler(const SamplingOptions& options);
  // `history`: the prompt and the tokens generated so far (for the repetition penalty).
  int32_t sample(const float* logits, int64_t vocab, const std::vector<int32_t>& history);
  const SamplingOptions& options() const { return o_; }

 private:
  SamplingOptions o_;
  std::mt19937_64 rng_;
  std::vector<float> scores_;
  std::vector<int32_t> order_;
};

}  // namespace rlx::models
