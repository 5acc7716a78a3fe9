// The general eigendecomposition through LAPACK's geev (dgeev for real matrices — conjugate pairs
// of eigenvectors come packed as two real columns — zgeev for complex ones), in double precision
// for every input type, then util/eig_order.h's canonical form.
#include <complex>

#include "backends/cpu/lapack.h"
#include "util/eig_order.h"
#include "util/scalar.h"

namespace rlx::backends::cpu {

namespace {

using ir::Op;
using C = std::complex<double>;

void check_geev(int info, int64_t item, const char* routine) {
  if (info < 0) throw Error(ErrorKind::internal, cat("mir.eig: LAPACK ", routine, " rejected argument ", -info));
  if (info > 0) throw Error(ErrorKind::invalid_argument, cat("mir.eig: the QR algorithm (", routine, ") did not converge for matrix ", item, " of the batch"));
}

// One matrix: w [n] and V [n, n] (row-major, eigenvectors as columns).
void real_eig(const HostView& x, int64_t item, int64_t n, std::vector<C>& w, std::vector<C>& v) {
  std::vector<double> a(static_cast<size_t>(n * n)), wr(static_cast<size_t>(n)), wi(static_cast<size_t>(n)), vr(static_cast<size_t>(n * n));
  for (int64_t i = 0; i < n * n; ++i) a[static_cast<size_t>(i)] = load_f64(x.data, x.dtype, item * n * n + i);
  int ni = static_cast<int>(n);
  check_geev(LAPACKE_dgeev(LAPACK_ROW_MAJOR, 'N', 'V', ni, a.data(), ni, wr.data(), wi.data(), nullptr, ni, vr.data(), ni), item, "dgeev");
  for (int64_t k = 0; k < n; ++k) {
    w[static_cast<size_t>(k)] = {wr[static_cast<size_t>(k)], wi[static_cast<size_t>(k)]};
    bool pair = wi[static_cast<size_t>(k)] != 0 && k + 1 < n;
    for (int64_t i = 0; i < n; ++i) {
      double re = vr[static_cast<size_t>(i * n + k)];
      if (!pair) {
        v[static_cast<size_t>(i * n + k)] = re;
        continue;
      }
      double im = vr[static_cast<size_t>(i * n + k + 1)];
      v[static_cast<size_t>(i * n + k)] = {re, im};
      v[static_cast<size_t>(i * n + k + 1)] = {re, -im};
    }
    if (pair) {
      w[static_cast<size_t>(k + 1)] = {wr[static_cast<size_t>(k + 1)], wi[static_cast<size_t>(k + 1)]};
      ++k;
    }
  }
}

void complex_eig(const HostView& x, int64_t item, int64_t n, std::vector<C>& w, std::vector<C>& v) {
  std::vector<C> a(static_cast<size_t>(n * n));
  for (int64_t i = 0; i < n * n; ++i) a[static_cast<size_t>(i)] = load_c128(x.data, x.dtype, item * n * n + i);
  int ni = static_cast<int>(n);
  auto* z = reinterpret_cast<lapack_complex_double*>(a.data());
  check_geev(LAPACKE_zgeev(LAPACK_ROW_MAJOR, 'N', 'V', ni, z, ni, reinterpret_cast<lapack_complex_double*>(w.data()), nullptr, ni,
                           reinterpret_cast<lapack_complex_double*>(v.data()), ni),
             item, "zgeev");
}

HostKernel make_eig(const ir::Node&, const ir::Graph&) {
  return [](const KernelArgs& a) {
    const HostView& x = a.in[0];
    int64_t n = x.shape.back(), batch = n ? x.numel / (n * n) : 0;
    lapack::BlasThreads threads(n * n);
    std::vector<C> w(static_cast<size_t>(n)), v(static_cast<size_t>(n * n));
    for (int64_t item = 0; item < batch; ++item) {
      if (is_complex(x.dtype)) complex_eig(x, item, n, w, v);
      else real_eig(x, item, n, w, v);
      canonical_eig(w.data(), v.data(), n);
      for (int64_t k = 0; k < n; ++k) store_c128(a.out[0].data, a.out[0].dtype, item * n + k, w[static_cast<size_t>(k)]);
      for (int64_t i = 0; i < n * n; ++i) store_c128(a.out[1].data, a.out[1].dtype, item * n * n + i, v[static_cast<size_t>(i)]);
    }
  };
}

bool claims_eig(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>&, const ir::Attrs&) {
  return is_one_of(in[0].dtype, {DType::f32, DType::f64, DType::c64, DType::c128});
}

}  // namespace

void register_eig(KernelTable& t) { t[static_cast<size_t>(Op::eig)] = {claims_eig, make_eig}; }

}  // namespace rlx::backends::cpu
