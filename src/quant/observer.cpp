#include "quant/observer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <array>

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::quant {

namespace {

constexpr int kBins = 2048;

int64_t code_of(double x, const QParams& q) {
  double c = std::nearbyint(x / q.scale) + static_cast<double>(q.zero_point);
  return static_cast<int64_t>(std::clamp(c, -128.0, 127.0));
}

double dequant(int64_t c, const QParams& q) { return static_cast<double>(c - q.zero_point) * q.scale; }

}  // namespace

ObserverKind observer_kind(const std::string& name) {
  if (name == "minmax") return ObserverKind::minmax;
  if (name == "percentile") return ObserverKind::percentile;
  if (name == "mse") return ObserverKind::mse;
  if (name == "entropy") return ObserverKind::entropy;
  throw Error(ErrorKind::invalid_argument, cat("unknown observer '", name, "' (choose minmax, percentile, mse or entropy)"));
}

const char* observer_name(ObserverKind k) {
  switch (k) {
    case ObserverKind::minmax: return "minmax";
    case ObserverKind::percentile: return "percentile";
    case ObserverKind::mse: return "mse";
    case ObserverKind::entropy: return "entropy";
  }
  return "?";
}

QParams int8_qparams(double lo, double hi) {
  lo = std::min(lo, 0.0);
  hi = std::max(hi, 0.0);
  QParams q;
  if (hi - lo <= 0 || !std::isfinite(hi - lo)) return q;  // all zeros: any scale represents them
  q.scale = (hi - lo) / 255.0;
  // the code of 0, rounded onto the grid: then 0 is exact and [lo, hi] shifts by under a step
  q.zero_point = static_cast<int64_t>(std::clamp(std::nearbyint(-128.0 - lo / q.scale), -128.0, 127.0));
  return q;
}

void Observer::observe(const float* v, int64_t n) {
  if (!extent_done_) {
    for (int64_t i = 0; i < n; ++i) {
      double x = v[i];
      if (!std::isfinite(x)) continue;
      if (!seen_) min_ = max_ = x, seen_ = true;
      min_ = std::min(min_, x);
      max_ = std::max(max_, x);
    }
    return;
  }
  if (hist_.empty()) hist_.assign(kBins, 0.0);
  double width = (max_ - min_) / kBins;
  if (width <= 0) return;
  for (int64_t i = 0; i < n; ++i) {
    double x = v[i];
    if (!std::isfinite(x)) continue;
    auto b = static_cast<int64_t>((x - min_) / width);
    hist_[static_cast<size_t>(std::clamp<int64_t>(b, 0, kBins - 1))] += 1;
  }
}

void Observer::finish_pass() {
  if (!extent_done_) {
    extent_done_ = true;
    min_ = std::min(min_, 0.0);
    max_ = std::max(max_, 0.0);
  }
}

std::pair<double, double> Observer::range() const {
  if (!seen_) throw Error(ErrorKind::invalid_argument, "the calibration data produced no finite values for a tensor to observe");
  double lo = std::min(min_, 0.0), hi = std::max(max_, 0.0);
  if (kind_ == ObserverKind::minmax || hist_.empty() || hi <= lo) return {lo, hi};
  double width = (hi - lo) / kBins, total = 0;
  for (double c : hist_) total += c;
  auto center = [&](int b) { return lo + (b + 0.5) * width; };
  if (kind_ == ObserverKind::percentile) {
    // the tails beyond the percentile, split between the two ends by where the mass is
    double tail = total * (100.0 - percentile_) / 100.0, acc = 0;
    int low = 0, high = kBins - 1;
    if (lo < 0) {
      for (acc = 0; low < kBins && acc + hist_[static_cast<size_t>(low)] <= tail / 2; ++low) acc += hist_[static_cast<size_t>(low)];
    }
    for (acc = 0; high > 0 && acc + hist_[static_cast<size_t>(high)] <= (lo < 0 ? tail / 2 : tail); --high) acc += hist_[static_cast<size_t>(high)];
    return {lo < 0 ? lo + low * width : lo, lo + (high + 1) * width};
  }
  // mse and entropy: each end shrunk toward 0 by its own factor, the best pair of a sweep (one
  // factor when an end is 0, as after a ReLU)
  auto cost_of = [&](double a, double z) {
    QParams q = int8_qparams(a, z);
    double cost = 0;
    if (kind_ == ObserverKind::mse) {
      for (int b = 0; b < kBins; ++b) {
        double h = hist_[static_cast<size_t>(b)];
        if (h == 0) continue;
        double x = center(b), e = x - dequant(code_of(x, q), q);
        cost += h * e * e;
      }
      return cost;
    }
    // P: the histogram with everything outside [a, z] piled on its edge bins; Q: the clipped
    // histogram *without* that pile, its mass per 8-bit code spread evenly over the code's
    // non-empty bins — so the clipped mass costs what it moves (as TensorRT's calibrator)
    int first = std::clamp(static_cast<int>((a - lo) / width), 0, kBins - 1);
    int last = std::clamp(static_cast<int>(std::ceil((z - lo) / width)) - 1, first, kBins - 1);
    std::vector<double> p(hist_.begin() + first, hist_.begin() + last + 1);
    for (int b = 0; b < first; ++b) p.front() += hist_[static_cast<size_t>(b)];
    for (int b = last + 1; b < kBins; ++b) p.back() += hist_[static_cast<size_t>(b)];
    std::array<double, 256> mass{};
    std::array<int, 256> bins{};
    double q_total = 0;
    for (int b = first; b <= last; ++b) {
      double h = hist_[static_cast<size_t>(b)];
      if (h == 0) continue;
      size_t c = static_cast<size_t>(code_of(center(b), q) + 128);
      mass[c] += h;
      bins[c] += 1;
      q_total += h;
    }
    for (int b = first; b <= last; ++b) {
      double pb = p[static_cast<size_t>(b - first)] / total;
      if (pb == 0) continue;
      double qb = 0;
      if (hist_[static_cast<size_t>(b)] > 0) {
        size_t c = static_cast<size_t>(code_of(center(b), q) + 128);
        qb = mass[c] / bins[c] / std::max(q_total, 1.0);
      }
      cost += pb * std::log(pb / std::max(qb, 1e-9));  // a pile where Q has nothing: heavily, not infinitely, penalized
    }
    return cost;
  };
  const int steps = lo < 0 && hi > 0 ? 40 : 100;
  const double step = 0.75 / steps;  // factors 1 … 0.25
  double best = std::numeric_limits<double>::infinity(), best_lo = lo, best_hi = hi;
  for (int i = 0; i < (lo < 0 ? steps : 1); ++i)
    for (int j = 0; j < (hi > 0 ? steps : 1); ++j) {
      double a = lo * (1 - i * step), z = hi * (1 - j * step);
      double c = cost_of(a, z);
      if (c < best) best = c, best_lo = a, best_hi = z;
    }
  return {best_lo, best_hi};
}

}  // namespace rlx::quant
