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
// Runs last: routes the elementwise, cast and reduce nodes with complex tensors to complex.cpp.
void register_complex(KernelTable& t);

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

}  // namespace rlx::backends::cpu
