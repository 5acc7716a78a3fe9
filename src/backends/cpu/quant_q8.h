// 8-bit activations for dequant_matmul (act=q8): x rounded to blocks of 32 int8 values with
// one f32 scale each, multiplied by packed weights with integer dot products (AVX512-VNNI
// vpdpbusd: 64 byte products per instruction where the f32 path decodes and converts 16).
// The rounding is the op's definition (ops/quant.cpp), so every path gives the same x.
#pragma once
#include <cstdint>
#include <vector>

#include "util/quant_blocks.h"

namespace rlx::backends::cpu::q8 {

// M rows of x rounded to 8-bit blocks: q[m·ldq + i], and per block of 32 the scale
// d = max|x|/127 and s = d·Σq (the sum of the rounded values, for the K-quants' offsets).
struct Rows {
  const int8_t* q = nullptr;
  const float* d = nullptr;
  const float* s = nullptr;
  int64_t ldq = 0, ldd = 0;
  // For Q8_0: u = q + 128 as unsigned bytes, and per pair of blocks a vector of
  // 16 scales (8 × d of the first block, 8 × d of the second), so one 512-bit vpdpbusd takes
  // two blocks of a row with no per-row sign fix-up.
  const uint8_t* u = nullptr;
  const float* dpair = nullptr;
  int64_t ldu = 0, ldpair = 0;
  // For the types whose values carry an offset per group of 16 (Q2_K's mins, Q3_K's −4, Q6_K's
  // −32): Σq of every 16 values, as f32 — shared by all rows of W, so a kernel takes the offset
  // with one multiply-add per block instead of a second integer dot product per 64 values.
  const float* s16 = nullptr;
  int64_t lds16 = 0;

  // The rows from m on.
  Rows from(int64_t m) const {
    Rows r = *this;
    r.q += m * ldq, r.d += m * ldd, r.s += m * ldd;
    if (u) r.u += m * ldu, r.dpair += m * ldpair;
    if (s16) r.s16 += m * lds16;
    return r;
  }
};

// Scratch for what a type's kernel reads beside q, d and s (Rows' u, dpair, s16); the caller
// keeps it alive while the Rows are in use.
struct RowExtras {
  std::vector<uint8_t> u;
  std::vector<float> dpair, s16;
};
// Fills the extras the kernel of type t reads into `r` (M rows of K values, q and d set).
void prepare_rows(quant::BlockType t, int64_t M, int64_t K, RowExtras& scratch, Rows& r);

// Rounds M rows of K values (K a multiple of 32): q = round_half_even(x·127/max|x|) per block.
// `deq`, when given, receives q·d (the rounded x as f32, for paths without an integer kernel).
void quantize_rows(const float* x, int64_t M, int64_t K, int8_t* q, float* d, float* s, float* deq);


// Whether this CPU has AVX512-VNNI (and the AVX-512 subsets the integer kernels use).
bool has_vnni();

// Rows of x one call of a DotFn takes at most.
constexpr int kMaxRows = 8;
// out[m] = Σ_k W[k]·x̂[m, k] for one packed row of K values and M ≤ kMaxRows rounded rows. Each
// row's result is computed the same way whatever M is (batched rows equal rows alone, bit for bit).
using DotFn = void (*)(const uint8_t* w, int64_t K, const Rows& x, int M, float* out);
// The integer kernel of a block type, or nullptr where this CPU or type has none (every ggml
// weight type on AVX512-VNNI machines); give it Rows completed by prepare_rows.
DotFn dot_fn(quant::BlockType t);

}  // namespace rlx::backends::cpu::q8
