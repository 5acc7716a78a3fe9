// Elementwise kernels: unary and binary ops (numpy broadcasting through strides), select, cast
// and iota. One template per storage type; the op is a run-time switch over src/codegen's
// definitions, uniform across a warp, which costs nothing next to the memory traffic.
#include "backends/cuda/elementwise_tile.cuh"

namespace rlx::backends::cuda {

namespace {

template <class T>
__global__ void unary_kernel(Op op, const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  RLX_AFTER_PRODUCERS();
  RLX_GRID_STRIDE(i, n) y[i] = narrow<T>(apply<T>(op, widen(x[i]), widen(x[i])));
}

// Booleans are stored as uint8 0/1: the integer class with a ≠ 0 store.
__global__ void unary_bool_kernel(Op op, const uint8_t* x, uint8_t* y, int64_t n) {
  RLX_AFTER_PRODUCERS();
  RLX_GRID_STRIDE(i, n) y[i] = codegen::int_op(codegen::DeviceInt{}, op, int64_t{x[i] != 0}, int64_t{0}, int64_t{0}) != 0;
}

template <class T>
__global__ void binary_kernel(Op op, const T* a, const T* b, void* y, bool to_bool, const __grid_constant__ Space sp, const __grid_constant__ Strides sa, const __grid_constant__ Strides sb, int64_t n) {
  RLX_AFTER_PRODUCERS();
  binary_elems<T>(op, a, b, y, to_bool, sp, sa, sb, n, static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x, static_cast<int64_t>(gridDim.x) * blockDim.x);
}

__global__ void binary_bool_kernel(Op op, const uint8_t* a, const uint8_t* b, uint8_t* y, const __grid_constant__ Space sp, const __grid_constant__ Strides sa, const __grid_constant__ Strides sb, int64_t n) {
  RLX_AFTER_PRODUCERS();
  RLX_GRID_STRIDE(i, n) {
    int64_t ia, ib;
    operand_offsets(sp, sa, sb, i, ia, ib);
    y[i] = codegen::int_op(codegen::DeviceInt{}, op, int64_t{a[ia] != 0}, int64_t{b[ib] != 0}, int64_t{0}) != 0;
  }
}

template <class T>
__global__ void select_kernel(const uint8_t* c, const T* a, const T* b, T* y, const __grid_constant__ Space sp, const __grid_constant__ Strides sc, const __grid_constant__ Strides sa, const __grid_constant__ Strides sb, int64_t n) {
  RLX_AFTER_PRODUCERS();
  RLX_GRID_STRIDE(i, n) {
    int64_t ic = 0, ia = 0, ib = 0, r = i;
    for (int d = sp.rank - 1; d > 0; --d) {
      int64_t k = coord_step(r, sp.shape[d]);
      ic += k * sc.s[d];
      ia += k * sa.s[d];
      ib += k * sb.s[d];
    }
    if (sp.rank > 0) ic += r * sc.s[0], ia += r * sa.s[0], ib += r * sb.s[0];
    y[i] = c[ic] ? a[ia] : b[ib];
  }
}

__global__ void cast_kernel(Dt from, Dt to, const void* x, void* y, int64_t n) {
  RLX_AFTER_PRODUCERS();
  bool ffrom = is_float_dt(from);
  RLX_GRID_STRIDE(i, n) {
    if (to == Dt::boolean) store_i64(y, to, i, ffrom ? load_f64(x, from, i) != 0.0 : load_i64(x, from, i) != 0);
    else if (ffrom) store_f64(y, to, i, load_f64(x, from, i));
    else if (is_float_dt(to)) store_f64(y, to, i, static_cast<double>(load_i64(x, from, i)));
    else store_i64(y, to, i, load_i64(x, from, i));
  }
}

// f32/f16/bf16 → f32/f16/bf16: the casts around reduced-precision matmuls, on the hot path.
template <class S, class D>
__global__ void cast_float_kernel(const S* __restrict__ x, D* __restrict__ y, int64_t n) {
  RLX_AFTER_PRODUCERS();
  RLX_GRID_STRIDE(i, n) y[i] = from_f32<D>(to_f32(x[i]));
}

__global__ void iota_kernel(Dt dt, void* y, int64_t total, int64_t n, int64_t inner) {
  RLX_AFTER_PRODUCERS();
  RLX_GRID_STRIDE(i, total) store_i64(y, dt, i, (i / inner) % n);
}

template <class F>
void by_type(Dt dt, F&& f) {
  switch (dt) {
    case Dt::f32: f(float{}); break;
    case Dt::f16: f(__half{}); break;
    case Dt::bf16: f(__nv_bfloat16{}); break;
    case Dt::f64: f(double{}); break;
    case Dt::i8: f(int8_t{}); break;
    case Dt::u8: f(uint8_t{}); break;
    case Dt::i16: f(int16_t{}); break;
    case Dt::i32: f(int32_t{}); break;
    case Dt::i64: f(int64_t{}); break;
    default: break;
  }
}

}  // namespace

void launch_unary(Op op, Dt dt, const void* x, void* y, int64_t n, cudaStream_t s) {
  if (n == 0) return;
  if (dt == Dt::boolean) {
    launch_after(unary_bool_kernel, grid_for(n), kThreads, 0, s, op, static_cast<const uint8_t*>(x), static_cast<uint8_t*>(y), n);
    return;
  }
  by_type(dt, [&](auto t) {
    using T = decltype(t);
    launch_after(unary_kernel<T>, grid_for(n), kThreads, 0, s, op, static_cast<const T*>(x), static_cast<T*>(y), n);
  });
}

void launch_binary(Op op, Dt dt, Dt out, const void* a, const void* b, void* y, const Space& sp, const Strides& sa, const Strides& sb,
                   cudaStream_t s) {
  int64_t n = 1;
  for (int d = 0; d < sp.rank; ++d) n *= sp.shape[d];
  if (n == 0) return;
  if (dt == Dt::boolean) {
    launch_after(binary_bool_kernel, grid_for(n), kThreads, 0, s, op, static_cast<const uint8_t*>(a), static_cast<const uint8_t*>(b),
                                                         static_cast<uint8_t*>(y), sp, sa, sb, n);
    return;
  }
  by_type(dt, [&](auto t) {
    using T = decltype(t);
    launch_after(binary_kernel<T>, grid_for(n), kThreads, 0, s, op, static_cast<const T*>(a), static_cast<const T*>(b), y, out == Dt::boolean, sp, sa, sb, n);
  });
}

void launch_select(Dt dt, const void* c, const void* a, const void* b, void* y, const Space& sp, const Strides& sc, const Strides& sa,
                   const Strides& sb, cudaStream_t s) {
  int64_t n = 1;
  for (int d = 0; d < sp.rank; ++d) n *= sp.shape[d];
  if (n == 0) return;
  auto go = [&](auto t) {
    using T = decltype(t);
    launch_after(select_kernel<T>, grid_for(n), kThreads, 0, s, static_cast<const uint8_t*>(c), static_cast<const T*>(a), static_cast<const T*>(b),
                                                       static_cast<T*>(y), sp, sc, sa, sb, n);
  };
  // select moves elements: only their size matters
  switch (dt) {
    case Dt::i8:
    case Dt::u8:
    case Dt::boolean: go(uint8_t{}); break;
    case Dt::f16:
    case Dt::bf16:
    case Dt::i16: go(uint16_t{}); break;
    case Dt::f32:
    case Dt::i32: go(uint32_t{}); break;
    case Dt::c128: go(uint4{}); break;
    default: go(uint64_t{}); break;  // f64, i64, c64
  }
}

template <class F>
bool by_float_type(Dt dt, F&& f) {
  switch (dt) {
    case Dt::f32: f(float{}); return true;
    case Dt::f16: f(__half{}); return true;
    case Dt::bf16: f(__nv_bfloat16{}); return true;
    default: return false;
  }
}

void launch_cast(Dt from, Dt to, const void* x, void* y, int64_t n, cudaStream_t s) {
  if (n == 0) return;
  bool fast = (from == Dt::f32 || from == Dt::f16 || from == Dt::bf16) && (to == Dt::f32 || to == Dt::f16 || to == Dt::bf16);
  if (fast) {
    by_float_type(from, [&](auto a) {
      by_float_type(to, [&](auto b) {
        using S = decltype(a);
        using D = decltype(b);
        launch_after(cast_float_kernel<S, D>, grid_for(n), kThreads, 0, s, static_cast<const S*>(x), static_cast<D*>(y), n);
      });
    });
    return;
  }
  launch_after(cast_kernel, grid_for(n), kThreads, 0, s, from, to, x, y, n);
}

void launch_iota(Dt dt, void* y, int64_t total, int64_t n, int64_t inner, cudaStream_t s) {
  if (total == 0) return;
  launch_after(iota_kernel, grid_for(total), kThreads, 0, s, dt, y, total, n, inner);
}

}  // namespace rlx::backends::cuda
