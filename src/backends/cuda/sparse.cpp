// Sparse CSR on the cuda device: A x and Aᵀ x through cuSPARSE's SpMM (64-bit indices, row-major
// dense operands; loaded on first use like cuFFT), and the row of each stored entry. The index
// arrays are checked on the device first (sparse.cu); A is never densified. csr_solve has no
// cuda kernel yet: compiling one for cuda names it.
#include <cusparse.h>

#include "backends/cuda/device.h"
#include "backends/cuda/dynlib.h"
#include "backends/cuda/kernels.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::backends::cuda {

namespace {

using ir::Op;

struct Cusparse {
  decltype(&::cusparseCreate) create;
  decltype(&::cusparseSetStream) set_stream;
  decltype(&::cusparseCreateConstCsr) const_csr;
  decltype(&::cusparseDestroySpMat) destroy_sp;
  decltype(&::cusparseCreateConstDnMat) const_dn;
  decltype(&::cusparseCreateDnMat) dn;
  decltype(&::cusparseDestroyDnMat) destroy_dn;
  decltype(&::cusparseSpMM_bufferSize) spmm_size;
  decltype(&::cusparseSpMM) spmm;
  std::string error;
};

const Cusparse& cusparse() {
  static const Cusparse api = load_api<Cusparse>("libcusparse.so.12", [](Cusparse& c, auto sym) {
    sym(c.create, "cusparseCreate");
    sym(c.set_stream, "cusparseSetStream");
    sym(c.const_csr, "cusparseCreateConstCsr");
    sym(c.destroy_sp, "cusparseDestroySpMat");
    sym(c.const_dn, "cusparseCreateConstDnMat");
    sym(c.dn, "cusparseCreateDnMat");
    sym(c.destroy_dn, "cusparseDestroyDnMat");
    sym(c.spmm_size, "cusparseSpMM_bufferSize");
    sym(c.spmm, "cusparseSpMM");
  });
  return api;
}

void check_sparse(cusparseStatus_t s, const char* what) {
  if (s != CUSPARSE_STATUS_SUCCESS) throw Error(ErrorKind::internal, cat("cuda: cuSPARSE failed ", what, " (cusparseStatus ", static_cast<int>(s), ")"));
}

// The calling thread's handle, never destroyed (see cusolver.cpp).
cusparseHandle_t sparse_handle(cudaStream_t s) {
  thread_local cusparseHandle_t h = [] {
    const Cusparse& c = cusparse();
    if (!c.error.empty()) throw Error(ErrorKind::unsupported, cat("cuda: ", c.error));
    cusparseHandle_t handle = nullptr;
    check_sparse(c.create(&handle), "creating a handle");
    return handle;
  }();
  check_sparse(cusparse().set_stream(h, s), "setting the stream");
  return h;
}

// One SpMM's operands described for cuSPARSE (descriptors hold pointers: made per run, on the host).
struct Product {
  int64_t m, n, nnz, k;
  bool transpose, f64;
  size_t buffer = 0;

