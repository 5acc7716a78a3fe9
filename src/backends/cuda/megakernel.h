// The decode megakernel: a run of consecutive steps of an LIR program executed as one persistent
// kernel instead of one kernel each. A decode step is ~28 layers × 8 small kernels; each kernel
// boundary costs a launch, a ramp-up and a drained tail, which at batch 1 is most of the step.
//
// The host turns each step into a MegaOp — the op's tiles (the blocks its own kernel would
// launch) with every pointer resolved — and lists, per op, the earlier ops whose bytes it must
// wait for (step_order.h). The kernel's blocks stay resident (a cooperative launch) and walk the
// ops in order, block b taking tiles b, b + G, …; before its first tile of an op a block waits
// until every op it depends on has been finished by all of that op's blocks (a counter per op),
// and a GEMV tile issues its first weight loads before it waits, so the next layer's weights
// stream in while the op ahead finishes. Because the tiles are the separate kernels' own
// functions (gemv_tile.cuh, rope_tile.cuh, …), a run computes what the kernels would.
//
// Deadlock-free by construction: the earliest unfinished op has every dependency finished, and
// each of its tiles belongs to a resident block that has finished all its earlier tiles.
#pragma once
#include <cstdint>

#include "backends/cuda/launch.h"

namespace rlx::backends::cuda {

enum class MegaKind : uint8_t { gemv_half, gemv_blocks, rope, norm_rope, scatter, attention, binary };

struct MegaGemv {
  const void *x, *w, *addend, *norm_g;
  void* y;
  int64_t N, row_bytes;
  int M, K, split, block_type, bb, be;
  float eps;
  bool x_bf16, y_bf16, w_bf16, glu, round_w;
};
struct MegaRope {
  const void *x, *pos, *norm_g;
  void* y;
  Dt dt, pos_dt;
  float eps;
  RopeSpec r;
};
struct MegaScatter {
  void* y;
  const void *idx, *upd;
  int64_t outer, n, K, inner;
  Dt dt, idx_dt;
  int reduce;
};
struct MegaAttention {
  const void *q, *k, *v, *bias;
  void* y;
  Dt dt, bias_dt;
  AttentionSpec a;
  // Blocks sharing each row's keys (a long cache: one block a row would walk it alone); with
  // splits > 1 the op's workspace holds a counter per row, then from byte part_at on each
  // share's (m, l, acc[Dv]).
  int splits;
  int64_t part_at;
};
struct MegaBinary {
  const void *a, *b;
  void* y;
  int64_t n;
  Op op;
  Dt dt;
  bool to_bool;
  Space sp;
  Strides sa, sb;
};

constexpr int kMegaDeps = 8;      // dependencies an op lists (an op with more starts a new stretch)
constexpr int kMegaCounterStride = 32;  // unsigned words between two ops' counters (a 128-byte line)
constexpr int kMegaThreads = 256;  // every tile's block size (the GEMV's 8 warps)

// 16-byte aligned and sized: blocks copy the next op into shared memory with cp.async.
struct alignas(16) MegaOp {
  MegaKind kind = MegaKind::binary;
  int node = 0;        // the LIR node, for the error word
  int64_t tiles = 0;   // its blocks' worth of work
  int64_t first_block = 0;  // the block of tile 0 (then round the grid)
  int n_deps = 0;
  int deps[kMegaDeps] = {};      // earlier ops of the run it waits for
  unsigned need[kMegaDeps] = {};  // … until this many blocks have finished each
  // Device bytes of its own the op asks for (its fill sets the size; the planner places them,
  // zeroed before the first launch, and an op leaves any counters in them zeroed again).
  size_t workspace_bytes = 0;
  void* workspace = nullptr;
  MegaGemv gemv{};
  MegaRope rope{};
  MegaScatter scatter{};
  MegaAttention attention{};
  MegaBinary binary{};
};

// The megakernel is built for one activation type and one kind of GEMV weights at a time, so
// that each variant's code stays small (a kernel holding every variant is ~1 MB of SASS, and
// the SMs' instruction caches missed on every op). What an op needs of the variant: x 0 (f32),
// 1 (bf16) or -1 (any); w one of kWeights* or -1 (any); ok false: no variant takes it.
constexpr int kWeightsBf16 = 0, kWeightsF16 = 1, kWeightsBlocks = 2;
struct MegaNeeds {
  int x = -1, w = -1;
  bool ok = true;
};
MegaNeeds megakernel_needs(const MegaOp& op);

// The most blocks of the megakernel that are resident at once (its grid); 0 where the GPU cannot
// launch it cooperatively.
int megakernel_grid();
// Whether the megakernel has a tile for this attention (a decode one with head dims ≤ 128).
bool megakernel_takes_attention(const AttentionSpec& a);
// Sets m.splits, the blocks sharing each row's keys inside the megakernel (1 for a short cache
// or a small grid), and m.part_at; returns the workspace bytes that takes.
size_t megakernel_attention_share(MegaAttention& m, int grid);
// Runs ops[0, n) (device memory) on `grid` blocks; counters: (n + 1) · kMegaCounterStride zeroed
// device words, left zeroed again when the kernel ends. times (profiling; null otherwise): 2n + 2 device words,
// (~0, 0) pairs before the launch, then per op the globaltimer ns at which its first block had
// its inputs and its last block finished, and last the kernel's first and last moments.
void launch_megakernel(const MegaOp* ops, int n, unsigned* counters, int grid, int x, int w, ErrorWord* err, cudaStream_t s,
                       unsigned long long* times = nullptr);
// Megakernel launches by this process so far (tests: the megakernel really ran).
int64_t megakernel_launches();

}  // namespace rlx::backends::cuda
