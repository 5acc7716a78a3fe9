// Products with a range of a packed matrix's rows, on the calling thread: the building block of
// kernels that split work their own way (expert_matmul's grouped GEMMs).
#pragma once
#include <cstdint>

#include "util/quant_blocks.h"

namespace rlx::backends::cpu {

// y[m, j] (row stride ldy) = Σ_k x[m, k] · W[n0 + j, k] for m < M, j < count: W's rows are
// packed as `t` (rb bytes each), x is f32[M, K] contiguous. Few rows of x decode W on the fly;
// many decode a tile of W once and multiply it by a GEMM. round_w: W's values rounded to bf16
// first (x holds bf16 values).
void packed_rows_product(quant::BlockType t, const uint8_t* w, int64_t rb, int64_t K, int64_t n0, int64_t count, const float* x, int64_t M,
                         float* y, int64_t ldy, bool round_w = false);
// Decodes W's rows [n0, n0 + count) to bf16, row-major [count, K].
void packed_rows_decode_bf16(quant::BlockType t, const uint8_t* w, int64_t rb, int64_t K, int64_t n0, int64_t count, uint16_t* out);
// Whether oneDNN runs bf16 GEMMs natively here (AVX512-BF16 or AMX).
bool cpu_has_bf16_gemm();
// Whether oneDNN runs them on AMX.
bool cpu_has_amx();

}  // namespace rlx::backends::cpu
