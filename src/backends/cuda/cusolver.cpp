#include "backends/cuda/cusolver.h"

#include "backends/cuda/dynlib.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::backends::cuda {

const Cusolver& cusolver() {
  static const Cusolver api = load_api<Cusolver>("libcusolver.so.12", [](Cusolver& c, auto sym) {
    sym(c.dn_create, "cusolverDnCreate");
    sym(c.dn_set_stream, "cusolverDnSetStream");
    sym(c.dn_create_params, "cusolverDnCreateParams");
    sym(c.potrf_size, "cusolverDnXpotrf_bufferSize");
    sym(c.potrf, "cusolverDnXpotrf");
    sym(c.getrf_size, "cusolverDnXgetrf_bufferSize");
    sym(c.getrf, "cusolverDnXgetrf");
    sym(c.getrs, "cusolverDnXgetrs");
    sym(c.geqrf_size, "cusolverDnXgeqrf_bufferSize");
    sym(c.geqrf, "cusolverDnXgeqrf");
    sym(c.sorgqr_size, "cusolverDnSorgqr_bufferSize");
    sym(c.dorgqr_size, "cusolverDnDorgqr_bufferSize");
    sym(c.sorgqr, "cusolverDnSorgqr");
    sym(c.dorgqr, "cusolverDnDorgqr");
    sym(c.syevd_size, "cusolverDnXsyevd_bufferSize");
    sym(c.syevd, "cusolverDnXsyevd");
    sym(c.gesvd_size, "cusolverDnXgesvd_bufferSize");
    sym(c.gesvd, "cusolverDnXgesvd");
    sym(c.geev_size, "cusolverDnXgeev_bufferSize");
    sym(c.geev, "cusolverDnXgeev");
  });
  return api;
}

void check_solver(cusolverStatus_t s, const char* what) {
  if (s != CUSOLVER_STATUS_SUCCESS) throw Error(ErrorKind::internal, cat("cuda: cuSOLVER failed ", what, " (cusolverStatus ", static_cast<int>(s), ")"));
}

// Never destroyed: a thread's handle lives as long as the thread, and destroying it at exit
// could run after the CUDA context is gone.
DnHandle dn_handle(cudaStream_t s) {
  thread_local DnHandle h = [] {
    const Cusolver& c = cusolver();
    if (!c.error.empty()) throw Error(ErrorKind::unsupported, cat("cuda: ", c.error));
    DnHandle d{};
    check_solver(c.dn_create(&d.handle), "creating a handle");
    check_solver(c.dn_create_params(&d.params), "creating its parameters");
    return d;
  }();
  check_solver(cusolver().dn_set_stream(h.handle, s), "setting the stream");
  return h;
}

}  // namespace rlx::backends::cuda
