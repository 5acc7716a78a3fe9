// The cpu device: typed kernels with OpenMP threads. Simple and correct for now; the fast
// paths (oneDNN/AMX GEMM, SIMD, fusion) replace them one op at a time.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

#include "codegen/index_map.h"
#include "ir/graph.h"
#include "runtime/host_executable.h"
#include "util/half.h"
#include "util/thread_pool.h"

namespace rlx::backends::cpu {

using runtime::HostKernel;
using runtime::HostView;
using runtime::KernelArgs;

// A family's answer to "can you run this node?" and "which kernel runs it?".
struct KernelEntry {
  bool (*claims)(ir::Op op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs& attrs);
  HostKernel (*make)(const ir::Node& node, const ir::Graph& lir);
};
using KernelTable = std::array<KernelEntry, ir::kNumOps>;

void register_elementwise(KernelTable& t);
void register_quant_linear(KernelTable& t);
void register_reduce(KernelTable& t);
void register_matmul(KernelTable& t);
void register_movement(KernelTable& t);
void register_nn(KernelTable& t);
void register_fused(KernelTable& t);
void register_attention(KernelTable& t);
void register_fused_dot(KernelTable& t);
void register_rope(KernelTable& t);
void register_quant(KernelTable& t);
void register_experts(KernelTable& t);
void register_collective(KernelTable& t);
void register_factorize(KernelTable& t);
void register_sparse(KernelTable& t);
void register_fft(KernelTable& t);
void register_eig(KernelTable& t);
void register_splat(KernelTable& t);
// Runs last: routes the elementwise, cast and reduce nodes with complex tensors to complex.cpp.
void register_complex(KernelTable& t);

// Every kernel of the cpu device, by op (the oneapi device borrows its data movement).
const KernelTable& kernel_table();

using rlx::num_threads;

// A 16-byte element (c128) moved as raw bytes.
struct Bytes16 {
  uint64_t lo, hi;
};

// Runs f(i) for i in [0, n) across the thread pool, at least `grain` items per chunk (small
// loops stay on the calling thread).
template <class F>
void parallel_items(int64_t n, int64_t grain, F&& f) {
  rlx::parallel_for(n, std::max<int64_t>(1, grain), [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) f(i);
  });
}

inline bool is_one_of(DType d, std::initializer_list<DType> set) {
  for (DType s : set)
    if (s == d) return true;
  return false;
}

// Calls f(T{}) with the C++ type of a dtype among f32, f64, i32, i64 (and bool as uint8_t).
template <class F>
void dispatch_typed(DType d, F&& f) {
  switch (d) {
    case DType::f32: f(float{}); break;
    case DType::f64: f(double{}); break;
    case DType::i32: f(int32_t{}); break;
    case DType::i64: f(int64_t{}); break;
    case DType::boolean:
    case DType::u8: f(uint8_t{}); break;
    case DType::i8: f(int8_t{}); break;
    case DType::i16: f(int16_t{}); break;
    default: break;
  }
}

// Index maps: src/codegen's.
using codegen::broadcast_strides;
using codegen::contiguous_strides;
using codegen::normalize_axis;

// numpy broadcasting: walk the output row by row; each input has a stride per output dim (0 where
// it is broadcast).
// Calls row(dst_offset, {src offsets}, inner_strides, n) for each innermost row of `out`.
template <size_t N, class F>
void for_each_row(const std::vector<int64_t>& out, const std::array<std::vector<int64_t>, N>& in_shapes, F row) {
  size_t r = out.size();
  std::array<std::vector<int64_t>, N> st;
  for (size_t k = 0; k < N; ++k) st[k] = broadcast_strides(out, in_shapes[k]);
  int64_t inner = r ? out[r - 1] : 1;
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < r; ++d) rows *= out[d];
  if (inner == 0) return;
  parallel_items(rows, 16384 / std::max<int64_t>(1, inner), [&](int64_t row_i) {
    std::array<int64_t, N> base{};
    int64_t rem = row_i;
    for (size_t d = r ? r - 1 : 0; d-- > 0;) {
      int64_t c = rem % out[d];
      rem /= out[d];
      for (size_t k = 0; k < N; ++k) base[k] += c * st[k][d];
    }
    std::array<int64_t, N> inner_st{};
    for (size_t k = 0; k < N; ++k) inner_st[k] = r ? st[k][r - 1] : 0;
    row(row_i * inner, base, inner_st, inner);
  });
}

}  // namespace rlx::backends::cpu
