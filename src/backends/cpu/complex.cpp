// Complex tensors (c64, c128) on the cpu: elementwise arithmetic with numpy broadcasting,
// parts and magnitudes, casts to and from every real dtype, and sum/prod reductions. The ops
// here are shared with the real kernels of elementwise.cpp and reduce.cpp: register_complex
// runs last and routes a node to these kernels when one of its tensors is complex, to the real
// ones otherwise.
#include <cmath>
#include <complex>

#include "backends/complex_routing.h"
#include "backends/cpu/kernels.h"
#include "util/scalar.h"

namespace rlx::backends::cpu {

namespace {

using ir::Op;

// Calls f(T{}) with std::complex<float> for c64, std::complex<double> for c128.
template <class F>
void dispatch_complex(DType d, F&& f) {
  if (d == DType::c64) f(std::complex<float>{});
  else f(std::complex<double>{});
}

template <class T>
T unary_value(Op op, T x) {
  switch (op) {
    case Op::neg: return -x;
    case Op::exp: return std::exp(x);
    case Op::log: return std::log(x);
    case Op::sqrt: return std::sqrt(x);
    case Op::reciprocal: return T(1) / x;
    case Op::sin: return std::sin(x);
    case Op::cos: return std::cos(x);
    case Op::tanh: return std::tanh(x);
    case Op::conj: return std::conj(x);
    default: return x;
  }
}

HostKernel make_unary(const ir::Node& n, const ir::Graph&) {
  Op op = n.op;
  return [op](const KernelArgs& a) {
    dispatch_complex(a.in[0].dtype, [&](auto tag) {
      using T = decltype(tag);
      using R = typename T::value_type;
      const T* x = a.in[0].as<T>();
      int64_t n = a.out[0].numel;
      if (op == Op::abs || op == Op::real || op == Op::imag || op == Op::angle) {
        R* y = a.out[0].as<R>();
        rlx::parallel_for(n, 8192, [&](int64_t lo, int64_t hi) {
          for (int64_t i = lo; i < hi; ++i)
            y[i] = op == Op::abs ? std::abs(x[i]) : op == Op::real ? x[i].real() : op == Op::imag ? x[i].imag() : std::arg(x[i]);
        });
        return;
      }
      T* y = a.out[0].as<T>();
      rlx::parallel_for(n, 8192, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) y[i] = unary_value(op, x[i]);
      });
    });
  };
}

HostKernel make_binary(const ir::Node& n, const ir::Graph&) {
  Op op = n.op;
  return [op](const KernelArgs& a) {
    dispatch_complex(a.in[0].dtype, [&](auto tag) {
      using T = decltype(tag);
      const T* x = a.in[0].as<T>();
      const T* z = a.in[1].as<T>();
      if (op == Op::eq || op == Op::ne) {
        uint8_t* y = a.out[0].as<uint8_t>();
        for_each_row<2>(a.out[0].shape, {a.in[0].shape, a.in[1].shape}, [&](int64_t o, auto base, auto st, int64_t len) {
          for (int64_t i = 0; i < len; ++i) y[o + i] = (x[base[0] + i * st[0]] == z[base[1] + i * st[1]]) == (op == Op::eq);
        });
        return;
      }
      T* y = a.out[0].as<T>();
      for_each_row<2>(a.out[0].shape, {a.in[0].shape, a.in[1].shape}, [&](int64_t o, auto base, auto st, int64_t len) {
        for (int64_t i = 0; i < len; ++i) {
          T p = x[base[0] + i * st[0]], q = z[base[1] + i * st[1]];
          y[o + i] = op == Op::add ? p + q : op == Op::sub ? p - q : op == Op::mul ? p * q : p / q;
        }
      });
    });
  };
}

HostKernel make_complex(const ir::Node&, const ir::Graph&) {
  return [](const KernelArgs& a) {
    dispatch_complex(a.out[0].dtype, [&](auto tag) {
      using T = decltype(tag);
      using R = typename T::value_type;
      const R* re = a.in[0].as<R>();
      const R* im = a.in[1].as<R>();
      T* y = a.out[0].as<T>();
      rlx::parallel_for(a.out[0].numel, 8192, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) y[i] = T(re[i], im[i]);
      });
    });
  };
}

// mir.cast's meaning (util/scalar.h): complex → real keeps the real part, complex → bool is z ≠ 0.
HostKernel make_cast(const ir::Node&, const ir::Graph&) {
  return [](const KernelArgs& a) {
    const HostView &x = a.in[0], &y = a.out[0];
    rlx::parallel_for(y.numel, 8192, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) {
        c128 v = load_c128(x.data, x.dtype, i);
        if (y.dtype == DType::boolean) store_i64(y.data, y.dtype, i, v != c128(0, 0));
        else store_c128(y.data, y.dtype, i, v);
      }
    });
  };
}

// Sums (or multiplies) in complex<double>, one pass over the input.
HostKernel make_reduce(const ir::Node& n, const ir::Graph&) {
  bool prod = n.attrs.s("kind") == "prod";
  ir::Ints axes = n.attrs.ints("axes");
  return [prod, axes](const KernelArgs& a) {
    const auto& xs = a.in[0].shape;
    std::vector<bool> reduced(xs.size(), false);
    for (int64_t ax : axes) reduced[static_cast<size_t>(normalize_axis(ax, xs.size()))] = true;
    // the output offset of each input dim: kept dims in order, reduced ones contribute 0
    std::vector<int64_t> ost(xs.size(), 0);
    int64_t s = 1;
    for (size_t d = xs.size(); d-- > 0;)
      if (!reduced[d]) {
        ost[d] = s;
        s *= xs[d];
      }
    std::vector<c128> acc(static_cast<size_t>(a.out[0].numel), c128(prod ? 1.0 : 0.0, 0.0));
    std::vector<int64_t> c(xs.size(), 0);
    int64_t o = 0;
    for (int64_t i = 0; i < a.in[0].numel; ++i) {
      c128 v = load_c128(a.in[0].data, a.in[0].dtype, i);
      acc[static_cast<size_t>(o)] = prod ? acc[static_cast<size_t>(o)] * v : acc[static_cast<size_t>(o)] + v;
      for (size_t d = xs.size(); d-- > 0;) {  // odometer
        o += ost[d];
        if (++c[d] < xs[d]) break;
        o -= c[d] * ost[d];
        c[d] = 0;
      }
    }
    for (int64_t i = 0; i < a.out[0].numel; ++i) store_c128(a.out[0].data, a.out[0].dtype, i, acc[static_cast<size_t>(i)]);
  };
}

HostKernel complex_kernel(const ir::Node& n, const ir::Graph& g) {
  switch (n.op) {
    case Op::add:
    case Op::sub:
    case Op::mul:
    case Op::div:
    case Op::eq:
    case Op::ne: return make_binary(n, g);
    case Op::complex: return make_complex(n, g);
    case Op::cast: return make_cast(n, g);
    case Op::reduce: return make_reduce(n, g);
    default: return make_unary(n, g);
  }
}

}  // namespace

void register_complex(KernelTable& t) { route_complex<complex_kernel>(t); }

}  // namespace rlx::backends::cpu
