// The decode megakernel (megakernel.h): one persistent kernel walking a list of ops, each run as
// the tiles of its own kernel, ordered by a counter per op instead of by kernel boundaries.
#include <algorithm>
#include <atomic>
#include <cstdlib>

#include "backends/cuda/attention_decode_tile.cuh"
#include "backends/cuda/elementwise_tile.cuh"
#include "backends/cuda/gemv_tile.cuh"
#include "backends/cuda/megakernel.h"
#include "backends/cuda/region_tile.cuh"
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

__device__ __forceinline__ unsigned load_acquire(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
// The block's arrival: its stores (ordered before this by the __syncthreads the caller passed)
// released with the count, without a full fence.
__device__ __forceinline__ void add_release(unsigned* p) { asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(p) : "memory"); }

// Thread 0 waits until each dependency's blocks have all arrived (its acquire, then the barrier,
// make their writes visible to every thread here); polls back off so that waiting blocks do not
// crowd the arrivals out of the counter's L2 slice.
__device__ __forceinline__ void wait_for_deps(const MegaOp& op, unsigned* counters, unsigned sleep_cap) {
  if (threadIdx.x == 0) {
    for (int d = 0; d < op.n_deps; ++d) {
      unsigned ns = 32;
      while (load_acquire(counter(counters, op.deps[d])) < op.need[d]) {
        if (sleep_cap) __nanosleep(ns);
        ns = ns < sleep_cap ? 2 * ns : ns;
      }
    }
  }
  __syncthreads();
}

template <class F>
__device__ __forceinline__ void by_float(Dt dt, F&& f) {
  if (dt == Dt::bf16) f(__nv_bfloat16{});
  else if (dt == Dt::f16) f(__half{});
  else f(float{});
}

template <class Wait>
__device__ __forceinline__ void gemv_tile(const MegaGemv& g, bool packed, int64_t t, Wait& wait) {
  if (packed) {  // ggml blocks of any type
    if (g.x_bf16)
      gemv_blocks_tile<__nv_bfloat16>(t, g.block_type, static_cast<const __nv_bfloat16*>(g.x), static_cast<const uint8_t*>(g.w), g.y, g.y_bf16, g.M, g.N, g.K,
                                      g.row_bytes, g.bb, g.be, g.round_w, g.addend, g.split, wait);
    else
      gemv_blocks_tile<float>(t, g.block_type, static_cast<const float*>(g.x), static_cast<const uint8_t*>(g.w), g.y, g.y_bf16, g.M, g.N, g.K, g.row_bytes,
                              g.bb, g.be, g.round_w, g.addend, g.split, wait);
    return;
  }
  const auto* w = static_cast<const uint4*>(g.w);
  auto go = [&](auto xtag, auto wbf16, auto glu, auto norm) {
    using XT = decltype(xtag);
    gemv_half_tile<XT, decltype(wbf16)::value, decltype(glu)::value, decltype(norm)::value, 1>(
        t, static_cast<const XT*>(g.x), w, g.y, g.y_bf16, g.M, g.N, g.K, g.round_w, g.addend, g.split, static_cast<const XT*>(g.norm_g), g.eps, wait);
  };
  auto by_norm = [&](auto xtag, auto wbf16, auto glu) {
    if (g.norm_g) go(xtag, wbf16, glu, std::true_type{});
    else go(xtag, wbf16, glu, std::false_type{});
  };
  auto by_glu = [&](auto xtag, auto wbf16) {
    if (g.glu) by_norm(xtag, wbf16, std::true_type{});
    else by_norm(xtag, wbf16, std::false_type{});
  };
  auto by_w = [&](auto xtag) {
    if (g.w_bf16) by_glu(xtag, std::true_type{});
    else by_glu(xtag, std::false_type{});
  };
  if (g.x_bf16) by_w(__nv_bfloat16{});
  else by_w(float{});
}

// Element-parallel ops: tile t is the elements [t·256, (t + 1)·256) and every G·256th after.
__device__ __forceinline__ int64_t elem_start(int64_t t) { return t * kMegaThreads + threadIdx.x; }

