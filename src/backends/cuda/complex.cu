// Complex elementwise kernels (c64, c128): the arithmetic is libcu++'s ::cuda::std::complex — the
// device's counterpart of the std::complex the reference and cpu backends use — so nothing of
// an op's meaning is written here, only where the values come from and go to.
#include "backends/cuda/complex.cuh"

namespace rlx::backends::cuda {

namespace {

template <class R>
__device__ Cx<R> unary_value(Op op, Cx<R> x) {
  switch (op) {
    case Op::neg: return -x;
    case Op::exp: return ::cuda::std::exp(x);
    case Op::log: return ::cuda::std::log(x);
    case Op::sqrt: return ::cuda::std::sqrt(x);
    case Op::reciprocal: return Cx<R>(1) / x;
    case Op::sin: return ::cuda::std::sin(x);
    case Op::cos: return ::cuda::std::cos(x);
    case Op::tanh: return ::cuda::std::tanh(x);
    case Op::conj: return ::cuda::std::conj(x);
    default: return x;
  }
}

// Ops whose result is real: abs (the magnitude), real, imag, angle.
template <class R>
__device__ R real_value(Op op, Cx<R> x) {
  switch (op) {
    case Op::abs: return ::cuda::std::abs(x);
    case Op::real: return x.real();
    case Op::imag: return x.imag();
    default: return ::cuda::std::arg(x);  // angle
  }
}

template <class R>
__global__ void complex_unary_kernel(Op op, const Cx<R>* x, Cx<R>* y, int64_t n) {
  RLX_AFTER_PRODUCERS();
  RLX_GRID_STRIDE(i, n) y[i] = unary_value(op, x[i]);
}

template <class R>
__global__ void complex_to_real_kernel(Op op, const Cx<R>* x, R* y, int64_t n) {
  RLX_AFTER_PRODUCERS();
  RLX_GRID_STRIDE(i, n) y[i] = real_value(op, x[i]);
}

template <class R>
__global__ void complex_binary_kernel(Op op, const Cx<R>* a, const Cx<R>* b, void* y, const __grid_constant__ Space sp, const __grid_constant__ Strides sa,
                                      const __grid_constant__ Strides sb, int64_t n) {
  RLX_AFTER_PRODUCERS();
  RLX_GRID_STRIDE(i, n) {
    Cx<R> p = a[offset_of(i, sp, sa)], q = b[offset_of(i, sp, sb)];
    switch (op) {
      case Op::eq: static_cast<uint8_t*>(y)[i] = p == q; break;
      case Op::ne: static_cast<uint8_t*>(y)[i] = p != q; break;
      case Op::add: static_cast<Cx<R>*>(y)[i] = p + q; break;
      case Op::sub: static_cast<Cx<R>*>(y)[i] = p - q; break;
      case Op::mul: static_cast<Cx<R>*>(y)[i] = p * q; break;
      default: static_cast<Cx<R>*>(y)[i] = p / q; break;
    }
  }
}

template <class R>
__global__ void make_complex_kernel(const R* re, const R* im, Cx<R>* y, int64_t n) {
  RLX_AFTER_PRODUCERS();
  RLX_GRID_STRIDE(i, n) y[i] = Cx<R>(re[i], im[i]);
}

// mir.cast with a complex side (util/scalar.h): real → complex is (v, 0) (load_cx); complex →
// complex rounds both parts; complex → bool is z ≠ 0; complex → any other real type keeps the
// real part.
__global__ void complex_cast_kernel(Dt from, Dt to, const void* x, void* y, int64_t n) {
  RLX_AFTER_PRODUCERS();
  RLX_GRID_STRIDE(i, n) {
    Cx<double> v = load_cx(x, from, i);
    if (to == Dt::c64) static_cast<Cx<float>*>(y)[i] = Cx<float>(static_cast<float>(v.real()), static_cast<float>(v.imag()));
    else if (to == Dt::c128) static_cast<Cx<double>*>(y)[i] = v;
    else if (to == Dt::boolean) static_cast<uint8_t*>(y)[i] = v != Cx<double>(0, 0);
    else store_f64(y, to, i, v.real());
  }
}

// One thread an output, its reduced elements in row-major order, accumulated in complex<double>
// (the reference's order and precision).
template <class R>
__global__ void complex_reduce_kernel(bool prod, const Cx<R>* x, Cx<R>* y, const __grid_constant__ Space kept, const __grid_constant__ Strides ks,
                                      const __grid_constant__ Space red, const __grid_constant__ Strides rs, int64_t outputs, int64_t per_output) {
  RLX_AFTER_PRODUCERS();
  RLX_GRID_STRIDE(o, outputs) {
    int64_t base = offset_of(o, kept, ks);
    Cx<double> acc(prod ? 1.0 : 0.0, 0.0);
    for (int64_t j = 0; j < per_output; ++j) {
      Cx<R> v = x[base + offset_of(j, red, rs)];
      Cx<double> w(v.real(), v.imag());
      acc = prod ? acc * w : acc + w;
    }
    y[o] = Cx<R>(static_cast<R>(acc.real()), static_cast<R>(acc.imag()));
  }
}

int64_t volume(const Space& sp) {
  int64_t n = 1;
  for (int d = 0; d < sp.rank; ++d) n *= sp.shape[d];
  return n;
}

template <class F>
void by_precision(bool wide, F&& f) {
  if (wide) f(double{});
  else f(float{});
}

}  // namespace

void launch_complex_unary(Op op, bool wide, const void* x, void* y, int64_t n, cudaStream_t s) {
  if (n == 0) return;
  by_precision(wide, [&](auto r) {
    using R = decltype(r);
    if (op == Op::abs || op == Op::real || op == Op::imag || op == Op::angle)
      launch_after(complex_to_real_kernel<R>, grid_for(n), kThreads, 0, s, op, static_cast<const Cx<R>*>(x), static_cast<R*>(y), n);
    else launch_after(complex_unary_kernel<R>, grid_for(n), kThreads, 0, s, op, static_cast<const Cx<R>*>(x), static_cast<Cx<R>*>(y), n);
  });
}

void launch_complex_binary(Op op, bool wide, const void* a, const void* b, void* y, const Space& sp, const Strides& sa, const Strides& sb, cudaStream_t s) {
  int64_t n = volume(sp);
  if (n == 0) return;
  by_precision(wide, [&](auto r) {
    using R = decltype(r);
    launch_after(complex_binary_kernel<R>, grid_for(n), kThreads, 0, s, op, static_cast<const Cx<R>*>(a), static_cast<const Cx<R>*>(b), y, sp, sa, sb, n);
  });
}

void launch_make_complex(bool wide, const void* re, const void* im, void* y, int64_t n, cudaStream_t s) {
  if (n == 0) return;
  by_precision(wide, [&](auto r) {
    using R = decltype(r);
    launch_after(make_complex_kernel<R>, grid_for(n), kThreads, 0, s, static_cast<const R*>(re), static_cast<const R*>(im), static_cast<Cx<R>*>(y), n);
  });
}

void launch_complex_cast(Dt from, Dt to, const void* x, void* y, int64_t n, cudaStream_t s) {
  if (n == 0) return;
  launch_after(complex_cast_kernel, grid_for(n), kThreads, 0, s, from, to, x, y, n);
}

void launch_complex_reduce(bool prod, bool wide, const void* x, void* y, const Space& kept, const Strides& ks, const Space& red, const Strides& rs,
                           cudaStream_t s) {
  int64_t outputs = volume(kept);
  if (outputs == 0) return;
  by_precision(wide, [&](auto r) {
    using R = decltype(r);
    launch_after(complex_reduce_kernel<R>, grid_for(outputs), kThreads, 0, s, prod, static_cast<const Cx<R>*>(x), static_cast<Cx<R>*>(y), kept, ks, red, rs, outputs,
                 volume(red));
  });
}

}  // namespace rlx::backends::cuda
