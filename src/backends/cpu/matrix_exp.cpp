// exp(A) by scaling and squaring with the [13/13] Padé approximant (Higham, SIAM J. Matrix Anal.
// Appl. 26(4), 2005), the scaling chosen from ‖A⁴‖^¼ and ‖A⁶‖^⅙ rather than ‖A‖ (Al-Mohy and
// Higham, 2009: these bound the series' tail as well, and for non-normal matrices they are often
// far smaller, saving squarings). The powers are taken once, unscaled; 2⁻ˢ scales them exactly.
#include <cmath>

#include "backends/cpu/lapack.h"
#include "ops/matrix_exp_pade.h"

namespace rlx::backends::cpu {

using namespace lapack;
using ir::Op;
using ops::kPade13;
using ops::kTheta13;

namespace {

template <class T>
double norm1(const T* a, int64_t n) {
  double best = 0;
  for (int64_t j = 0; j < n; ++j) {
    double col = 0;
    for (int64_t i = 0; i < n; ++i) col += std::fabs(static_cast<double>(a[i * n + j]));
    best = std::max(best, col);
  }
  return best;
}

template <class T>
void expm(int64_t n, const T* a, T* out) {
  size_t nn = static_cast<size_t>(n * n);
  int ni = static_cast<int>(n);
  std::vector<T> a2(nn), a4(nn), a6(nn), t(nn), u(nn), v(nn);
  Routines<T>::gemm(ni, a, a, a2.data());
  Routines<T>::gemm(ni, a2.data(), a2.data(), a4.data());
  Routines<T>::gemm(ni, a4.data(), a2.data(), a6.data());
  double eta = std::max(std::pow(norm1(a4.data(), n), 0.25), std::pow(norm1(a6.data(), n), 1.0 / 6));
  eta = std::min(eta, norm1(a, n));
  int s = eta > kTheta13 ? static_cast<int>(std::ceil(std::log2(eta / kTheta13))) : 0;
  const double* b = kPade13;
  double c1 = std::ldexp(1.0, -s), c2 = std::ldexp(1.0, -2 * s), c4 = std::ldexp(1.0, -4 * s), c6 = std::ldexp(1.0, -6 * s);
  auto eye = [&](size_t i) { return i % static_cast<size_t>(n + 1) == 0 ? 1.0 : 0.0; };
  // U = X [X6 (b13 X6 + b11 X4 + b9 X2) + b7 X6 + b5 X4 + b3 X2 + b1 I], X = 2⁻ˢA
  for (size_t i = 0; i < nn; ++i) t[i] = static_cast<T>(c6 * (b[13] * c6 * a6[i] + b[11] * c4 * a4[i] + b[9] * c2 * a2[i]));
  Routines<T>::gemm(ni, a6.data(), t.data(), u.data());
  for (size_t i = 0; i < nn; ++i) u[i] = static_cast<T>(c1 * (u[i] + b[7] * c6 * a6[i] + b[5] * c4 * a4[i] + b[3] * c2 * a2[i] + b[1] * eye(i)));
  Routines<T>::gemm(ni, a, u.data(), t.data());
  std::swap(u, t);
  // V = X6 (b12 X6 + b10 X4 + b8 X2) + b6 X6 + b4 X4 + b2 X2 + b0 I
  for (size_t i = 0; i < nn; ++i) t[i] = static_cast<T>(c6 * (b[12] * c6 * a6[i] + b[10] * c4 * a4[i] + b[8] * c2 * a2[i]));
  Routines<T>::gemm(ni, a6.data(), t.data(), v.data());
  for (size_t i = 0; i < nn; ++i) v[i] += static_cast<T>(b[6] * c6 * a6[i] + b[4] * c4 * a4[i] + b[2] * c2 * a2[i] + b[0] * eye(i));
  // R = (V − U)⁻¹ (V + U). Both are polynomials in A and commute, so Rᵀ = (V − U)⁻ᵀ (V + U)ᵀ:
  // LAPACK solves it on the row-major buffers as they lie (its column-major transposes).
  T* p = out;
  for (size_t i = 0; i < nn; ++i) {
    p[i] = v[i] + u[i];
    t[i] = v[i] - u[i];
  }
  std::vector<int> ipiv(static_cast<size_t>(n));
  if (Routines<T>::getrf(ni, ni, t.data(), ni, ipiv.data()) != 0) throw Error(ErrorKind::runtime, "matrix_exp: the Padé denominator is singular (the matrix has entries that overflow)");
  Routines<T>::getrs(ni, ni, t.data(), ni, ipiv.data(), p, ni);
  for (int i = 0; i < s; ++i) {
    Routines<T>::gemm(ni, p, p, t.data());
    std::copy(t.begin(), t.end(), p);
  }
}

HostKernel make_matrix_exp(const ir::Node&, const ir::Graph&) {
  return [](const KernelArgs& a) {
    with_float_type(a, [&](auto tag) {
      using T = decltype(tag);
      int64_t n = dim(Op::matrix_exp, rows_of(a.in[0]));
      for (int64_t item = 0; item < batch_of(a.in[0]); ++item) expm<T>(n, a.in[0].as<T>() + item * n * n, a.out[0].as<T>() + item * n * n);
    });
  };
}

}  // namespace

void register_matrix_exp(KernelTable& t) { t[static_cast<size_t>(Op::matrix_exp)] = {claims_real_float, make_matrix_exp}; }

}  // namespace rlx::backends::cpu
