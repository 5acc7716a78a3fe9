// Calibration observers: they watch a tensor's values over calibration batches and choose the
// range [lo, hi] its 8-bit grid covers. min-max keeps every value; the others clip outliers so
// the grid is finer where the values are — percentile (a fixed tail), mse (the range with the least
// expected squared quantization error) and entropy (the least KL divergence between the value
// histogram and its quantized form, as TensorRT's calibrator). The histogram ones see the data
// twice: a first pass finds the extent, a second fills a histogram over it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace rlx::quant {

enum class ObserverKind { minmax, percentile, mse, entropy };
// "minmax" | "percentile" | "mse" | "entropy"; throws rlx::Error naming the choices.
ObserverKind observer_kind(const std::string& name);
const char* observer_name(ObserverKind k);

// An affine 8-bit grid: real = (q − zero_point) · scale, q in [qmin, qmax].
struct QParams {
  double scale = 1;
  int64_t zero_point = 0;
};
// The int8 grid ([−128, 127]) covering [lo, hi] ∪ {0} exactly at 0 (zero needs an exact code:
// padding and ReLU produce it).
QParams int8_qparams(double lo, double hi);

class Observer {
 public:
  explicit Observer(ObserverKind kind, double percentile = 99.99) : kind_(kind), percentile_(percentile) {}
  // Whether observe() wants a second pass over the same batches (the histogram pass).
  bool needs_second_pass() const { return kind_ != ObserverKind::minmax && !extent_done_; }
  // Feeds values: the first pass records the extent; after finish_pass() the second fills the histogram.
  void observe(const float* v, int64_t n);
  void finish_pass();
  // The chosen range; throws rlx::Error when nothing (or only NaN) was observed.
  std::pair<double, double> range() const;

 private:
  ObserverKind kind_;
  double percentile_;
  double min_ = 0, max_ = 0;
  bool seen_ = false, extent_done_ = false;
  std::vector<double> hist_;  // over [min_, max_]
};

}  // namespace rlx::quant
