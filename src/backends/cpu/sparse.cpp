// Sparse CSR on the cpu: products threaded over rows (Aᵀ x scatters, one thread), the row of each
// entry, and direct solves through SuiteSparse (sparse_solve.cpp). The index arrays are validated
// before any is trusted (util/csr.h).
#include "backends/cpu/kernels.h"
#include "util/csr.h"

namespace rlx::backends::cpu {

void register_sparse_solve(KernelTable& t);

namespace {

using ir::Op;

HostKernel make_csr_matmul(const ir::Node& node, const ir::Graph&) {
  bool t = node.attrs.b("transpose");
  int64_t n = node.attrs.i("n");
  return [=](const KernelArgs& a) {
    const int64_t* ptr = a.in[0].as<int64_t>();
    const int64_t* cols = a.in[1].as<int64_t>();
    int64_t m = a.in[0].numel - 1, k = a.in[3].shape[1];
    check_csr("csr_matmul", ptr, m, cols, a.in[1].numel, n, false);
    dispatch_typed(a.in[2].dtype, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_floating_point_v<T>) {
        const T* v = a.in[2].as<T>();
        const T* x = a.in[3].as<T>();
        T* y = a.out[0].as<T>();
        if (!t) {
          parallel_items(m, 64, [&](int64_t i) {
            T* yi = y + i * k;
            std::fill(yi, yi + k, T(0));
            for (int64_t p = ptr[i]; p < ptr[i + 1]; ++p) {
              const T* xc = x + cols[p] * k;
              for (int64_t j = 0; j < k; ++j) yi[j] += v[p] * xc[j];
            }
          });
          return;
        }
        std::fill(y, y + n * k, T(0));
        for (int64_t i = 0; i < m; ++i)
          for (int64_t p = ptr[i]; p < ptr[i + 1]; ++p) {
            T* yc = y + cols[p] * k;
            const T* xi = x + i * k;
            for (int64_t j = 0; j < k; ++j) yc[j] += v[p] * xi[j];
          }
      }
    });
  };
}

HostKernel make_csr_row_ids(const ir::Node&, const ir::Graph&) {
  return [](const KernelArgs& a) {
    const int64_t* ptr = a.in[0].as<int64_t>();
    int64_t m = a.in[0].numel - 1;
    check_csr("csr_row_ids", ptr, m, nullptr, a.out[0].numel, 0, false);
    int64_t* rows = a.out[0].as<int64_t>();
    parallel_items(m, 256, [&](int64_t i) { std::fill(rows + ptr[i], rows + ptr[i + 1], i); });
  };
}

bool claims_csr(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>&, const ir::Attrs&) {
  return in[0].dtype == DType::i64 && (in.size() < 3 || is_one_of(in[2].dtype, {DType::f32, DType::f64}));
}

}  // namespace

void register_sparse(KernelTable& t) {
  t[static_cast<size_t>(Op::csr_matmul)] = {claims_csr, make_csr_matmul};
  t[static_cast<size_t>(Op::csr_row_ids)] = {claims_csr, make_csr_row_ids};
  register_sparse_solve(t);
}

}  // namespace rlx::backends::cpu
