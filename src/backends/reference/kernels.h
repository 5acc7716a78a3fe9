// The reference backend: deliberately naive loops, computing in the widest type of each
// dtype class (f64, i64 with two's-complement wrap, complex<f64>). It is the living
// definition of the IR and the oracle of every test — keep it obvious, never optimize it.
#pragma once
#include <array>
#include <complex>
#include <cstring>
#include <vector>

#include "ir/op.h"
#include "runtime/host_executable.h"
#include "util/scalar.h"

namespace rlx::backends::reference {

using runtime::HostView;
using runtime::KernelArgs;

using Kernel = void (*)(const KernelArgs&);
using KernelTable = std::array<Kernel, ir::kNumOps>;

void register_elementwise(KernelTable& t);
void register_reduce(KernelTable& t);
void register_linalg(KernelTable& t);
void register_movement(KernelTable& t);
void register_nn(KernelTable& t);
void register_quant(KernelTable& t);
void register_collective(KernelTable& t);
void register_factorize(KernelTable& t);
void register_sparse(KernelTable& t);
void register_complex(KernelTable& t);
void register_fft(KernelTable& t);
void register_eig(KernelTable& t);
void register_splat(KernelTable& t);
const KernelTable& kernels();

// ---- element access in wide types
inline double rd(const HostView& v, int64_t i) { return load_f64(v.data, v.dtype, i); }
inline int64_t ri(const HostView& v, int64_t i) { return load_i64(v.data, v.dtype, i); }
inline c128 rc(const HostView& v, int64_t i) { return load_c128(v.data, v.dtype, i); }
inline void wd(const HostView& v, int64_t i, double x) { store_f64(v.data, v.dtype, i, x); }
inline void wi(const HostView& v, int64_t i, int64_t x) { store_i64(v.data, v.dtype, i, x); }
inline void wc(const HostView& v, int64_t i, c128 x) { store_c128(v.data, v.dtype, i, x); }

// Copies one element of any dtype (i4 nibbles included).
inline void copy_element(const HostView& dst, int64_t di, const HostView& src, int64_t si) {
  if (dst.dtype == DType::i4) {
    wi(dst, di, ri(src, si));
    return;
  }
  size_t es = dtype_size(dst.dtype);
  std::memcpy(static_cast<uint8_t*>(dst.data) + di * static_cast<int64_t>(es), static_cast<const uint8_t*>(src.data) + si * static_cast<int64_t>(es), es);
}

// Two's-complement arithmetic on i64 without undefined behaviour.
inline int64_t wrap_add(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)); }
inline int64_t wrap_sub(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b)); }
inline int64_t wrap_mul(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)); }

std::vector<int64_t> strides_of(const std::vector<int64_t>& shape);
// For each output element, the flat index of the (numpy-broadcast) input element.
std::vector<int64_t> broadcast_index(const std::vector<int64_t>& out_shape, const std::vector<int64_t>& in_shape);
// Row-major coordinates of flat index i.
void unravel(int64_t i, const std::vector<int64_t>& shape, std::vector<int64_t>& coord);
int64_t norm_axis(int64_t axis, size_t rank);

// Calls f(base, stride, n) for every 1-D line of a row-major tensor along `axis`.
template <class F>
void for_each_line(const std::vector<int64_t>& shape, int64_t axis, F f) {
  std::vector<int64_t> st = strides_of(shape);
  int64_t n = shape[static_cast<size_t>(axis)], stride = st[static_cast<size_t>(axis)];
  int64_t total = 1;
  for (int64_t d : shape) total *= d;
  if (n == 0) return;
  for (int64_t outer = 0; outer < total / (n * stride); ++outer)
    for (int64_t inner = 0; inner < stride; ++inner) f(outer * n * stride + inner, stride, n);
}

}  // namespace rlx::backends::reference
