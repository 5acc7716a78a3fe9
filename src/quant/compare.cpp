#include "quant/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::quant {

namespace {

// log-softmax in double: the differences KLD sums are far below f32's resolution of a logit
void log_softmax(const float* x, int64_t n, std::vector<double>& out) {
  out.resize(static_cast<size_t>(n));
  double m = -INFINITY;
  for (int64_t i = 0; i < n; ++i) m = std::max(m, static_cast<double>(x[i]));
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += std::exp(static_cast<double>(x[i]) - m);
  const double lse = m + std::log(s);
  for (int64_t i = 0; i < n; ++i) out[static_cast<size_t>(i)] = static_cast<double>(x[i]) - lse;
}

int64_t argmax(const float* x, int64_t n) {
  int64_t best = 0;
  for (int64_t i = 1; i < n; ++i)
    if (x[i] > x[best]) best = i;
  return best;
}

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double at = q * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(at);
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (at - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

std::string short_number(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.4g", v);
  return b;
}

}  // namespace

void LogitComparer::add(const float* reference, const float* test, int64_t vocab, int32_t next) {
  if (vocab <= 0) throw Error(ErrorKind::invalid_argument, "compare: an empty vocabulary");
  if (next >= vocab) throw Error(ErrorKind::invalid_argument, cat("compare: next token ", next, " is outside the vocabulary of ", vocab));
  std::vector<double> lp, lq;
  log_softmax(reference, vocab, lp);
  log_softmax(test, vocab, lq);
  double kld = 0;
  for (size_t i = 0; i < lp.size(); ++i) kld += std::exp(lp[i]) * (lp[i] - lq[i]);
  kld_.push_back(std::max(0.0, kld));  // rounding can leave -1e-17
  agree_ += argmax(reference, vocab) == argmax(test, vocab);
  if (next >= 0) {
    nll_ref_ -= lp[static_cast<size_t>(next)];
    nll_test_ -= lq[static_cast<size_t>(next)];
    ++scored_;
  }
}

Comparison LogitComparer::result() const {
  Comparison c;
  c.positions = kld_.size();
  c.kld = kld_;
  if (kld_.empty()) return c;
  double s = 0;
  for (double k : kld_) s += k;
  c.kld_mean = s / static_cast<double>(kld_.size());
  c.kld_median = quantile(kld_, 0.5);
  c.kld_p99 = quantile(kld_, 0.99);
  c.kld_max = *std::max_element(kld_.begin(), kld_.end());
  c.top1 = static_cast<double>(agree_) / static_cast<double>(kld_.size());
  if (scored_) {
    c.ppl_reference = std::exp(nll_ref_ / static_cast<double>(scored_));
    c.ppl_test = std::exp(nll_test_ / static_cast<double>(scored_));
  }
  return c;
}

Gate Gate::parse(const std::string& text) {
  Gate g;
  for (const std::string& item : split(text, ',')) {
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    const std::string key = item.substr(0, eq);
    char* end = nullptr;
    const std::string v = eq == std::string::npos ? "" : item.substr(eq + 1);
    const double x = std::strtod(v.c_str(), &end);
    if (v.empty() || *end || !std::isfinite(x) || x < 0)
      throw Error(ErrorKind::invalid_argument, cat("--gate ", item, ": expected KEY=NUMBER (kld, kld_p99, top1, ppl, accuracy), a number at least 0"));
    if (key == "kld") g.kld = x;
    else if (key == "kld_p99") g.kld_p99 = x;
    else if (key == "top1") g.top1 = x > 1 ? x / 100 : x;
    else if (key == "ppl") g.ppl = x;
    else if (key == "accuracy") g.accuracy = x;
    else throw Error(ErrorKind::invalid_argument, cat("--gate: unknown limit '", key, "' (kld, kld_p99, top1, ppl, accuracy)"));
  }
  if (g.top1 > 1) throw Error(ErrorKind::invalid_argument, "--gate top1: at most 100%");
  return g;
}

std::vector<std::string> Gate::failures(const Comparison& c) const {
  std::vector<std::string> f;
  const auto n = short_number;
  if (kld >= 0 && !(c.kld_mean <= kld)) f.push_back(cat("mean KLD ", n(c.kld_mean), " > ", n(kld)));
  if (kld_p99 >= 0 && !(c.kld_p99 <= kld_p99)) f.push_back(cat("KLD p99 ", n(c.kld_p99), " > ", n(kld_p99)));
  if (top1 >= 0 && !(c.top1 >= top1)) f.push_back(cat("top-1 agreement ", n(100 * c.top1), "% < ", n(100 * top1), "%"));
  if (ppl >= 0 && c.ppl_reference > 0 && !(c.ppl_test <= ppl * c.ppl_reference))
    f.push_back(cat("perplexity ", n(c.ppl_test), " > ", n(ppl), " × the reference's ", n(c.ppl_reference)));
  return f;
}

std::vector<std::string> Gate::accuracy_failures(double reference, double quantized) const {
  std::vector<std::string> f;
  const double drop = 100 * (reference - quantized);
  if (accuracy >= 0 && !(drop <= accuracy))
    f.push_back(cat("test accuracy ", short_number(100 * quantized), "% is ", short_number(drop), " points below the float model's ",
                    short_number(100 * reference), "% (limit ", short_number(accuracy), ")"));
  return f;
}

std::string Gate::str() const {
  std::vector<std::string> s;
  if (kld >= 0) s.push_back(cat("kld=", format_double(kld)));
  if (kld_p99 >= 0) s.push_back(cat("kld_p99=", format_double(kld_p99)));
  if (top1 >= 0) s.push_back(cat("top1=", format_double(top1)));
  if (ppl >= 0) s.push_back(cat("ppl=", format_double(ppl)));
  if (accuracy >= 0) s.push_back(cat("accuracy=", format_double(accuracy)));
  return join(s, ",");
}

}  // namespace rlx::quant
