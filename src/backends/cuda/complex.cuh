// Complex values in device code: libcu++'s complex (the device's std::complex) and the load of
// any dtype as complex<double> — mir.cast's meaning (util/scalar.h): a real value is (v, 0).
#pragma once
#include <cuda/std/complex>

#include "backends/cuda/common.cuh"

namespace rlx::backends::cuda {

template <class R>
using Cx = ::cuda::std::complex<R>;

__device__ inline Cx<double> load_cx(const void* p, Dt t, int64_t i) {
  if (t == Dt::c64) {
    Cx<float> v = static_cast<const Cx<float>*>(p)[i];
    return Cx<double>(v.real(), v.imag());
  }
  if (t == Dt::c128) return static_cast<const Cx<double>*>(p)[i];
  if (is_float_dt(t)) return Cx<double>(load_f64(p, t, i), 0);
  return Cx<double>(static_cast<double>(load_i64(p, t, i)), 0);
}

}  // namespace rlx::backends::cuda
