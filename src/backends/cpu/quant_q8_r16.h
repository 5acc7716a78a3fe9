// Weights repacked for 8-bit activations (dequant_matmul act=q8): the cpu device's private
// layout of a constant weight of a 32-value block type (Q8_0, Q4_0, Q4_1, IQ4_NL) or a K-quant
// (Q2_K … Q6_K, IQ4_XS: their layouts and kernels in quant_q8_r16.cpp — scales unpacked to
// bytes, value quads of 16 rows as below), built once
// when a kernel is compiled and shared by every kernel that reads the same constant (a model's
// prefill, decode and slot graphs).
//
// Rows go in groups of 16. Each block of 32 columns of a group holds the same bytes as the 16
// rows' blocks, reordered: the 16 f16 scales (and, for Q4_1, the 16 f16 mins), then the values
// so that one 64-byte register holds one quad of 4 columns for all 16 rows —
//   Q8_0   (544 bytes): 8 registers, quad j of each row as unsigned bytes (w + 128);
//   Q4_0, IQ4_NL (288) and Q4_1 (320): 4 registers, bytes 4j … 4j + 3 of each row's nibbles —
//          their low nibbles are quad j, their high nibbles quad j + 4 (values 16 + 4j …).
// One 512-bit vpdpbusd multiplies a quad of 16 rows by one broadcast dword of x, so a block of
// 16 rows × one row of x costs 8 integer dot products and one scale (cvt, mul, fma) where the
// row-major kernels need 4 times as many instructions per product — the batched decode and
// prefill are bound by bytes again, not by instructions.
//
// The unsigned bytes u are w + c for a per-type constant c (128 for Q8_0 and IQ4_NL's grid, 8
// for Q4_0's nibbles, 0 for Q4_1): vpdpbusd(u, q) = Σ w·q + c·Σq, so each row of x carries
// −c·Σq per block as the integer sum's starting value and the integer dot is exact; Q4_1's
// minimum adds m_w·d_x·Σq. y = Σ_blocks f32(dot)·(d_w·d_x) in block order, the same sequence
// whatever M or the split across threads (batched rows equal rows alone, bit for bit).
#pragma once
#include <cstdint>
#include <memory>

#include "util/quant_blocks.h"

namespace rlx::backends::cpu::q8 {

constexpr int64_t kGroupRows = 16;

struct Repacked16 {
  std::shared_ptr<void> memory;
  const uint8_t* data = nullptr;  // (n / 16) groups × (k / 32) blocks × group_block_bytes
  quant::BlockType type = quant::BlockType::q8_0;
  int64_t n = 0, k = 0, group_block_bytes = 0;
};

// Whether this CPU runs the repacked kernels (AVX512-VNNI) and the type and shape fit them.
bool repacked_applies(quant::BlockType t, int64_t n, int64_t k);
// The repacked copy of `w` (n rows of k/32 blocks of type t), from the process-wide cache when
// a kernel already made it for the same bytes.
std::shared_ptr<const Repacked16> repack(quant::BlockType t, const uint8_t* w, int64_t n, int64_t k);

// y[m·n + j] = Σ_k W[j, k]·x̂[m, k] for M rows of x rounded to 8 bits (q8::quantize_rows: q, the
// block scales d and sums s), split across the thread pool by groups of rows of W.
void matmul_repacked(const Repacked16& w, const int8_t* q, const float* d, const float* s, int64_t M, float* y);

}  // namespace rlx::backends::cpu::q8