  template <class F>
  void with(const void* ptr, const void* cols, const void* vals, const void* x, void* y, F&& f) const {
    const Cusparse& c = cusparse();
    cudaDataType dt = f64 ? CUDA_R_64F : CUDA_R_32F;
    cusparseConstSpMatDescr_t a = nullptr;
    cusparseConstDnMatDescr_t b = nullptr;
    cusparseDnMatDescr_t out = nullptr;
    int64_t xr = transpose ? m : n, yr = transpose ? n : m;
    check_sparse(c.const_csr(&a, m, n, nnz, ptr, cols, vals, CUSPARSE_INDEX_64I, CUSPARSE_INDEX_64I, CUSPARSE_INDEX_BASE_ZERO, dt), "describing A");
    check_sparse(c.const_dn(&b, xr, k, k, x, dt, CUSPARSE_ORDER_ROW), "describing x");
    check_sparse(c.dn(&out, yr, k, k, y, dt, CUSPARSE_ORDER_ROW), "describing y");
    double one64 = 1, zero64 = 0;
    float one32 = 1, zero32 = 0;
    const void* alpha = f64 ? static_cast<const void*>(&one64) : &one32;
    const void* beta = f64 ? static_cast<const void*>(&zero64) : &zero32;
    cusparseOperation_t op = transpose ? CUSPARSE_OPERATION_TRANSPOSE : CUSPARSE_OPERATION_NON_TRANSPOSE;
    f(op, alpha, a, b, beta, out, dt);
    c.destroy_sp(a);
    c.destroy_dn(b);
    c.destroy_dn(out);
  }
};

Kernel make_csr_matmul(const ir::Node& n, const ir::Graph& g) {
  Product p{};
  p.m = static_shape(g, n.inputs[0])[0] - 1;
  p.nnz = static_shape(g, n.inputs[1])[0];
  p.n = n.attrs.i("n");
  p.k = static_shape(g, n.inputs[3])[1];
  p.transpose = n.attrs.b("transpose");
  p.f64 = in_type(g, n, 2).dtype == DType::f64;
  size_t es = p.f64 ? 8 : 4;
  {
    // cuSPARSE sizes its buffer from described operands: described over throwaway allocations
    // of the real sizes, once, when the model compiles.
    const char* what = "sizing cuSPARSE's SpMM buffer";
    DeviceBuffer ptr(8 * static_cast<size_t>(p.m + 1), what), cols(8 * static_cast<size_t>(std::max<int64_t>(p.nnz, 1)), what),
        vals(es * static_cast<size_t>(std::max<int64_t>(p.nnz, 1)), what), x(es * static_cast<size_t>((p.transpose ? p.m : p.n) * p.k + 1), what),
        y(es * static_cast<size_t>((p.transpose ? p.n : p.m) * p.k + 1), what);
    cusparseHandle_t h = sparse_handle(nullptr);
    p.with(ptr.data(), cols.data(), vals.data(), x.data(), y.data(), [&](auto op, auto alpha, auto a, auto b, auto beta, auto out, auto dt) {
      check_sparse(cusparse().spmm_size(h, op, CUSPARSE_OPERATION_NON_TRANSPOSE, alpha, a, b, beta, out, dt, CUSPARSE_SPMM_ALG_DEFAULT, &p.buffer), "sizing SpMM");
    });
  }
  size_t safe_at = 0, bad_at = (8 * static_cast<size_t>(p.m + 1) + 255) / 256 * 256, work_at = bad_at + 256;
  return Kernel(
      [=](const LaunchArgs& a) {
        char* s = static_cast<char*>(a.scratch);
        int64_t* safe_ptr = reinterpret_cast<int64_t*>(s + safe_at);
        int* bad = reinterpret_cast<int*>(s + bad_at);
        launch_csr_check(static_cast<const int64_t*>(a.in[0].data), p.m, static_cast<const int64_t*>(a.in[1].data), p.nnz, p.n, bad, safe_ptr, a.error, a.node_index,
                         a.stream);
        cusparseHandle_t h = sparse_handle(a.stream);
        p.with(safe_ptr, a.in[1].data, a.in[2].data, a.in[3].data, a.out[0].data, [&](auto op, auto alpha, auto am, auto b, auto beta, auto out, auto dt) {
          check_sparse(cusparse().spmm(h, op, CUSPARSE_OPERATION_NON_TRANSPOSE, alpha, am, b, beta, out, dt, CUSPARSE_SPMM_ALG_DEFAULT, s + work_at), "in SpMM");
        });
      },
      work_at + p.buffer, "cuSPARSE SpMM");
}

Kernel make_csr_row_ids(const ir::Node& n, const ir::Graph& g) {
  int64_t m = static_shape(g, n.inputs[0])[0] - 1, nnz = static_shape(g, n.outputs[0])[0];
  return Kernel(
      [=](const LaunchArgs& a) {
        int* bad = static_cast<int*>(a.scratch);
        const int64_t* ptr = static_cast<const int64_t*>(a.in[0].data);
        launch_csr_check(ptr, m, nullptr, nnz, 0, bad, nullptr, a.error, a.node_index, a.stream);
        launch_csr_row_ids(ptr, m, bad, static_cast<int64_t*>(a.out[0].data), a.stream);
      },
      sizeof(int));
}

bool claims_csr_matmul(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs&) {
  for (const auto& t : in)
    if (!shape_is_static(t.shape)) return false;
  return in[0].dtype == DType::i64 && in[1].dtype == DType::i64 && is_one_of(in[2].dtype, {DType::f32, DType::f64}) && shape_is_static(out[0].shape) &&
         cusparse().error.empty();
}

bool claims_csr_row_ids(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs&) {
  return in[0].dtype == DType::i64 && shape_is_static(in[0].shape) && shape_is_static(out[0].shape);
}

}  // namespace

void register_sparse(KernelTable& t) {
  t[static_cast<size_t>(Op::csr_matmul)] = {claims_csr_matmul, make_csr_matmul};
  t[static_cast<size_t>(Op::csr_row_ids)] = {claims_csr_row_ids, make_csr_row_ids};
}

}  // namespace rlx::backends::cuda
