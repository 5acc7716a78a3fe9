// The cuda device's kernel table: per op, a claim (can it run this node?) and a maker that
// turns an LIR node into a launch on device views. Makers run once per compiled executable and
// precompute everything shape-dependent, so a launch is only the kernel call.
#pragma once
#include <array>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "backends/cuda/launch.h"
#include "codegen/index_map.h"
#include "ir/graph.h"

namespace rlx::backends::cuda {

// A value during a run: a device pointer with the value's static type.
struct DeviceView {
  void* data = nullptr;
  DType dtype = DType::f32;
  std::vector<int64_t> shape;
  int64_t numel = 0;
};

struct LaunchArgs {
  const ir::Node& node;
  int node_index;
  const std::vector<DeviceView>& in;
  const std::vector<DeviceView>& out;
  cudaStream_t stream;
  void* scratch;    // this run's scratch, at least the kernel's Kernel::scratch bytes
  ErrorWord* error;  // device word for run-time failures (index out of range)
};

using Launch = std::function<void(const LaunchArgs&)>;

// The same work as one op of the decode megakernel (megakernel.h): fills `op` from the run's
// views and says whether it can (false: run the kernel, e.g. for an update not done in place).
struct MegaOp;
using MegaFill = std::function<bool(const LaunchArgs&, MegaOp&)>;

struct Kernel {
  Kernel() = default;
  Kernel(Launch l, size_t scratch_bytes = 0, std::string what = {}) : launch(std::move(l)), scratch(scratch_bytes), label(std::move(what)) {}
  Launch launch;
  size_t scratch = 0;  // device bytes the launch needs besides its inputs and outputs
  std::string label;   // what RLX_CUDA_PROFILE reports besides the op and type ("1024×128×784 cuBLASLt")
  MegaFill mega;       // empty: the op never runs inside the megakernel
};

using ClaimFn = bool (*)(ir::Op op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs& attrs);
using MakeFn = Kernel (*)(const ir::Node& node, const ir::Graph& lir);
struct KernelEntry {
  ClaimFn claims = nullptr;
  MakeFn make = nullptr;
};
using KernelTable = std::array<KernelEntry, ir::kNumOps>;

void register_elementwise(KernelTable& t);
void register_movement(KernelTable& t);
void register_reduce(KernelTable& t);
void register_matmul(KernelTable& t);
void register_nn(KernelTable& t);
void register_attention(KernelTable& t);
void register_region(KernelTable& t);
void register_collective(KernelTable& t);
void register_fft(KernelTable& t);
void register_splat(KernelTable& t);
void register_linalg(KernelTable& t);
void register_sparse(KernelTable& t);
// Last: wraps the real kernels of the elementwise ops, casts and reductions so that nodes with
// complex tensors reach complex.cpp's kernels.
void register_complex(KernelTable& t);
// Ops whose kernels wait for the device and read results back mid-run (the splat rasterizer's
// pair count): a program with one is never captured into a CUDA graph.
bool syncs_with_host(ir::Op op);
bool linalg_syncs(ir::Op op);  // the cuSOLVER factorizations (linalg.cpp)
const KernelTable& kernel_table();

// ---- helpers shared by the families (common.cpp)
Dt to_dt(DType d);
bool is_one_of(DType d, std::initializer_list<DType> set);
// f32, f16, bf16: the storage the math kernels template on
bool is_half_or_f32(DType d);
// An op's out= (its result stored in another type) the kernels can store: none, x's own type, or
// f16/bf16 for f32 x.
bool storable_out(DType x, const ir::Attrs& a);
// Index maps: src/codegen's (broadcast strides, dim collapsing, axes).
using codegen::broadcast_strides;
using codegen::contiguous_strides;
inline int64_t norm_axis(int64_t axis, size_t rank) { return codegen::normalize_axis(axis, rank); }
// codegen::collapse_dims, then a check: throws rlx::Error(unsupported) naming `what` when more
// than kMaxRank dims remain.
void collapse(std::vector<int64_t>& shape, std::vector<std::vector<int64_t>*> strides, const char* what);
Space make_space(const std::vector<int64_t>& shape);
Strides make_strides(const std::vector<int64_t>& strides);
std::vector<int64_t> static_shape(const ir::Graph& g, ir::ValueId v);
// The LIR type of a node's k-th input / output.
const ir::Type& in_type(const ir::Graph& g, const ir::Node& n, size_t k);
const ir::Type& out_type(const ir::Graph& g, const ir::Node& n, size_t k);
// "mir.gather \"name\"": how errors name a node
std::string node_label(const ir::Node& n);
// Throws rlx::Error(runtime) naming the node when a launch failed.
void check_launch(const LaunchArgs& a);

// ---- reductions (reduce.cpp): a contiguous tensor of `shape` split into the kept dims and the
// `reduced` ones, each group collapsed, as launch_reduce takes them
struct ReduceSpaces {
  Space kept, red;
  Strides ks, rs;
};
ReduceSpaces reduce_spaces(const std::vector<int64_t>& shape, const std::vector<bool>& reduced, const char* what);
Red red_of(const std::string& kind);  // "sum", "prod", "max", "min", "argmax", "argmin"

}  // namespace rlx::backends::cuda
