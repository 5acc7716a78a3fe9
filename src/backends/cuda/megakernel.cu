// The decode megakernel (megakernel.h): one persistent kernel walking a list of ops, each run as
// the tiles of its own kernel, ordered by a counter per op instead of by kernel boundaries.
#include <algorithm>
#include <atomic>

#include "backends/cuda/attention_decode_tile.cuh"
#include "backends/cuda/elementwise_tile.cuh"
#include "backends/cuda/gemv_tile.cuh"
#include "backends/cuda/megakernel.h"
#include "backends/cuda/rope_tile.cuh"
#include "backends/cuda/scatter_tile.cuh"

namespace rlx::backends::cuda {

namespace {

// Blocks an SM keeps: the GEMV tiles stream weights, and more resident warps keep more loads in
// flight; the gated GEMV's registers (~85) bound it at three.
constexpr int kMegaBlocksPerSm = 3;

// The counters sit a cache line apart: hundreds of blocks poll and add to them, and ops sharing
// a line would queue behind each other's traffic in the same L2 slice.
__device__ __forceinline__ unsigned* counter(unsigned* counters, int j) { return counters + j * kMegaCounterStride; }

// Polls read the counter at gpu scope without acquiring: an acquire load makes the SM drop its L1
// (that is how it sees other SMs' writes), and waiting blocks polling with acquires would keep
// flushing the L1 of the blocks beside them mid-tile. One fence after the last poll acquires.
__device__ __forceinline__ unsigned load_relaxed(const unsigned* p) {
  unsigned v;
  asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
// The block's arrival: its stores (ordered before this by the __syncthreads the caller passed)
// released with the count, without a full fence.
__device__ __forceinline__ void add_release(unsigned* p) { asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(p) : "memory"); }

// Thread 0 waits until each dependency's blocks have all arrived (its fence, then the barrier,
// make their writes visible to every thread here); polls back off so that waiting blocks do not
// crowd the arrivals out of the counter's L2 slice.
// The longest pause between two polls, ns: on the H100, spinning, 256 and 1024 ns and one to
// three blocks an SM all ran Qwen3-0.6B decode within 2% of each other (443–473 tokens/s).
constexpr unsigned kPollPauseMax = 256;

__device__ __forceinline__ void wait_for_deps(const MegaOp& op, unsigned* counters) {
  if (threadIdx.x == 0 && op.n_deps > 0) {
    for (int d = 0; d < op.n_deps; ++d) {
      unsigned ns = 32;
      while (load_relaxed(counter(counters, op.deps[d])) < op.need[d]) {
        __nanosleep(ns);
        ns = ns < kPollPauseMax ? 2 * ns : ns;
      }
    }
    asm volatile("fence.acq_rel.gpu;" ::: "memory");  // the relaxed reads above, made an acquire
  }
  __syncthreads();
}

// The GEMV tile of a kernel built for activations XT and weights W (kWeightsBf16, kWeightsF16 or
// kWeightsBlocks): 4 variants (gated, normed), not the 18 of every type, so the kernel's code
// stays small enough for the SMs' instruction caches.
template <class XT, int W, class Wait>
__device__ __forceinline__ void gemv_tile(const MegaGemv& g, int64_t t, Wait& wait) {
  if constexpr (W == kWeightsBlocks) {  // ggml blocks of any type
    gemv_blocks_tile<XT>(t, g.block_type, static_cast<const XT*>(g.x), static_cast<const uint8_t*>(g.w), g.y, g.y_bf16, g.M, g.N, g.K, g.row_bytes, g.bb,
                         g.be, g.round_w, g.addend, g.split, wait);
  } else {
    const auto* w = static_cast<const uint4*>(g.w);
    auto go = [&](auto glu, auto norm) {
      gemv_half_tile<XT, W == kWeightsBf16, decltype(glu)::value, decltype(norm)::value, 1>(t, static_cast<const XT*>(g.x), w, g.y, g.y_bf16, g.M, g.N, g.K,
                                                                                            g.round_w, g.addend, g.split, static_cast<const XT*>(g.norm_g),
                                                                                            g.eps, wait);
    };
    auto by_norm = [&](auto glu) {
      if (g.norm_g) go(glu, std::true_type{});
      else go(glu, std::false_type{});
    };
    if (g.glu) by_norm(std::true_type{});
    else by_norm(std::false_type{});
  }
}

// Element-parallel ops: tile t is the elements [t·256, (t + 1)·256) (their tiles cover the op's
// elements once, so the stride run_tile passes — the op's tile count · 256 — ends each loop
// after one pass).
__device__ __forceinline__ int64_t elem_start(int64_t t) { return t * kMegaThreads + threadIdx.x; }

__device__ __forceinline__ unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// One tile of op; the ops of a run all take XT activations (megakernel_variant).
template <class XT, int W>
__device__ void run_tile(const MegaOp& op, int64_t t, int64_t stride, bool& waited, unsigned* counters, ErrorWord* err, unsigned long long* began) {
  using T = XT;
  auto wait = [&] {
    if (!waited) {
      wait_for_deps(op, counters);
      waited = true;
      if (began && threadIdx.x == 0) atomicMin(began, now_ns());
    }
  };
  switch (op.kind) {
    case MegaKind::gemv_half:
    case MegaKind::gemv_blocks: gemv_tile<XT, W>(op.gemv, t, wait); return;
    case MegaKind::norm_rope: {
      wait();
      const MegaRope& r = op.rope;
      norm_rope_row<T>(static_cast<const T*>(r.x), static_cast<const T*>(r.norm_g), r.eps, r.pos, r.pos_dt, static_cast<T*>(r.y), r.r, err, op.node,
                       t * (kMegaThreads / 32) + threadIdx.x / 32);
      return;
    }
    case MegaKind::rope: {
      wait();
      const MegaRope& r = op.rope;
      rope_pairs<T, int64_t>(static_cast<const T*>(r.x), r.pos, r.pos_dt, static_cast<T*>(r.y), r.r, err, op.node, elem_start(t), stride * kMegaThreads);
      return;
    }
    case MegaKind::scatter: {
      wait();
      const MegaScatter& s = op.scatter;
      scatter_cols(s.dt, s.reduce, s.y, s.idx, s.idx_dt, s.upd, s.outer, s.n, s.K, s.inner, err, op.node, elem_start(t), stride * kMegaThreads);
      return;
    }
    case MegaKind::attention: {
      wait();
      const MegaAttention& m = op.attention;
      const AttentionSpec& a = m.a;
      const int S = m.splits;
      const int64_t r = t / S, i = r % a.Sq, h = (r / a.Sq) % a.H, b = r / (a.Sq * a.H);
      auto* ws = static_cast<unsigned char*>(op.workspace);
      // two keys a step in one walk for every rounding: half the registers and code of the decode
      // kernel's walks (which spilled at this kernel's 80 registers)
      attention_decode_row<T, 4, 4, kMegaThreads / 32, 2, true>(static_cast<const T*>(m.q), static_cast<const T*>(m.k), static_cast<const T*>(m.v), m.bias, m.bias_dt,
                                                        static_cast<T*>(m.y), a, i, h, b, static_cast<int>(t % S), S,
                                                        reinterpret_cast<float*>(ws + m.part_at), reinterpret_cast<unsigned*>(ws));
      return;
    }
    case MegaKind::binary: {
      wait();
      const MegaBinary& e = op.binary;
      binary_elems<T>(e.op, static_cast<const T*>(e.a), static_cast<const T*>(e.b), e.y, false, e.sp, e.sa, e.sb, e.n, elem_start(t), stride * kMegaThreads);
      return;
    }
  }
}

// The block copies *src into shared memory at dst, 16 bytes a thread, without waiting for it
// (cp.async; cp.async.wait_all and a barrier before it is read).
__device__ __forceinline__ void prefetch_op(unsigned char* dst, const MegaOp* src) {
  static_assert(sizeof(MegaOp) % 16 == 0, "MegaOp is copied in 16-byte pieces");
  const auto* from = reinterpret_cast<const unsigned char*>(src);
  for (int c = threadIdx.x; c < static_cast<int>(sizeof(MegaOp) / 16); c += blockDim.x) {
    const unsigned to = static_cast<unsigned>(__cvta_generic_to_shared(dst + 16 * c));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(to), "l"(from + 16 * c) : "memory");
  }
  asm volatile("cp.async.commit_group;" ::: "memory");
}

// times (profiling, else null): per op the first moment a block had its inputs and the last
// moment a block finished it, then the kernel's first and last moments; in globaltimer ns.
template <class XT, int W>
__global__ void __launch_bounds__(kMegaThreads, kMegaBlocksPerSm) megakernel(const MegaOp* __restrict__ ops, int n, unsigned* counters, ErrorWord* err,
                                                                             unsigned long long* times) {
  const int64_t G = gridDim.x;
  if (times && threadIdx.x == 0) atomicMin(times + 2 * n, now_ns());
  // Each op's descriptor is read from shared memory, copied there while the op before runs: read
  // from global memory, its fields are a chain of dependent loads (kind, then the variant's
  // fields) that cost every block microseconds at every op.
  __shared__ alignas(16) unsigned char held[2][sizeof(MegaOp)];
  prefetch_op(held[0], ops);
  for (int j = 0; j < n; ++j) {
    asm volatile("cp.async.wait_all;" ::: "memory");
    __syncthreads();  // op j is here, and every thread is done with op j − 1's copy
    if (j + 1 < n) prefetch_op(held[(j + 1) & 1], ops + j + 1);
    const MegaOp& op = *reinterpret_cast<const MegaOp*>(held[j & 1]);
    const int64_t tiles = op.tiles;
    // tile t runs on block (first_block + t) mod G: each op starts where the one before ended,
    // so the small ops (a rope's 2 tiles, attention's 16) do not all land on the first blocks
    const int64_t t0 = (blockIdx.x - op.first_block % G + G) % G;
    if (t0 >= tiles) continue;  // nothing of this op here: no arrival expected
    bool waited = false;
    for (int64_t t = t0; t < tiles; t += G) {
      run_tile<XT, W>(op, t, tiles, waited, counters, err, times ? times + 2 * j : nullptr);
      __syncthreads();  // the tile's shared memory is free, and its stores are done
    }
    if (threadIdx.x == 0) {
      add_release(counter(counters, j));
      if (times) atomicMax(times + 2 * j + 1, now_ns());
    }
  }
  // the last block out leaves the counters zeroed for the next launch (stream-ordered after this)
  if (threadIdx.x == 0) {
    if (times) atomicMax(times + 2 * n + 1, now_ns());
    __threadfence();
    if (atomicAdd(counter(counters, n), 1u) == static_cast<unsigned>(G - 1)) {
      for (int j = 0; j <= n; ++j) *counter(counters, j) = 0;
      __threadfence();
    }
  }
}

std::atomic<int64_t> g_launches{0};

}  // namespace

