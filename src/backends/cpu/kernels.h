// The cpu device: typed kernels with OpenMP threads. Simple and correct for now; the fast
// paths (oneDNN/AMX GEMM, SIMD, fusion) replace them one op at a time.
#pragma once
#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

#include "ir/graph.h"
#include "runtime/host_executable.h"
#include "util/half.h"

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
void register_reduce(KernelTable& t);
void register_matmul(KernelTable& t);
void register_movement(KernelTable& t);
void register_nn(KernelTable& t);

int num_threads();

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

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& shape);
int64_t normalize_axis(int64_t axis, size_t rank);

}  // namespace rlx::backends::cpu
