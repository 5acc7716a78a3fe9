// The vulkan device's kernels: which nodes it claims and, for each, the launches that compute it
// — GLSL printed from the codegen layer (scalar.h's arithmetic through the GLSL dialect) into
// this device's schedules (shader.h's skeleton), compiled at run time and cached.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "runtime/backend.h"

namespace rlx::backends::vulkan {

struct Features;
class Shader;

// What a binding of a launch is: an input or output of the node, a scratch buffer of the step,
// or the index-error word.
struct Operand {
  // scratch: the step's (reused by every step); persistent: the node's own, kept between runs
  enum class Kind : uint8_t { input, output, scratch, persistent, error } kind = Kind::input;
  int index = 0;
  uint32_t elem_bytes = 0;  // the unit of its offset word (0: its dtype's size)
};

// One dispatch of a node's computation. A node may need several (a fill before a copy, one per
// concat operand, two passes of a split reduction); they run in order with a barrier between.
struct Launch {
  std::string name;    // the kernel's family, for messages and profiles
  std::string source;  // GLSL
  std::vector<Operand> operands;
  std::vector<uint32_t> words;  // push constants after the operands' offsets
  int step_word = -1;           // the word the executor sets to the step's index (error kernels)
  uint32_t push_bytes = 0;
  std::array<uint32_t, 3> groups{1, 1, 1};
  // A copy of operand 0 into output 0, left out when the memory plan put both in one place
  // (a KV cache updated in place).
  bool skip_when_in_place = false;
  // Launches recorded instead of all of the node's when an operand of any of them, bound in
  // units of elem_bytes, does not start on a whole unit (a view into the middle of a row, say):
  // the same result with narrower loads.
  std::shared_ptr<std::vector<Launch>> unaligned;
  // Run once, when the plan is built, not on every run: it reads only constants and writes the
  // node's persistent region (a constant weight staged for the tensor cores).
  bool once = false;
  uint64_t persistent_bytes = 0;  // the node's persistent region needs at least this
};

// Shapes of a node as the kernels see them.
struct NodeTypes {
  std::vector<ir::Type> in, out;
  std::vector<bool> in_constant;  // which inputs are constants of the graph (none when empty)
  bool constant(size_t i) const { return i < in_constant.size() && in_constant[i]; }
};

// Whether the device has a kernel for the node (static shapes, storable dtypes, the op's
// supported attributes).
bool claims(ir::Op op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs& attrs, const Features& f);
bool claims_op(ir::Op op);  // some form of the op has a kernel
// The fused forms (attributes) of an op the kernels implement; each claim still checks types.
bool implements_variant(ir::Op op, const std::string& attr);
// A node as messages name it: op, name and index.
std::string node_label(const ir::Node& n, int i);
// Throws the reference's out-of-range error when a run's error word (Shader::error_buffer: flag,
// step, value and bound as lo/hi words) reports one; `label` names the node of a step.
void throw_index_error(const uint32_t* words, const std::function<std::string(uint32_t step)>& label);
// The launches of a claimed node (throws rlx::Error(unsupported) otherwise), and the bytes of
// scratch it needs (bound as Operand::scratch).
std::vector<Launch> launches(const ir::Node& n, const NodeTypes& t, size_t& scratch_bytes);

// Every node's launches for an executable without resident constants (opengl, opencl), printed
// for the current target: nodes in order, constants and nodes whose outputs are all views left
// out; errors name the node. `scratch_bytes` gets the most any node needs.
struct NodeLaunches {
  int node = -1;
  std::vector<Launch> launches;
};
std::vector<NodeLaunches> graph_launches(const ir::Graph& lir, size_t& scratch_bytes);

// The families (one file each).
bool claims_elementwise(ir::Op op, const NodeTypes& t, const Features& f);
std::vector<Launch> elementwise_launches(const ir::Node& n, const NodeTypes& t);
bool claims_movement(ir::Op op, const NodeTypes& t, const ir::Attrs& a, const Features& f);
std::vector<Launch> movement_launches(const ir::Node& n, const NodeTypes& t, size_t& scratch);
bool claims_reduce(ir::Op op, const NodeTypes& t, const ir::Attrs& a, const Features& f);
std::vector<Launch> reduce_launches(const ir::Node& n, const NodeTypes& t, size_t& scratch);
bool claims_region(ir::Op op, const NodeTypes& t, const ir::Attrs& a, const Features& f);
std::vector<Launch> region_launches(const ir::Node& n, const NodeTypes& t);
// A region body (elementwise_region's, fused_reduce's prologue) the GLSL printer can print for
// inputs of these types: f32/f16/bf16/bool values, float-class ops, casts, scalar constants.
std::shared_ptr<const ir::Graph> printable_body(const std::string& text, const std::vector<ir::Type>& in);
// Statements computing every body value (float registers r<id>) from the inputs' expressions.
std::string body_code(const ir::Graph& body, const std::vector<std::string>& inputs);
bool claims_attention(ir::Op op, const NodeTypes& t, const ir::Attrs& a, const Features& f);
std::vector<Launch> attention_launches(const ir::Node& n, const NodeTypes& t, size_t& scratch);
bool claims_conv(ir::Op op, const NodeTypes& t, const ir::Attrs& a, const Features& f);
std::vector<Launch> conv_launches(const ir::Node& n, const NodeTypes& t);
bool claims_cumsum(ir::Op op, const NodeTypes& t, const Features& f);
std::vector<Launch> cumsum_launches(const ir::Node& n, const NodeTypes& t);
bool claims_sort(ir::Op op, const NodeTypes& t, const ir::Attrs& a, const Features& f);
std::vector<Launch> sort_launches(const ir::Node& n, const NodeTypes& t);
bool claims_norm(ir::Op op, const NodeTypes& t, const ir::Attrs& a, const Features& f);
std::vector<Launch> norm_launches(const ir::Node& n, const NodeTypes& t);
bool claims_rope(ir::Op op, const NodeTypes& t, const ir::Attrs& a, const Features& f);
std::vector<Launch> rope_launches(const ir::Node& n, const NodeTypes& t);
// A contiguous copy of `from` into output 0 (skip_when_in_place set).
Launch copy_launch(DType t, int64_t n, Operand from);
bool claims_quant(ir::Op op, const NodeTypes& t, const ir::Attrs& a, const Features& f);
std::vector<Launch> quant_launches(const ir::Node& n, const NodeTypes& t);
bool claims_matmul(ir::Op op, const NodeTypes& t, const ir::Attrs& a, const Features& f);
std::vector<Launch> matmul_launches(const ir::Node& n, const NodeTypes& t, size_t& scratch);

// The elementwise kernel of an op over operands that broadcast to `out_shape` (f32), as the GLSL
// dialect test runs it: push constants are one zero offset per operand, then n.
std::string elementwise_shader(ir::Op op, const std::vector<std::vector<int64_t>>& in_shapes, const std::vector<int64_t>& out_shape);

// A matrix product y[batch, m, n] = Σ_k a(batch, m, k) · b(batch, n, k) (y contiguous), as
// the matmul schedules print it: `functions` defines the loaders
//   T rlx_a(uint bz, uint m, uint k)   T rlx_b(uint bz, uint n, uint k)
// (T float or int64_t), over whatever buffers the caller declared in the shader.
struct MatmulProblem {
  int64_t batch = 1, m = 1, n = 1, k = 1;
  std::string functions;
  bool a_k_contiguous = false, b_k_contiguous = false;  // which way tiles load
  bool floating = true;
  // Hooks of the fused forms (quant.cpp), each a function the caller defines in `functions`:
  //   prepare: void rlx_prepare(uint m0, uint rows, uint t, uint threads) — run by every
  //            invocation first (a barrier follows), for the rows m0… of the workgroup
  //   out:     void rlx_out(uint bz, uint m, uint c, T v0, T v1) — stores result (m, c); with
  //            `paired`, columns come as (gate, up) pairs: n counts both, c is the pair's index
  //            and v1 the second's sum. Without `out`, results go to y as [batch, m, n].
  bool prepare = false, out = false, paired = false;
  // Plain f16 operands the tensor-core schedule may load fragments of straight from memory
  // (element strides; 0: not such a matrix): a[bz][m][k] at a_batch·bz + a_ld·m + k, and b
  // either [n][k] (b_k_major: b_batch·bz + b_ld·n + k) or [k][n] (b_batch·bz + b_ld·k + n).
  int64_t a_ld = 0, a_batch = 0, b_ld = 0, b_batch = 0;
  bool b_k_major = false;
};
// The default rlx_out (y[batch, m, n]) unless the problem defines its own.
std::string out_function(const MatmulProblem& p);
constexpr int64_t kMatmulRowsMax = 8;  // lhs rows from which the tiled schedule takes over
// Few rows: 32 lanes per column, 8 columns per workgroup. Many: 64×64 tiles in shared memory.
Launch matmul_rows(Shader sh, const MatmulProblem& p);
// The rows schedules' shared parts (matmul_rows, quant.cpp's 16-byte rows): the lhs rows staged
// in shared memory where they fit, the accumulators acc[m] summed over each column's 32 lanes
// and stored through rlx_out. begin declares t, lane, col, bz and acc; x(row, k) reads the lhs.
struct RowsParts {
  std::string decls, stage, begin, finish;
  std::function<std::string(const std::string&, const std::string&)> x;
};
RowsParts rows_parts(Shader& sh, const MatmulProblem& p);
Launch matmul_tiles(Shader sh, const MatmulProblem& p);
// Tensor cores (cooperative matrices) for f16 × f16 products of at least 64×64, where offered.
bool coopmat_fits(const MatmulProblem& p, DType a, DType b, const Features& f);
Launch matmul_coop(Shader sh, const MatmulProblem& p, const Features& f);

// Plain f16 operand matrices as the tensor-core tiles read them, 16 bytes a load (raw uvec4
// bindings a16_ and b16_; strides in halves, each a multiple of 8): a[bz][m][k] at
// a_batch·bz + a_ld·m + k, b as [n][k] (b_k_major) or [k][n]. `scaled`: rows staged by
// half_stage, whose inverse scales (raw float bindings sa_ and sb_) the results are multiplied
// by — a's at bz·scale_rows_a + m, b's at bz·scale_rows_b + n.
struct HalfOperands {
  int64_t a_ld = 0, a_batch = 0, b_ld = 0, b_batch = 0;
  bool b_k_major = true, scaled = false;
  int64_t scale_rows_a = 0, scale_rows_b = 0;
  // split > 1: each tile's contraction over `split` workgroups, whose partial sums go to a raw
  // float binding part_ (declared by the kernel, after the caller's) as [split][batch][m][n];
  // matmul_coop_merge sums them into the result
  int64_t split = 1;
};
// Large products on tensor cores (64×64 up to 128×128 tiles, double-buffered 32-deep slices).
bool coop_tiles_fit(const MatmulProblem& p, const Features& f);
int64_t coop_tile_m(const MatmulProblem& p);  // the tile the schedule picks for p
int64_t coop_tile_n(const MatmulProblem& p);
Launch matmul_coop_tiles(Shader sh, const MatmulProblem& p, const Features& f, const HalfOperands& h);
int64_t coop_split(const MatmulProblem& p);  // the split coop tiles pick for p
// The sum of a split product's partials (raw float binding part_, declared after the caller's
// bindings, then a pushed count), scaled and stored through rlx_out.
Launch matmul_coop_merge(Shader sh, const MatmulProblem& p, const HalfOperands& h);
// An operand staged for them (half_stage.cpp): `loader`(bz, r, k) of `functions` for rows
// r < rows of k values, written as f16 rows of `cols` halves (zero-padded, rows_padded rows a
// batch) to the raw uint binding h_, with each row's inverse scale to the raw float sc_.
struct HalfStage {
  int64_t batch = 1, rows = 0, rows_padded = 0, k = 0, cols = 0;
  std::string functions, loader;
  bool prepare = false;  // call rlx_prepare(row, 1, t, 256) first
};
Launch half_stage(Shader sh, const HalfStage& s);
// GLSL int rlx_shift(float largest): the power of two half_stage scales a row by (0 for zero,
// inf or NaN), for every kernel that stages bf16 as f16 the same way.
std::string half_shift_function();

// Helpers the families share.
// Symbolic shapes are claimed (the LIR is static by the time kernels are printed); static ones
// must index in 32 bits.
bool indexable(const ir::Type& t);
// numpy's rule: `s` aligned at the right of `o`, each dim equal or 1.
bool broadcasts_to(const Shape& s, const Shape& o);
std::vector<int64_t> dims(const ir::Type& t);
// A grid of ⌈n / per_group⌉ groups folded into x and y (rlx_flat() unfolds it).
std::array<uint32_t, 3> grid_for(int64_t n, uint32_t per_group);
// GLSL that decomposes the flat index `flat` over `shape` (last dim fastest) and defines
// `uint <name>_at` for each operand from its element strides over that shape.
std::string index_code(const std::vector<int64_t>& shape, const std::vector<std::pair<std::string, std::vector<int64_t>>>& operands,
                       const std::string& flat = "i");

// index_code for operands x0, x1, … of types `in` broadcasting to `out` (flat index i of out),
// over the collapsed iteration space.
std::string broadcast_index_code(const std::vector<ir::Type>& in, const ir::Type& out);

// GLSL summing every lane's float `v` into a new float `into` that all lanes read after, over
// the kernel's `shared float red[lanes]` (lane index t, a power-of-two workgroup).
std::string workgroup_sum(const std::string& v, const std::string& into, int64_t lanes);

// A GLSL function `uint fn(uint q)`: the element offset of index q decomposed over `shape`
// (last dim fastest) with `strides` — one multiply when the shape has one dim.
std::string offset_function(const std::string& fn, const std::vector<int64_t>& shape, const std::vector<int64_t>& strides);

struct KernelTarget;
std::unique_ptr<runtime::Executable> make_executable(const ir::Graph& lir);
// The same with the kernels printed for `target` (the directx device's HLSL) on the vulkan device.
std::unique_ptr<runtime::Executable> make_executable(const ir::Graph& lir, const KernelTarget& target);

}  // namespace rlx::backends::vulkan
