// Q8_0 weights repacked for 8-bit activations (dequant_matmul act=q8): the cpu device's private
// layout of a constant weight, built once when a kernel is compiled and shared by every kernel
// that reads the same constant (a model's prefill, decode and slot graphs).
//
// Rows go in groups of 16. Each block of 32 columns of a group is 544 bytes — the same bytes as
// the 16 rows' Q8_0 blocks, reordered: the 16 f16 scales, then for each of the 8 quads of
// columns the 16 rows' 4 bytes, offset to unsigned (w + 128). One 512-bit vpdpbusd multiplies
// a quad of 16 rows by one broadcast dword of x, so a block of 16 rows × one row of x costs 8
// integer dot products and one scale (cvt, mul, fma) where the row-major kernel needs 4 times
// as many instructions per product — the batched decode and prefill are bound by bytes again,
// not by instructions.
//
// vpdpbusd(w + 128, q) = Σ w·q + 128·Σ q: each row of x carries −128·Σq per block, the integer
// sum's starting value, so the integer dot is exact; y = Σ_blocks f32(dot)·(d_w·d_x) in block
// order, the same sequence whatever M or the split across threads (batched rows equal rows
// alone, bit for bit).
#pragma once
#include <cstdint>
#include <memory>

namespace rlx::backends::cpu::q8 {

constexpr int64_t kGroupRows = 16;
constexpr int64_t kGroupBlockBytes = 16 * 34;

struct RepackedQ8_0 {
  std::shared_ptr<void> memory;
  const uint8_t* data = nullptr;  // (n / 16) groups × (k / 32) blocks × 544 bytes
  int64_t n = 0, k = 0;
};

// Whether this CPU runs the repacked kernel (AVX512-VNNI) and the shape fits it.
bool repacked_q8_0_applies(int64_t n, int64_t k);
// The repacked copy of `w` (n rows of k/32 Q8_0 blocks), from the process-wide cache when a
// kernel already made it for the same bytes.
std::shared_ptr<const RepackedQ8_0> repack_q8_0(const uint8_t* w, int64_t n, int64_t k);

// y[m·n + j] = Σ_k W[j, k]·x̂[m, k] for M rows of x rounded to 8 bits (q8::quantize_rows: q and the
// block scales d), split across the thread pool by groups of rows of W.
void matmul_repacked_q8_0(const RepackedQ8_0& w, const int8_t* q, const float* d, int64_t M, float* y);

}  // namespace rlx::backends::cpu::q8