int64_t megakernel_launches() { return g_launches.load(); }

MegaNeeds megakernel_needs(const MegaOp& op) {
  auto x_of = [](Dt d) { return d == Dt::f32 ? 0 : d == Dt::bf16 ? 1 : -2; };
  MegaNeeds n;
  switch (op.kind) {
    case MegaKind::gemv_half:
    case MegaKind::gemv_blocks:
      n.x = op.gemv.x_bf16 ? 1 : 0;
      n.w = op.kind == MegaKind::gemv_blocks ? kWeightsBlocks : op.gemv.w_bf16 ? kWeightsBf16 : kWeightsF16;
      break;
    case MegaKind::rope:
    case MegaKind::norm_rope: n.x = x_of(op.rope.dt); break;
    case MegaKind::attention: n.x = x_of(op.attention.dt); break;
    case MegaKind::binary:  // a layer's residual adds and gates: what a decode layer leaves unfused
      n.x = x_of(op.binary.dt);
      n.ok = !op.binary.to_bool && (op.binary.op == Op::add || op.binary.op == Op::sub || op.binary.op == Op::mul);
      break;
    case MegaKind::scatter: break;
  }
  if (n.x == -2) n.ok = false;  // f16 activations: no variant
  return n;
}

namespace {

// The kernel for (x, w), as the dispatch of launch_megakernel and the occupancy query see it.
template <class F>
void with_variant(int x, int w, F&& f) {
  auto by_w = [&](auto xtag) {
    using XT = decltype(xtag);
    if (w == kWeightsF16) f(megakernel<XT, kWeightsF16>);
    else if (w == kWeightsBlocks) f(megakernel<XT, kWeightsBlocks>);
    else f(megakernel<XT, kWeightsBf16>);
  };
  if (x == 1) by_w(__nv_bfloat16{});
  else by_w(float{});
}

}  // namespace

