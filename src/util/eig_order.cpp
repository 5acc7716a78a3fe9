#include "util/eig_order.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace rlx {

void canonical_eig(std::complex<double>* w, std::complex<double>* v, int64_t n) {
  using C = std::complex<double>;
  double scale = 1;
  for (int64_t i = 0; i < n; ++i) scale = std::max(scale, std::abs(w[i]));
  double tie = 1e-9 * scale;
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    if (std::fabs(w[a].real() - w[b].real()) > tie) return w[a].real() < w[b].real();
    return w[a].imag() < w[b].imag();
  });
  std::vector<C> ws(w, w + n), vs(v, v + n * n);
  for (int64_t k = 0; k < n; ++k) {
    int64_t from = order[static_cast<size_t>(k)];
    w[k] = ws[static_cast<size_t>(from)];
    double largest = 0, norm = 0;
    for (int64_t i = 0; i < n; ++i) {
      largest = std::max(largest, std::abs(vs[static_cast<size_t>(i * n + from)]));
      norm += std::norm(vs[static_cast<size_t>(i * n + from)]);
    }
    int64_t at = 0;
    while (at < n && std::abs(vs[static_cast<size_t>(at * n + from)]) < largest * (1 - 1e-9)) ++at;
    C pivot = at < n ? vs[static_cast<size_t>(at * n + from)] : C(1);
    // rotate the phase so the pivot is real and positive, and scale to unit length
    C f = std::abs(pivot) > 0 ? std::conj(pivot) / (std::abs(pivot) * std::sqrt(norm)) : C(1);
    for (int64_t i = 0; i < n; ++i) v[i * n + k] = vs[static_cast<size_t>(i * n + from)] * f;
    if (at < n) v[at * n + k] = C(v[at * n + k].real(), 0.0);
  }
}

}  // namespace rlx
