// The scale factors of the discrete Fourier transforms (numpy.fft's `norm`), shared by every
// device so that each transform means the same thing everywhere.
#pragma once
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace rlx::ops {

// The factor a transform of N points multiplies its sums by.
inline double fft_scale(const std::string& norm, bool inverse, double n) {
  if (norm == "ortho") return 1.0 / std::sqrt(n);
  if (norm == "forward") return inverse ? 1.0 : 1.0 / n;
  return inverse ? 1.0 / n : 1.0;  // backward
}

// The norm whose transform in the other direction is this one's adjoint.
inline const char* fft_dual_norm(const std::string& norm) {
  return norm == "backward" ? "forward" : norm == "forward" ? "backward" : "ortho";
}

// N: the product of the lengths along `axes` (normalized) — what the norms divide by.
inline double fft_points(const std::vector<int64_t>& shape, const std::vector<int64_t>& axes) {
  double n = 1;
  for (int64_t a : axes) n *= static_cast<double>(shape[static_cast<size_t>(a)]);
  return n;
}

// n/2 + 1: the bins an rfft of n points keeps.
inline int64_t rfft_bins(int64_t n) { return n / 2 + 1; }

}  // namespace rlx::ops