int megakernel_grid() {
  static const int grid = [] {  // the process's one device: asked once, not per compiled graph
    int dev = 0, sms = 0, coop = 0, per_sm = 1 << 20;
    if (cudaGetDevice(&dev) != cudaSuccess) return 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev);
    bool failed = !coop;
    for (int x = 0; x < 2; ++x)
      for (int w = 0; w < 3; ++w)
        with_variant(x, w, [&](auto kernel) {
          int k = 0;
          failed = failed || cudaOccupancyMaxActiveBlocksPerMultiprocessor(&k, kernel, kMegaThreads, 0) != cudaSuccess || k == 0;
          per_sm = std::min(per_sm, k);
        });
    if (failed) {
      cudaGetLastError();
      return 0;
    }
    return sms * per_sm;
  }();
  return grid;
}

bool megakernel_takes_attention(const AttentionSpec& a) { return a.Sq <= kDecodeMaxRows && a.D <= 128 && a.Dv <= 128; }

// A share is at least kMegaShareKeys keys (eight passes of the 8 warps' 2 keys): below that the
// merge costs more than the keys; and the rows' shares together fill at most the grid once.
constexpr int64_t kMegaShareKeys = 128;

size_t megakernel_attention_share(MegaAttention& m, int grid) {
  const AttentionSpec& a = m.a;
  const int64_t rows = a.B * a.H * a.Sq;
  const int64_t by_keys = a.Sk / kMegaShareKeys, by_grid = rows > 0 ? grid / rows : 1;
  m.splits = static_cast<int>(std::max<int64_t>(1, std::min(by_keys, by_grid)));
  m.part_at = (rows * 4 + 15) / 16 * 16;  // the counters, then the shares' results
  if (m.splits <= 1) return 0;
  return static_cast<size_t>(m.part_at + rows * m.splits * (2 + a.Dv) * static_cast<int64_t>(sizeof(float)));
}

void launch_megakernel(const MegaOp* ops, int n, unsigned* counters, int grid, int x, int w, ErrorWord* err, cudaStream_t s, unsigned long long* times) {
  if (n == 0) return;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(static_cast<unsigned>(grid));
  cfg.blockDim = dim3(kMegaThreads);
  cfg.stream = s;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeCooperative;  // every block resident at once, or no launch
  attr[0].val.cooperative = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  with_variant(x, w, [&](auto kernel) { cudaLaunchKernelEx(&cfg, kernel, ops, n, counters, err, times); });
  ++g_launches;
}

}  // namespace rlx::backends::cuda