__device__ __forceinline__ unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ void run_tile(const MegaOp& op, int64_t t, int64_t stride, bool& waited, unsigned* counters, unsigned sleep_cap, ErrorWord* err,
                         unsigned long long* began) {
  auto wait = [&] {
    if (!waited) {
      wait_for_deps(op, counters, sleep_cap);
      waited = true;
      if (began && threadIdx.x == 0) atomicMin(began, now_ns());
    }
  };
  switch (op.kind) {
    case MegaKind::gemv_half: gemv_tile(op.gemv, false, t, wait); return;
    case MegaKind::gemv_blocks: gemv_tile(op.gemv, true, t, wait); return;
    case MegaKind::norm_rope: {
      wait();
      const MegaRope& r = op.rope;
      by_float(r.dt, [&](auto tag) {
        using T = decltype(tag);
        norm_rope_row<T>(static_cast<const T*>(r.x), static_cast<const T*>(r.norm_g), r.eps, r.pos, r.pos_dt, static_cast<T*>(r.y), r.r, err, op.node,
                         t * (kMegaThreads / 32) + threadIdx.x / 32);
      });
      return;
    }
    case MegaKind::rope: {
      wait();
      const MegaRope& r = op.rope;
      by_float(r.dt, [&](auto tag) {
        using T = decltype(tag);
        rope_pairs<T, int64_t>(static_cast<const T*>(r.x), r.pos, r.pos_dt, static_cast<T*>(r.y), r.r, err, op.node, elem_start(t), stride * kMegaThreads);
      });
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
      const int64_t i = t % a.Sq, h = (t / a.Sq) % a.H, b = t / (a.Sq * a.H);
      by_float(m.dt, [&](auto tag) {
        using T = decltype(tag);
        attention_decode_row<T, 4, 4, kMegaThreads / 32>(static_cast<const T*>(m.q), static_cast<const T*>(m.k), static_cast<const T*>(m.v), m.bias, m.bias_dt,
                                                          static_cast<T*>(m.y), a, i, h, b);
      });
      return;
    }
    case MegaKind::binary: {
      wait();
      const MegaBinary& e = op.binary;
      by_float(e.dt, [&](auto tag) {
        using T = decltype(tag);
        binary_elems<T>(e.op, static_cast<const T*>(e.a), static_cast<const T*>(e.b), e.y, e.to_bool, e.sp, e.sa, e.sb, e.n, elem_start(t), stride * kMegaThreads);
      });
      return;
    }
    case MegaKind::region: {
      wait();
      const MegaRegion& g = op.region;
      RegionPtrs ptr;
      for (int k = 0; k < kRegionMaxInputs; ++k) ptr.in[k] = g.in[k];
      for (int k = 0; k < kRegionMaxOutputs; ++k) ptr.out[k] = g.out[k];
      region_elems(g.p, ptr, g.n, elem_start(t), stride * kMegaThreads);
      return;
    }
  }
}

// times (profiling, else null): per op the first moment a block had its inputs and the last
// moment a block finished it, then the kernel's first and last moments; in globaltimer ns.
__global__ void __launch_bounds__(kMegaThreads, kMegaBlocksPerSm) megakernel(const MegaOp* __restrict__ ops, int n, unsigned* counters, ErrorWord* err,
                                                                             unsigned long long* times, unsigned sleep_cap) {
  const int64_t G = gridDim.x;
  if (times && threadIdx.x == 0) atomicMin(times + 2 * n, now_ns());
  for (int j = 0; j < n; ++j) {
    const MegaOp& op = ops[j];
    const int64_t tiles = op.tiles;
    // tile t runs on block (first_block + t) mod G: each op starts where the one before ended,
    // so the small ops (a rope's 2 tiles, attention's 16) do not all land on the first blocks
    const int64_t t0 = (blockIdx.x - op.first_block % G + G) % G;
    if (t0 >= tiles) continue;  // nothing of this op here: no arrival expected
    bool waited = false;
    for (int64_t t = t0; t < tiles; t += G) {
      run_tile(op, t, G, waited, counters, sleep_cap, err, times ? times + 2 * j : nullptr);
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

int megakernel_grid() {
  int dev = 0, sms = 0, coop = 0, per_sm = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev);
  if (!coop || cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, megakernel, kMegaThreads, 0) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  // RLX_CUDA_MEGAKERNEL_BLOCKS (experiments): fewer blocks an SM than fit
  if (const char* e = std::getenv("RLX_CUDA_MEGAKERNEL_BLOCKS"); e && std::atoi(e) > 0) per_sm = std::min(per_sm, std::atoi(e));
  return sms * per_sm;
}

bool megakernel_takes_attention(const AttentionSpec& a) { return a.Sq <= kDecodeMaxRows && a.D <= 128 && a.Dv <= 128; }

void launch_megakernel(const MegaOp* ops, int n, unsigned* counters, int grid, ErrorWord* err, cudaStream_t s, unsigned long long* times) {
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
  // RLX_CUDA_MEGAKERNEL_SLEEP (experiments): the longest pause between two polls, ns (0: spin)
  static const unsigned sleep_cap = [] {
    const char* e = std::getenv("RLX_CUDA_MEGAKERNEL_SLEEP");
    return e ? static_cast<unsigned>(std::atoi(e)) : 256u;
  }();
  cudaLaunchKernelEx(&cfg, megakernel, ops, n, counters, err, times, sleep_cap);
  ++g_launches;
}

}  // namespace rlx::backends::cuda
