// dot_general as one batched GEMM: the operands are read in place when their batch, free and
// contracting dims each collapse to one stride (transposes become cuBLASLt layouts), else
// copied into [batch, rows, K] scratch first. Floats go through cuBLASLt (f32 exact, f16/bf16
// with f32 accumulation, f64), i8 · i8 → i32 too (IMMA tensor cores, where cuBLASLt has an
// algorithm for the layout), other integers through a simple kernel.
#pragma once
#include <memory>
#include <vector>

#include <cublasLt.h>

#include "backends/cuda/kernels.h"

namespace rlx::backends::cuda {

// What cuBLASLt may add to the product before it is stored (row-major [M, N] output).
struct GemmEpilogue {
  enum class Kind { none, bias, relu_bias, gelu_tanh_bias } kind = Kind::none;
  bool residual = false;  // D = A·B + C with C a full [M, N] tensor of the output type
};

class GemmPlan {
 public:
  // Shapes are static; `out` is the product's dtype (dot_general's `out`, else the inputs').
  GemmPlan(const std::vector<int64_t>& x, const std::vector<int64_t>& w, const ir::Intss& batch, const ir::Intss& contract, DType in, DType out,
           const GemmEpilogue& ep = {});
  ~GemmPlan();
  GemmPlan(const GemmPlan&) = delete;
  GemmPlan& operator=(const GemmPlan&) = delete;

  size_t scratch() const { return scratch_; }
  int64_t rows() const { return M_; }
  // "B×M×N×K bf16→f32 cuBLASLt, copies A" (for RLX_CUDA_PROFILE)
  std::string describe() const;
  int64_t cols() const { return N_; }
  // y = x·w (+ epilogue); bias is [N], residual [batch, M, N]; both null unless the epilogue asks.
  void run(const void* x, const void* w, void* y, const void* bias, const void* residual, void* scratch, cudaStream_t s) const;

 private:
  struct Operand;
  struct Lt;
  void tune(Lt& lt, const cublasLtMatmulHeuristicResult_t* results, int found, int64_t a_elems, int64_t b_elems);
  std::unique_ptr<Operand> a_, b_;  // lhs [B, M, K], rhs [B, N, K]
  std::unique_ptr<Lt> lt_;          // null: the simple kernel
  int64_t B_ = 1, M_ = 1, N_ = 1, K_ = 1;
  DType in_, out_;
  size_t scratch_ = 0, workspace_at_ = 0;  // scratch bytes; where cuBLASLt's workspace starts in them
  bool residual_ = false;                  // the epilogue adds C (for describe)
};

}  // namespace rlx::backends::cuda
