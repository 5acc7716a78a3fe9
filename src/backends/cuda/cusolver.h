// cuSOLVER's dense entry points, loaded on first use (dlopen of libcusolver.so.12, as
// cuFFT is: every process would otherwise map its ~200 MB at start), and a handle per thread
// (a handle is bound to one stream at a time).
#pragma once
#include <cusolverDn.h>

#include <string>

namespace rlx::backends::cuda {

struct Cusolver {
  decltype(&::cusolverDnCreate) dn_create;
  decltype(&::cusolverDnSetStream) dn_set_stream;
  decltype(&::cusolverDnCreateParams) dn_create_params;
  decltype(&::cusolverDnXpotrf_bufferSize) potrf_size;
  decltype(&::cusolverDnXpotrf) potrf;
  decltype(&::cusolverDnXgetrf_bufferSize) getrf_size;
  decltype(&::cusolverDnXgetrf) getrf;
  decltype(&::cusolverDnXgetrs) getrs;
  decltype(&::cusolverDnXgeqrf_bufferSize) geqrf_size;
  decltype(&::cusolverDnXgeqrf) geqrf;
  decltype(&::cusolverDnSorgqr_bufferSize) sorgqr_size;
  decltype(&::cusolverDnDorgqr_bufferSize) dorgqr_size;
  decltype(&::cusolverDnSorgqr) sorgqr;
  decltype(&::cusolverDnDorgqr) dorgqr;
  decltype(&::cusolverDnXsyevd_bufferSize) syevd_size;
  decltype(&::cusolverDnXsyevd) syevd;
  decltype(&::cusolverDnXgesvd_bufferSize) gesvd_size;
  decltype(&::cusolverDnXgesvd) gesvd;
  decltype(&::cusolverDnXgeev_bufferSize) geev_size;
  decltype(&::cusolverDnXgeev) geev;
  std::string error;  // why it could not be loaded
};

const Cusolver& cusolver();

// The calling thread's handle (created on first use, kept for the thread's life) bound to `s`.
struct DnHandle {
  cusolverDnHandle_t handle;
  cusolverDnParams_t params;
};
DnHandle dn_handle(cudaStream_t s);

// Throws rlx::Error(internal) naming `what` unless `s` is success.
void check_solver(cusolverStatus_t s, const char* what);

}  // namespace rlx::backends::cuda
