// The oneapi device's parts: every kernel is a oneDNN primitive (or a chain of them) built once
// at compile time for the node's shapes, run over shares of its rows in RLX's thread pool.
#pragma once
#include <dnnl.hpp>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "backends/cpu/kernels.h"
#include "backends/cpu/onednn_matmul.h"

namespace rlx::backends::onednn {

using cpu::KernelEntry;
using cpu::KernelTable;
using runtime::HostKernel;
using runtime::KernelArgs;

// oneDNN's type for an RLX dtype (booleans are bytes of 0 and 1); nullopt where it has none.
std::optional<dnnl::memory::data_type> dnnl_type(DType d);
// A row-major tensor of these dims, or one with these element strides.
dnnl::memory::desc dense(const std::vector<int64_t>& dims, DType d);
dnnl::memory::desc strided(const std::vector<int64_t>& dims, DType d, const std::vector<int64_t>& strides);
// Dims of a static shape; a rank-0 tensor is one element ([1]: oneDNN has no scalars).
std::vector<int64_t> dims_of(const Shape& s);
// Attributes every primitive here is built with: a scratchpad the caller provides, so that the
// same primitive may run in several threads at once.
dnnl::primitive_attr user_scratchpad();

// One primitive over a share of the rows of the tensors it touches.
struct Prim {
  dnnl::primitive prim;
  std::vector<dnnl::memory::desc> descs;  // one per Arg, in order
  dnnl::memory::desc scratch;
};
// A tensor a primitive reads or writes: the node's input `tensor`, or its output -1 - tensor.
struct Arg {
  int key;             // DNNL_ARG_*
  int tensor;
  int64_t row_bytes;   // from one row of the split to the next (0: each share reads all of it)
  int64_t offset = 0;  // bytes before the first element (a slice's start)
  const void* fixed = nullptr;  // not a tensor of the node: these bytes (a constant operand)
};
constexpr int output(int i) { return -1 - i; }
using Build = std::function<Prim(int64_t rows)>;

// Runs build(share)'s primitives over shares of `rows` across RLX's pool, oneDNN single-threaded
// inside each worker: one set of threads on the machine, as the cpu device's oneDNN matmul.
// `row_work` (elements a row touches) keeps small problems on one thread. Throws dnnl::error
// when oneDNN cannot build the primitive.
// `one_row`: the primitive is built for a single row and each worker runs it once a row (oneDNN's
// jit kernels take some broadcasts only with the rows' dim gone).
HostKernel split_kernel(int64_t rows, int64_t row_work, std::vector<Arg> args, const Build& build, bool one_row = false);

// Whether `attempt` (which builds a primitive descriptor) succeeds; remembered by `key`, so that
// claims are asked of oneDNN once per op, types and attributes.
bool buildable(const std::string& key, const std::function<void()>& attempt);
// A key for that: the op, its operand types and its attributes.
std::string claim_key(ir::Op op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs& attrs);

// The kernel families (one file each).
void register_eltwise(KernelTable& t);  // unary math and activations, binary arithmetic and comparisons
void register_region(KernelTable& t);   // fused elementwise chains as one primitive with post-ops
void register_norm(KernelTable& t);     // softmax, log_softmax, layer_norm
void register_reduce(KernelTable& t);   // sum, prod, max, min over axes
void register_reorder(KernelTable& t);  // cast, transpose, slice, concat
void register_pool(KernelTable& t);     // max and average pooling
void register_matmul(KernelTable& t);   // dot_general, fused_dot (post-op epilogues), conv

}  // namespace rlx::backends::onednn
