// How far a quantized model's predictions are from the full-precision model's, the way
// llama.cpp's perplexity tool measures a quantization (--kl-divergence): at each position of an
// evaluation text, the KL divergence of the quantized next-token distribution from the
// reference's, whether both pick the same most likely token, and each model's probability of
// the token that really comes next (its perplexity).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace rlx::quant {

struct Comparison {
  size_t positions = 0;
  double kld_mean = 0, kld_median = 0, kld_p99 = 0, kld_max = 0;  // nats
  double top1 = 0;                                                // fraction of positions agreeing
  double ppl_reference = 0, ppl_test = 0;                         // 0 where no next token was given
  std::vector<double> kld;                                        // by position
};

class LogitComparer {
 public:
  // One position: the two models' logits over `vocab` tokens; `next` the token that follows
  // in the text (-1: none, as after its last token).
  void add(const float* reference, const float* test, int64_t vocab, int32_t next = -1);
  Comparison result() const;

 private:
  std::vector<double> kld_;
  size_t agree_ = 0, scored_ = 0;
  double nll_ref_ = 0, nll_test_ = 0;
};

// A quality gate: limits on a Comparison, parsed from "kld=0.002,top1=0.99" (kld: the mean;
// kld_p99; top1: the agreement, a fraction or a percentage above 1; ppl: the largest ratio of
// the test perplexity to the reference's). Throws rlx::Error(invalid_argument) naming what it
// cannot read.
struct Gate {
  double kld = -1, kld_p99 = -1, top1 = -1, ppl = -1;  // < 0: not limited
  double accuracy = -1;  // classifiers: the most test accuracy may drop, in percentage points
  static Gate parse(const std::string& text);
  bool empty() const { return kld < 0 && kld_p99 < 0 && top1 < 0 && ppl < 0 && accuracy < 0; }
  // One sentence per limit the comparison breaks ("mean KLD 0.0041 > 0.002"); empty: it passes.
  std::vector<std::string> failures(const Comparison& c) const;
  // The same for a classifier's accuracies (fractions in [0, 1]).
  std::vector<std::string> accuracy_failures(double reference, double quantized) const;
  std::string str() const;
};

}  // namespace rlx::quant
