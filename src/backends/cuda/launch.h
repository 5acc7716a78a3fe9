// The kernels of the cuda device as host-callable launchers: plain signatures (device pointers,
// sizes, small POD descriptors) so that the .cu files need none of the compiler's headers and
// the .cpp files none of CUDA's device code. Every launcher is asynchronous on `stream`.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

#include "ir/op_enum.h"
#include "ops/splat_project_grad_math.h"

namespace rlx::backends::cuda {

// Element types as kernels know them; the values equal rlx::DType's (static_assert in common.cpp).
enum class Dt : uint8_t { f32, f16, bf16, f64, c64, i8, u8, i16, i32, i64, boolean, c128 = 12 };

// Elementwise operations are the op table's own (ir::Op); their arithmetic is src/codegen's.
using ir::Op;

constexpr int kMaxRank = 8;

// An iteration space (row-major) and one operand's element strides over it (0 where broadcast).
struct Space {
  int rank = 0;
  int64_t shape[kMaxRank] = {};
};
struct Strides {
  int64_t s[kMaxRank] = {};
};

// Run-time failures a kernel cannot throw (an index out of range): the first one is recorded
// in a device word that run() reads back after the stream finished.
struct ErrorWord {
  int code;     // 0 none, 1 index out of range
  int node;     // the LIR node that failed
  long long value, bound;
};

// Whether kernels launch as programmatic dependents of the kernel before them (common.cuh's
// launch_after): on sm_90 and newer unless RLX_CUDA_PDL=0. dependent_launch adds the launch
// attribute that does it to `cfg` (which must have room) where enabled.
bool pdl_enabled();
void dependent_launch(cudaLaunchConfig_t& cfg, cudaLaunchAttribute* attrs);

// ---- profile.cu: holds the stream until *flag (mapped host memory) is set, so the kernels
// enqueued behind it run back to back and their event times are device time alone.
void launch_wait_flag(const volatile int* flag, cudaStream_t s);

// ---- splat.cu: 3D Gaussian splatting in f32. splat_project's Gaussians one a thread; the
// rasterizer bins Gaussians into 16×16 tiles (cub's scan and radix sort), then composites a tile
// a block. Its pair count is data: it is read back (a host sync) and the pairs live in memory
// allocated on the stream (cudaMallocAsync). The launchers return false when cudaMallocAsync
// or a launch failed (the caller names the node).
void launch_splat_project(const splat_math::Intrinsics<float>& k, const float* viewmat, int64_t n, const float* means, const float* quats, const float* scales,
                          const float* sh, int k_count, int64_t channels, float* m2, float* conic, float* color, float* depth, int32_t* radii,
                          cudaStream_t stream);
// splat_project_grad: a Gaussian a thread; the viewmat's gradient summed per block into
// `scratch` (splat_project_grad_scratch(n) bytes), then over the blocks by one more launch in a
// fixed order — no atomics, the same sum every run.
struct SplatProjectGrad {
  const float *means, *quats, *scales, *sh, *viewmat, *cot_m2, *cot_conic, *cot_color, *cot_depth;
  float *g_means, *g_quats, *g_scales, *g_sh, *g_viewmat;
  int64_t n, channels;
  int k_count;
};
size_t splat_project_grad_scratch(int64_t n);
void launch_splat_project_grad(const splat_math::Intrinsics<float>& k, const SplatProjectGrad& a, void* scratch, cudaStream_t stream);
struct SplatInputs {
  const float *m2, *conic, *color, *opacity, *depth, *background;  // background may be null (black)
  const int32_t* radii;
  int n, channels, width, height;
};
struct SplatGrads {
  const float *g_image, *g_alpha;
  const float *image, *alpha;  // the forward's outputs (splat_rasterize_grad's inputs 9 and 10)
  float *m2, *conic, *color, *opacity, *background;
};
bool launch_splat_rasterize(const SplatInputs& in, float* image, float* alpha, cudaStream_t stream);
bool launch_splat_rasterize_grad(const SplatInputs& in, const SplatGrads& g, cudaStream_t stream);

// ---- fft.cu: x[i] *= s over `reals` f32 or f64 values (a complex tensor counts twice)
void launch_scale(bool f64, void* x, int64_t reals, double s, cudaStream_t stream);

// ---- elementwise.cu
void launch_unary(Op op, Dt dt, const void* x, void* y, int64_t n, cudaStream_t s);
void launch_binary(Op op, Dt dt, Dt out, const void* a, const void* b, void* y, const Space& sp, const Strides& sa, const Strides& sb,
                   cudaStream_t s);
void launch_select(Dt dt, const void* c, const void* a, const void* b, void* y, const Space& sp, const Strides& sc, const Strides& sa,
                   const Strides& sb, cudaStream_t s);
void launch_cast(Dt from, Dt to, const void* x, void* y, int64_t n, cudaStream_t s);
// y[i] = the coordinate of i along an axis: (i / inner) % n
void launch_iota(Dt dt, void* y, int64_t total, int64_t n, int64_t inner, cudaStream_t s);

// ---- complex.cu: c64 and c128 (`wide`) through libcu++'s complex arithmetic. Unary ops give a
// complex result, or a real one for abs (the magnitude), real, imag and angle; binary add, sub,
// mul, div (complex) and eq, ne (bool) broadcast by strides; cast with either side complex.
void launch_complex_unary(Op op, bool wide, const void* x, void* y, int64_t n, cudaStream_t s);
void launch_complex_binary(Op op, bool wide, const void* a, const void* b, void* y, const Space& sp, const Strides& sa, const Strides& sb, cudaStream_t s);
void launch_make_complex(bool wide, const void* re, const void* im, void* y, int64_t n, cudaStream_t s);
void launch_complex_cast(Dt from, Dt to, const void* x, void* y, int64_t n, cudaStream_t s);
// sum or product over the reduced space (one thread an output, accumulated in complex<double>)
void launch_complex_reduce(bool prod, bool wide, const void* x, void* y, const Space& kept, const Strides& ks, const Space& red, const Strides& rs,
                           cudaStream_t s);

// ---- linalg.cu: the kernels around cuSOLVER (linalg.cpp), f32 or f64 (`f64`), batches of
// row-major matrices. Error-word codes of the factorizations (value = the matrix of the batch,
// bound = cuSOLVER's info):
enum FactorFailure : int { kNotPositiveDefinite = 2, kSingular = 3, kNotConverged = 4 };
void launch_lower_triangle(bool f64, void* x, int64_t batch, int64_t n, cudaStream_t s);
// column c of x [rows, cols] negated (with row c of y [y_rows, y_cols], when y is given) unless
// its entry of largest magnitude, the first on ties, is positive
void launch_positive_columns(bool f64, void* x, int64_t batch, int64_t rows, int64_t cols, void* y, int64_t y_rows, int64_t y_cols, cudaStream_t s);
// R [k, n] from geqrf's column-major m × n factor; then R's negative diagonal flipped with Q's columns
void launch_take_r(bool f64, const void* col, void* r, int64_t batch, int64_t m, int64_t n, int64_t k, cudaStream_t s);
void launch_qr_signs(bool f64, void* q, void* r, int64_t batch, int64_t m, int64_t n, int64_t k, cudaStream_t s);
void launch_lu_pivots(const int64_t* ipiv, int32_t* piv, int64_t* perm, int64_t batch, int64_t m, int64_t k, cudaStream_t s);
void launch_slogdet(bool f64, const void* lu, const int64_t* ipiv, void* sign, void* logabs, int64_t batch, int64_t n, cudaStream_t s);
void launch_identity(bool f64, void* x, int64_t batch, int64_t n, cudaStream_t s);
// X (already holding B, [rows, cols] per matrix) overwritten by the solution of op(A) X = B
// (left) or X op(A) = B, A [n, n] triangular
struct TriangularSolve {
  int64_t batch, n, rows, cols;
  bool lower, left, transpose, unit;
};
void launch_triangular_solve(bool f64, const void* a, void* x, const TriangularSolve& t, cudaStream_t s);
void launch_factor_info(const int* info, int64_t batch, int code, ErrorWord* err, int node, cudaStream_t s);
// eig: the input as column-major c128 (any real or complex dtype); then util/eig_order's
// canonical form from cuSOLVER's w [batch, n] and column-major vr (c128) into the outputs (c64 or
// c128); `order`: batch·n i64 of scratch
void launch_to_c128_transposed(const void* x, Dt dt, void* out, int64_t batch, int64_t n, cudaStream_t s);
void launch_canonical_eig(const void* w, const void* vr, void* w_out, void* v_out, bool c64, int64_t batch, int64_t n, int64_t* order, cudaStream_t s);
// matrix_exp (scaling and squaring with the [13/13] Padé approximant, as the cpu computes it):
// c = a·b per n × n matrix (only where s[item] > step when s is given, else c = a); the scaling
// s per matrix and the batch's largest; out = c^outer_power·(base + Σ k·c·Aʲ + k0·I), k = {k6,
// k4, k2, k0}; p = v + u, q = v − u.
void launch_batched_square(bool f64, const void* a, const void* b, void* c, int64_t batch, int64_t n, const int* s, int step, cudaStream_t st);
void launch_expm_scaling(bool f64, const void* a, const void* a4, const void* a6, int64_t batch, int64_t n, double theta, int* s, int* s_max, cudaStream_t st);
void launch_expm_combine(bool f64, const void* base, const void* a2, const void* a4, const void* a6, const int* s, void* out, int64_t batch, int64_t n,
                         const double k[4], int outer_power, cudaStream_t st);
void launch_sum_diff(bool f64, const void* v, const void* u, void* p, void* q, int64_t total, cudaStream_t st);

// ---- sparse.cu: CSR index arrays (i64) checked before use: *bad set and the error word
// written when row_ptr is not 0 … nnz non-decreasing or a column is outside [0, n) (cols may be
// null: row pointers only); safe_ptr (or null) receives row_ptr, or zeros when bad.
void launch_csr_check(const int64_t* ptr, int64_t m, const int64_t* cols, int64_t nnz, int64_t n, int* bad, int64_t* safe_ptr, ErrorWord* err, int node,
                      cudaStream_t s);
void launch_csr_row_ids(const int64_t* ptr, int64_t m, const int* bad, int64_t* rows, cudaStream_t s);

// ---- movement.cu (element size 1, 2, 4, 8 or 16 bytes)
// dst[dst_base + Σ c_d·ds_d] = src[src_base + Σ c_d·ss_d] over the space: transpose, broadcast,
// slice and each part of a concat.
void launch_strided_copy(int elem_bytes, const void* src, int64_t src_base, const Strides& ss, void* dst, int64_t dst_base,
                         const Strides& ds, const Space& sp, cudaStream_t s);
struct PadSpec {
  int rank;
  int mode;  // 0 constant, 1 reflect, 2 edge
  int64_t lo[kMaxRank], interior[kMaxRank], in_shape[kMaxRank], in_stride[kMaxRank];
  uint64_t value;  // the constant's bytes in the element type
};
void launch_pad(int elem_bytes, const void* x, void* y, const Space& out, const PadSpec& p, cudaStream_t s);
// gather along an axis: y[(o·K + k)·inner + i] = x[(o·n + idx[k])·inner + i]
void launch_gather(int elem_bytes, const void* x, const void* idx, Dt idx_dt, void* y, int64_t outer, int64_t n, int64_t K, int64_t inner,
                   ErrorWord* err, int node, cudaStream_t s);
// scatter into y (already holding x) in index order, one thread per (outer, inner) column
// `last`: K bytes of scratch for plain assignment with K > 1 (which updates the last of
// repeated indices decides), or null to use the sequential kernel.
void launch_scatter(Dt dt, int reduce, void* y, const void* idx, Dt idx_dt, const void* upd, int64_t outer, int64_t n, int64_t K,
                    int64_t inner, ErrorWord* err, int node, cudaStream_t s, uint8_t* last = nullptr);

// ---- reduce.cu
enum class Red : uint8_t { sum, prod, max, min, argmax, argmin };
// The input seen as [outer space] × [reduced space]; `ks`/`rs` are the strides of the kept and
// reduced dims; argmax/argmin report the coordinate along the last reduced dim.
// scratch: reduce_scratch_bytes(…) of the same arguments (long f32 lines split over blocks).
size_t reduce_scratch_bytes(Red kind, Dt dt, const Space& kept, const Strides& ks, const Space& red, const Strides& rs);
// How many blocks launch_reduce splits each output over when its reduced elements are contiguous:
// more than one only where the outputs are too few to fill the GPU and each is long.
int block_splits(const Space& kept, const Space& red);
void launch_reduce(Red kind, Dt dt, Dt out, const void* x, void* y, const Space& kept, const Strides& ks, const Space& red,
                   const Strides& rs, void* scratch, cudaStream_t s);
void launch_cumsum(Dt dt, const void* x, void* y, int64_t outer, int64_t n, int64_t inner, bool exclusive, bool reverse, cudaStream_t s);
// Stable sort of each line (n ≤ kMaxSortLine); writes the first k values and their indices.
constexpr int64_t kMaxSortLine = 2048;
void launch_sort(Dt dt, const void* x, void* vals, void* inds, Dt ind_dt, int64_t outer, int64_t n, int64_t inner, int64_t k,
                 bool descending, cudaStream_t s);

// ---- nn.cu (f32, f16, bf16 storage; f32 math)
// softmax / log-softmax over lines of n with stride `inner`
void launch_softmax(Dt dt, const void* x, void* y, int64_t outer, int64_t n, int64_t inner, bool log, cudaStream_t s);
// layer norm (rms = false) or RMS norm over rows of `inner`; gamma/beta may be null
// out: the stored type — x's, or f16/bf16 for f32 x (the norm rounded to f32, then cast)
void launch_norm(Dt dt, const void* x, const void* gamma, const void* beta, Dt out, void* y, int64_t rows, int64_t inner, float eps, bool rms,
                 cudaStream_t s);
constexpr int kRopeTablePairs = 256;
struct RopeSpec {
  int64_t total, D, S, dims, half;
  int64_t batch_elems;  // elements per index of x's first dim
  bool interleaved, batched_positions;  // positions [B, S] (else [S])
  float theta;
  int64_t C;  // appending: the cache's rows (y is the cache, row s written at positions[s]); else 0
  // 1/θ^(2k/dims) for each pair k, computed on the host exactly as the definition does (the
  // kernels compute them where there are more pairs than this)
  bool table;
  float inv_freq[kRopeTablePairs];
};
// norm_g (x's dtype, [D]) or null: rotate rms_norm(x)·norm_g instead of x (one kernel).
// Appending (r.C), y already holds the cache; positions off it are reported in the error word.
void launch_rope(Dt dt, const void* x, const void* pos, Dt pos_dt, void* y, const RopeSpec& r, const void* norm_g, float eps, ErrorWord* err, int node,
                 cudaStream_t s);
void launch_embedding(Dt dt, const void* table, const void* ids, Dt id_dt, void* y, int64_t n_ids, int64_t V, int64_t D, ErrorWord* err,
                      int node, cudaStream_t s);
struct ConvSpec {
  int sp;  // spatial dims
  int64_t N, C, O, groups;
  int64_t in[3], out[3], k[3], stride[3], pad[3], dil[3];
};
void launch_conv(Dt dt, const void* x, const void* w, void* y, const ConvSpec& c, cudaStream_t s);
// Batched C[b] = A[b]·B[b] with element strides, for what cuBLASLt does not take (integers).
struct GemmSpec {
  int64_t batch, M, N, K;
  int64_t a_b, a_m, a_k, b_b, b_k, b_n;  // element strides
};
void launch_gemm_naive(Dt in, Dt out, const void* a, const void* b, void* c, const GemmSpec& g, cudaStream_t s);

// ---- attention.cu
struct AttentionSpec {
  int64_t B, H, Hk, Sq, Sk, D, Dv;
  int64_t q_b, q_h, q_s, k_b, k_h, k_s, v_b, v_h, v_s, y_b, y_h, y_s;  // element strides
  int64_t bias_s[4];  // bias strides over [B, H, Sq, Sk]; all 0 without a bias
  float scale, softcap;
  int mask;  // 0 none, 1 causal, 2 sliding window, 3 additive
  int64_t window;
  bool round_bf16;  // compute=bf16: operands rounded to bf16
  bool round_f16;   // compute=f16 (f32 inputs): operands rounded to f16
  int splits;       // tensor-core kernel: blocks per query tile, each over a share of the keys (1: none)
  int cluster;      // decode kernel: blocks of a cluster sharing each row's keys (sm_90; ≤ 1: one block)
  Dt y_dt;          // the stored type: the inputs', or f16/bf16 for f32 inputs (out=)
};
constexpr int64_t kMaxHeadDim = 256;
// attention_mma.cu: tensor-core tiles (bf16/f16 products, f32 softmax) where the precision allows
// it and the head dims are 32, 64 or 128; false when it does not apply.
bool attention_uses_mma(Dt dt, const AttentionSpec& a);
// How many blocks share each query tile's keys (so that a small grid still fills `sms` SMs),
// and the scratch their partial results take.
int attention_mma_splits(Dt dt, const AttentionSpec& a, int sms);
size_t attention_mma_scratch(const AttentionSpec& a);
bool launch_attention_mma(Dt dt, const void* q, const void* k, const void* v, const void* bias, Dt bias_dt, void* y, const AttentionSpec& a,
                          void* scratch, cudaStream_t s);
// attention_decode.cu: a few query rows over a long cache. attention_decode_cluster says how many
// blocks of a cluster share one row's keys on a GPU of compute capability `cc_major`.
bool attention_uses_decode(const AttentionSpec& a);
int attention_decode_cluster(const AttentionSpec& a, int cc_major);
void launch_attention_decode(Dt dt, const void* q, const void* k, const void* v, const void* bias, Dt bias_dt, void* y, const AttentionSpec& a,
                             cudaStream_t s);
void launch_attention(Dt dt, const void* q, const void* k, const void* v, const void* bias, Dt bias_dt, void* y, const AttentionSpec& a,
                      void* scratch, cudaStream_t s);

// ---- region.cu: an elementwise_region body run per element by a small register machine
constexpr int kRegionMaxInputs = 12, kRegionMaxOutputs = 4, kRegionMaxCode = 96, kRegionMaxRegs = 48, kRegionRank = 6;
struct RegionInstr {
  Op op;  // an op of scalar.h's float class, or cast (the value as it is, then rounded)
  uint8_t dst, a, b, c;
  uint8_t round;  // after the op: 0 none, 1 to f16, 2 to bf16, 3 to bool (≠ 0)
};
struct RegionProgram {
  int n_in, n_out, n_code, n_const;
  Dt in_dt[kRegionMaxInputs], out_dt[kRegionMaxOutputs];
  uint8_t in_reg[kRegionMaxInputs], out_reg[kRegionMaxOutputs], const_reg[kRegionMaxRegs];
  float const_val[kRegionMaxRegs];
  RegionInstr code[kRegionMaxCode];
  int rank;
  int64_t shape[kRegionRank];
  int64_t in_stride[kRegionMaxInputs][kRegionRank];
};
void launch_region(const RegionProgram& p, const void* const* in, void* const* out, int64_t n, cudaStream_t s);

// ---- quant.cu: packed ggml blocks (quant::BlockType values) → f32, one block per thread
void launch_dequantize(int block_type, const void* src, float* y, int64_t blocks, int64_t block_bytes, int64_t block_elems, cudaStream_t s);
// The same into bf16 (each value rounded once).
void launch_dequantize_bf16(int block_type, const void* src, void* y, int64_t blocks, int64_t block_bytes, int64_t block_elems, cudaStream_t s);
// dequant_matmul for M ≤ kGemvMaxRows rows of x (decode): y[m, n] = Σ_k x[m, k]·W[n, k] with W
// read once from its packed rows, never materialized; x and y f32 or bf16 (row-major, contiguous);
// addend (y's type and shape, or null) is added to the rounded product. glu (bf16/f16 W only):
// W has 2N rows and y[m, n] = silu(x·W[n]) · x·W[N + n]. norm_g (bf16/f16 W only; x's type,
// [K]) or null: x is rms_norm(x, norm_g, eps) first, computed as the rows are read.
constexpr int kGemvMaxRows = 8;
void launch_dequant_gemv(int block_type, Dt xdt, const void* x, const void* w, Dt ydt, void* y, const void* addend, int64_t M, int64_t N, int64_t K, int64_t block_bytes,
                         int64_t block_elems, bool glu, const void* norm_g, float eps, cudaStream_t s);
// The GEMV's warps per column of W (1, 2, 4 or 8) for N columns of `chunks` 16-byte chunks (or
// blocks) each: its blocks are ceil(N / (8 / split)), each a tile of gemv_tile.cuh.
int gemv_split(int64_t N, int64_t chunks);
constexpr int kGemvWarpsPerBlock = 8;
// expert_matmul: y[c, n] = x[c or c / A] · W[idx[c], n] for the `choices` = T·A choices, W f32
// [E, N, K] (block_type −1) or packed; f32 or bf16 x (W rounded to bf16 then), f32 y. An index
// outside [0, E) is reported in `err`.
void launch_expert_matmul(int block_type, const void* x, bool x_bf16, bool per_choice, const int64_t* idx, const void* w, float* y, int64_t E, int64_t choices,
                          int64_t A, int64_t N, int64_t K, int64_t block_bytes, int64_t block_elems, ErrorWord* err, int node, cudaStream_t s);
// y[m, n] = silu(p[m, n]) · p[m, N + n] for a [M, 2N] product p of y's dtype (f32 or bf16).
void launch_glu(Dt dt, const void* p, void* y, int64_t M, int64_t N, cudaStream_t s);

}  // namespace rlx::backends::cuda
