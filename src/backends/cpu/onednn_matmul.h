// oneDNN matmul for the cpu device's dot_general (see onednn_matmul.cpp).
#pragma once
#include <dnnl.hpp>
#include <optional>

#include "backends/cpu/kernels.h"

namespace rlx::backends::cpu {

// C[b] = op(A[b]) · op(B[b]) with A stored [M, K] (or [K, M] when a_km) and B stored [K, N]
// (or [N, K] when b_nk); C is [batch, M, N] contiguous.
struct MatmulShape {
  int64_t batch = 1, M = 0, K = 0, N = 0;
  bool a_km = false, b_nk = false;
  DType a_dtype = DType::f32, b_dtype = DType::f32, c_dtype = DType::f32;
  DType compute = DType::f32;  // bf16 with f32 operands: rounded to bf16 on the way in (AMX)
};

// An elementwise epilogue executed by oneDNN on the product before it is stored.
struct PostOp {
  enum class Kind { eltwise, binary } kind = Kind::eltwise;
  int alg = 0;  // dnnl::algorithm
  float alpha = 0, beta = 0;
  int input = -1;  // binary: which extra input (0 = the node's third input)
  enum class Src1 { row, full, scalar, column } src1 = Src1::row;  // [1, N], [M, N], [1, 1] or [M, 1]
};
// An integer product (i8 · i8) reaches the post-ops as f32: its exact i32 sum converted, which
// is the epilogue's leading cast.
struct Epilogue {
  std::vector<PostOp> ops;
  DType out = DType::f32;
  bool from_int = false;  // the body begins with the cast of an i32 product to f32
};

bool onednn_available();
// oneDNN's type for an RLX dtype the matmul and conv paths take (bf16, i8, u8, i32; f32 otherwise).
dnnl::memory::data_type onednn_type(DType d);
// The one oneDNN CPU engine: memories and primitives must come from the same engine object.
dnnl::engine& onednn_engine();
// Whether oneDNN has a kernel for the product here (the ISA decides: f32 products stored as bf16
// columns have none on AVX512-BF16 without AMX, say); cached per shape, types and epilogue.
bool onednn_matmul_buildable(const MatmulShape& shape, const Epilogue& epilogue = {});
// `const_b`: B's bytes when B is a compile-time constant (reordered once); null otherwise.
HostKernel make_onednn_matmul(const MatmulShape& shape, const void* const_b, const Epilogue& epilogue = {});

// The oneDNN kernels of whole nodes (shared with the oneapi device, whose products are oneDNN's
// only): where dot_general's operand dims form [batch][M][K]-like layouts, the product as a
// oneDNN matmul (empty when oneDNN has only its reference kernel for an f32 one, or no layout);
// fused_dot's epilogue body as post-ops; mir.conv as a convolution (empty where oneDNN can't).
std::optional<MatmulShape> onednn_shape(const std::vector<int64_t>& xs, const std::vector<int64_t>& ws, const ir::Attrs& attrs);
HostKernel onednn_dot_kernel(const ir::Node& node, const ir::Graph& lir);
bool claims_onednn_fused_dot(ir::Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs& attrs);
HostKernel make_onednn_fused_dot(const ir::Node& node, const ir::Graph& lir);
HostKernel onednn_conv_kernel(const ir::Node& node, const ir::Graph& lir);

}  // namespace rlx::backends::cpu
