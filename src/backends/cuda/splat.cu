// Gaussian splatting kernels (launch.h). Binning: each visible Gaussian's pixel box (the radius
// box cut to the bounding box of its visible ellipse, as the cpu device bins), its tile count,
// an inclusive scan for offsets, (tile << 32 | depth) keys in Gaussian order, cub's stable radix
// sort — so each tile's Gaussians come nearest first, lower index on ties — and each tile's range.
// Compositing: a 16×16 block per tile, batches of 256 Gaussians staged in shared memory, a thread
// per pixel stopping where the op's definition does. The gradient walks front to back once more,
// reading each pixel's later contributions off the forward's image and its final transmittance
// off its alpha, adding each term with atomics (summed over the warp first).
#include <cub/cub.cuh>

#include "backends/cuda/common.cuh"
#include "backends/cuda/launch.h"
#include "ops/splat_bin_math.h"

namespace rlx::backends::cuda {

namespace {

constexpr int kTile = 16, kBlock = kTile * kTile, kMaxChannels = 8;
constexpr float kMinAlpha = 1.0f / 255, kMaxAlpha = 0.99f, kMinT = 1e-4f;

__global__ void project_kernel(splat_math::Intrinsics<float> k, const float* viewmat, int64_t n, const float* means, const float* quats, const float* scales,
                               const float* sh, int k_count, int64_t channels, float* m2, float* conic, float* color, float* depth, int32_t* radii) {
  splat_math::Camera<float> cam = splat_math::make_camera(k, viewmat);
  RLX_GRID_STRIDE(g, n) splat_math::project_one(cam, g, means, quats, scales, sh, k_count, channels, m2, conic, color, depth, radii);
}

// The SH floats per Gaussian staged in shared memory (degree 3, three channels).
constexpr int64_t kShStage = 48;

// A Gaussian a thread. With kStage, the block's SH rows go through shared memory both ways —
// read and written as coalesced runs — instead of each thread reading and writing its own
// 192-byte row 4 bytes at a time (every access its own L2 sector: most of the kernel's time).
// Each thread's 12 viewmat sums are summed over the block (block_reduce) into partial[block].
template <bool kStage>
__global__ void __launch_bounds__(kThreads, 2) project_grad_kernel(splat_math::Intrinsics<float> k, SplatProjectGrad a, float* partial) {
  extern __shared__ float sh_stage[];  // kStage: kThreads SH rows, then as many gradient rows
  splat_math::Camera<float> cam = splat_math::make_camera(k, a.viewmat);
  int64_t g0 = static_cast<int64_t>(blockIdx.x) * kThreads, kc = static_cast<int64_t>(a.k_count) * a.channels;
  int64_t count = a.n - g0 < kThreads ? a.n - g0 : kThreads;
  const float* sh = a.sh + g0 * kc;
  float* g_sh = a.g_sh + g0 * kc;
  if constexpr (kStage) {
    for (int64_t i = threadIdx.x; i < count * kc; i += kThreads) sh_stage[i] = sh[i];
    __syncthreads();
    sh = sh_stage;
    g_sh = sh_stage + kThreads * kc;
  }
  float view[12] = {};
  if (threadIdx.x < count)
    splat_math::project_grad_one(cam, threadIdx.x, a.means + g0 * 3, a.quats + g0 * 4, a.scales + g0 * 3, sh, a.k_count, a.channels, a.cot_m2 + g0 * 2,
                                 a.cot_conic + g0 * 3, a.cot_color + g0 * a.channels, a.cot_depth + g0, a.g_means + g0 * 3, a.g_quats + g0 * 4,
                                 a.g_scales + g0 * 3, g_sh, view);
  if constexpr (kStage) {
    __syncthreads();
    for (int64_t i = threadIdx.x; i < count * kc; i += kThreads) a.g_sh[g0 * kc + i] = g_sh[i];
  }
  __shared__ float scratch[32];
  for (int e = 0; e < 12; ++e) {
    float sum = block_reduce<false>(view[e], scratch);
    if (threadIdx.x == 0) partial[blockIdx.x * 12 + e] = sum;
  }
}

// g_view[e] = Σ over the blocks' partials, a block per entry (the bottom row's four are zero):
// each thread a strided share in double, then a fixed tree — the same sum every run.
__global__ void project_grad_view_kernel(const float* partial, int blocks, float* g_view) {
  int e = blockIdx.x;
  double sum = 0;
  if (e < 12)
    for (int b = threadIdx.x; b < blocks; b += blockDim.x) sum += partial[b * 12 + e];
  __shared__ double warp_sums[32];
  for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = sum;
  __syncthreads();
  if (threadIdx.x >= 32) return;
  sum = threadIdx.x < (blockDim.x >> 5) ? warp_sums[threadIdx.x] : 0.0;
  for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
  if (threadIdx.x == 0) g_view[e] = static_cast<float>(sum);
}

__global__ void boxes_kernel(SplatInputs in, int tiles_x, int4* boxes, int* counts) {
  RLX_GRID_STRIDE(g, in.n) {
    splat_bin::Box b;
    if (in.radii[g] > 0)
      b = splat_bin::box_of(in.m2[g * 2], in.m2[g * 2 + 1], in.radii[g], in.conic[g * 3], in.conic[g * 3 + 1], in.conic[g * 3 + 2], in.opacity[g], in.width,
                            in.height, false);
    boxes[g] = make_int4(b.x0, b.x1, b.y0, b.y1);
    counts[g] = b.empty() ? 0 : (b.x1 / kTile - b.x0 / kTile + 1) * (b.y1 / kTile - b.y0 / kTile + 1);
  }
}

__device__ uint32_t depth_key(float f) {
  uint32_t u = __float_as_uint(f);
  return u & 0x80000000u ? ~u : u | 0x80000000u;
}

__global__ void keys_kernel(SplatInputs in, const int4* boxes, const int* ends, int tiles_x, unsigned long long* keys, int* ids) {
  RLX_GRID_STRIDE(g, in.n) {
    int at = g ? ends[g - 1] : 0;
    if (at == ends[g]) continue;
    int4 b = boxes[g];
    unsigned long long dk = depth_key(in.depth[g]);
    for (int ty = b.z / kTile; ty <= b.w / kTile; ++ty)
      for (int tx = b.x / kTile; tx <= b.y / kTile; ++tx) {
        keys[at] = (static_cast<unsigned long long>(ty * tiles_x + tx) << 32) | dk;
        ids[at++] = static_cast<int>(g);
      }
  }
}

__global__ void ranges_kernel(const unsigned long long* keys, int pairs, int2* ranges) {
  RLX_GRID_STRIDE(i, pairs) {
    int tile = static_cast<int>(keys[i] >> 32);
    if (i == 0 || static_cast<int>(keys[i - 1] >> 32) != tile) ranges[tile].x = static_cast<int>(i);
    if (i == pairs - 1 || static_cast<int>(keys[i + 1] >> 32) != tile) ranges[tile].y = static_cast<int>(i + 1);
  }
}


// One batch of a tile's Gaussians in shared memory.
struct Batch {
  int id[kBlock];
  float2 m[kBlock];
  float4 conic_o[kBlock];  // a, b, c, opacity
  int4 box[kBlock];
};

__device__ void stage(Batch& s, const SplatInputs& in, const int* ids, const int4* boxes, int i, int slot) {
  int g = ids[i];
  s.id[slot] = g;
  s.m[slot] = make_float2(in.m2[g * 2], in.m2[g * 2 + 1]);
  s.conic_o[slot] = make_float4(in.conic[g * 3], in.conic[g * 3 + 1], in.conic[g * 3 + 2], in.opacity[g]);
  s.box[slot] = boxes[g];
}

// Sixteen values summed across the warp at once: at each step a lane keeps half of its values
// and takes its partner's sum of them (the other half going the other way), so after the steps
// of 16, 8, 4 and 2 lanes apart each pair of lanes holds one value's sum over its 16 lanes, and a
// last shuffle adds the pair. Returns the sum of value (lane >> 1) over the whole warp.
template <int kHalf, int kDist>
__device__ __forceinline__ void warp_sum16_step(float (&v)[16], int lane) {
  bool upper = lane & kDist;
#pragma unroll
  for (int i = 0; i < kHalf; ++i) {
    float keep = upper ? v[i + kHalf] : v[i], send = upper ? v[i] : v[i + kHalf];
    v[i] = keep + __shfl_xor_sync(0xffffffffu, send, kDist);
  }
}
__device__ __forceinline__ float warp_sum16(float (&v)[16], int lane) {
  warp_sum16_step<8, 16>(v, lane);
  warp_sum16_step<4, 8>(v, lane);
  warp_sum16_step<2, 4>(v, lane);
  warp_sum16_step<1, 2>(v, lane);
  return v[0] + __shfl_xor_sync(0xffffffffu, v[0], 1);
}

// Gaussian `slot`'s α at the pixel, or a value below kMinAlpha when it is skipped there.
__device__ float weigh(const Batch& s, int slot, int x, int y, float px, float py, float& dx, float& dy, float& gauss) {
  int4 b = s.box[slot];
  if (x < b.x || x > b.y || y < b.z || y > b.w) return 0;
  float4 co = s.conic_o[slot];
  dx = px - s.m[slot].x, dy = py - s.m[slot].y;
  float sigma = 0.5f * (co.x * dx * dx + co.z * dy * dy) + co.y * dx * dy;
  if (sigma < 0) return 0;
  gauss = __expf(-sigma);
  return fminf(kMaxAlpha, co.w * gauss);
}

// This thread's pixel composited front to back over the tile's Gaussians, batches staged in
// shared memory by the whole block: contribute(list index, batch slot, α, T before it) for each
// Gaussian the pixel takes; returns the final transmittance. Every thread of the block calls it.
template <class Contribute>
__device__ float walk_front_to_back(Batch& s, const SplatInputs& in, const int* ids, const int4* boxes, int2 range, int x, int y, bool done,
                                    Contribute contribute) {
  int t_id = threadIdx.y * kTile + threadIdx.x;
  float px = x + 0.5f, py = y + 0.5f, t = 1;
  for (int base = range.x; base < range.y; base += kBlock) {
    if (__syncthreads_count(done) == kBlock) break;
    if (base + t_id < range.y) stage(s, in, ids, boxes, base + t_id, t_id);
    __syncthreads();
    int count = min(kBlock, range.y - base);
    for (int j = 0; !done && j < count; ++j) {
      float dx, dy, gauss;
      float alpha = weigh(s, j, x, y, px, py, dx, dy, gauss);
      if (alpha < kMinAlpha) continue;
      float next = t * (1 - alpha);
      if (next < kMinT) {
        done = true;
        break;
      }
      contribute(base + j, j, alpha, t);
      t = next;
    }
  }
  return t;
}

__global__ void __launch_bounds__(kBlock) render_kernel(SplatInputs in, const int2* ranges, const int* ids, const int4* boxes, int tiles_x, float* image,
                                                      float* alpha_out) {
  __shared__ Batch s;
  int x = blockIdx.x * kTile + threadIdx.x, y = blockIdx.y * kTile + threadIdx.y;
  bool inside = x < in.width && y < in.height;
  float acc[kMaxChannels] = {};
  float t = walk_front_to_back(s, in, ids, boxes, ranges[blockIdx.y * tiles_x + blockIdx.x], x, y, !inside, [&](int, int j, float alpha, float t_before) {
    const float* c = in.color + static_cast<int64_t>(s.id[j]) * in.channels;
    for (int k = 0; k < in.channels; ++k) acc[k] += alpha * t_before * c[k];
  });
  if (!inside) return;
  int64_t pixel = static_cast<int64_t>(y) * in.width + x;
  for (int k = 0; k < in.channels; ++k) image[pixel * in.channels + k] = acc[k] + (in.background ? t * in.background[k] : 0.f);
  alpha_out[pixel] = 1 - t;
}

// The gradient in one front-to-back walk: each pixel composites as the forward did (the same
// arithmetic, so it stops at the same Gaussian) and reads what its later Gaussians and the
// background added off the forward's image — S = image − Σ so far — and its final
// transmittance off the forward's alpha, instead of compositing the pixel again first.
__global__ void __launch_bounds__(kBlock) render_grad_kernel(SplatInputs in, SplatGrads g, const int2* ranges, const int* ids, const int4* boxes,
                                                           int tiles_x) {
  __shared__ Batch s;
  int x = blockIdx.x * kTile + threadIdx.x, y = blockIdx.y * kTile + threadIdx.y, t_id = threadIdx.y * kTile + threadIdx.x;
  int lane = t_id & 31;
  bool inside = x < in.width && y < in.height;
  float px = x + 0.5f, py = y + 0.5f;
  int2 range = ranges[blockIdx.y * tiles_x + blockIdx.x];
  int64_t pixel = static_cast<int64_t>(y) * in.width + x;
  // channel loops run to kMaxChannels with the count tested inside: unrolled, so these arrays
  // stay in registers (a loop to in.channels would index them at run time, from local memory)
  float gi[kMaxChannels] = {}, later[kMaxChannels] = {};  // later: the image still to come, S
  float t_final = 1, ga_t = 0;
  if (inside) {
    t_final = 1 - g.alpha[pixel];
#pragma unroll
    for (int k = 0; k < kMaxChannels; ++k)
      if (k < in.channels) {
        gi[k] = g.g_image[pixel * in.channels + k];
        later[k] = g.image[pixel * in.channels + k];
      }
    ga_t = g.g_alpha[pixel] * t_final;
  }
  // d background = Σ ḡ·T over the pixels: a warp's sum, one atomic
#pragma unroll
  for (int k = 0; k < kMaxChannels; ++k) {
    if (k >= in.channels) break;
    float v = inside ? gi[k] * t_final : 0.f;
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    if (lane == 0 && v != 0.f) atomicAdd(g.background + k, v);
  }
  bool done = !inside;
  float t = 1;
  for (int base = range.x; base < range.y; base += kBlock) {
    if (__syncthreads_count(done) == kBlock) break;
    if (base + t_id < range.y) stage(s, in, ids, boxes, base + t_id, t_id);
    __syncthreads();
    int count = min(kBlock, range.y - base);
    // The warp's 32 pixels meet Gaussian j together (j is the same in every lane), so its
    // gradients are summed across the warp and added by one atomic each: atomics from every lane
    // to the same address serialized in L2 (7.1 ms of a 1080p/1M step on an H100). The sums are
    // a transposed butterfly (warp_sum16): 16 shuffles for all of them instead of 5 per value,
    // each sum ending in its own pair of lanes, whose even lane adds it.
    for (int j = 0; j < count; ++j) {
      if (__all_sync(0xffffffffu, done)) break;
      float dx = 0, dy = 0, gauss = 0, alpha = 0;
      bool take = !done && (alpha = weigh(s, j, x, y, px, py, dx, dy, gauss)) >= kMinAlpha;
      float next = t * (1 - alpha);
      if (take && next < kMinT) {  // where the forward stopped
        done = true;
        take = false;
      }
      if (!__any_sync(0xffffffffu, take)) continue;
      int gid = s.id[j];
      // slots: opacity, means2d x y, conic a b c, then the colours
      float v[16] = {};
      if (take) {
        float inv = 1 / (1 - alpha), w = alpha * t, d_alpha = ga_t * inv;
        const float* c = in.color + static_cast<int64_t>(gid) * in.channels;
#pragma unroll
        for (int k = 0; k < kMaxChannels; ++k)
          if (k < in.channels) {
            v[6 + k] = gi[k] * w;
            later[k] -= w * c[k];
            d_alpha += gi[k] * (t * c[k] - later[k] * inv);
          }
        float4 co = s.conic_o[j];
        if (co.w * gauss < kMaxAlpha) {  // clamped: α does not move
          v[0] = d_alpha * gauss;
          float d_sigma = -d_alpha * alpha;
          v[1] = -d_sigma * (co.x * dx + co.y * dy);
          v[2] = -d_sigma * (co.y * dx + co.z * dy);
          v[3] = d_sigma * 0.5f * dx * dx;
          v[4] = d_sigma * dx * dy;
          v[5] = d_sigma * 0.5f * dy * dy;
        }
        t = next;
      }
      int slot = lane >> 1;
      float sum = warp_sum16(v, lane);
      if ((lane & 1) || slot >= 6 + in.channels || sum == 0.f) continue;
      float* at = slot == 0 ? g.opacity + gid
                  : slot < 3 ? g.m2 + gid * 2 + (slot - 1)
                  : slot < 6 ? g.conic + gid * 3 + (slot - 3)
                             : g.color + static_cast<int64_t>(gid) * in.channels + (slot - 6);
      atomicAdd(at, sum);
    }
  }
}

// Device memory for one launch, freed on the stream when it goes.
struct StreamBuffer {
  void* p = nullptr;
  cudaStream_t stream;
  bool ok = true;
  StreamBuffer(size_t bytes, cudaStream_t s) : stream(s) { ok = cudaMallocAsync(&p, bytes ? bytes : 1, s) == cudaSuccess; }
  ~StreamBuffer() {
    if (p) cudaFreeAsync(p, stream);
  }
  template <class T>
  T* as() const { return static_cast<T*>(p); }
};

// Binned Gaussians: boxes and each tile's range of sorted Gaussian ids.
struct Binned {
  int tiles_x, tiles_y;
  std::unique_ptr<StreamBuffer> boxes, ranges, ids;
};

bool bin(const SplatInputs& in, cudaStream_t stream, Binned& b) {
  b.tiles_x = (in.width + kTile - 1) / kTile, b.tiles_y = (in.height + kTile - 1) / kTile;
  int tiles = b.tiles_x * b.tiles_y;
  int n = in.n;
  b.boxes = std::make_unique<StreamBuffer>(sizeof(int4) * static_cast<size_t>(n), stream);
  b.ranges = std::make_unique<StreamBuffer>(sizeof(int2) * static_cast<size_t>(tiles), stream);
  StreamBuffer counts(sizeof(int) * static_cast<size_t>(n), stream), ends(sizeof(int) * static_cast<size_t>(n), stream);
  if (!b.boxes->ok || !b.ranges->ok || !counts.ok || !ends.ok) return false;
  cudaMemsetAsync(b.ranges->p, 0, sizeof(int2) * static_cast<size_t>(tiles), stream);
  if (n == 0) {
    b.ids = std::make_unique<StreamBuffer>(4, stream);
    return b.ids->ok;
  }
  boxes_kernel<<<grid_for(n), kThreads, 0, stream>>>(in, b.tiles_x, b.boxes->as<int4>(), counts.as<int>());
  size_t scan_bytes = 0;
  cub::DeviceScan::InclusiveSum(nullptr, scan_bytes, counts.as<int>(), ends.as<int>(), n, stream);
  StreamBuffer scan_temp(scan_bytes, stream);
  if (!scan_temp.ok) return false;
  cub::DeviceScan::InclusiveSum(scan_temp.p, scan_bytes, counts.as<int>(), ends.as<int>(), n, stream);
  int pairs = 0;
  if (cudaMemcpyAsync(&pairs, ends.as<int>() + n - 1, sizeof(int), cudaMemcpyDeviceToHost, stream) != cudaSuccess) return false;
  if (cudaStreamSynchronize(stream) != cudaSuccess || pairs < 0) return false;
  b.ids = std::make_unique<StreamBuffer>(sizeof(int) * static_cast<size_t>(pairs), stream);
  if (!b.ids->ok) return false;
  if (pairs == 0) return true;
  StreamBuffer keys(8 * static_cast<size_t>(pairs), stream), keys_sorted(8 * static_cast<size_t>(pairs), stream), ids(4 * static_cast<size_t>(pairs), stream);
  if (!keys.ok || !keys_sorted.ok || !ids.ok) return false;
  keys_kernel<<<grid_for(n), kThreads, 0, stream>>>(in, b.boxes->as<int4>(), ends.as<int>(), b.tiles_x, keys.as<unsigned long long>(), ids.as<int>());
  int tile_bits = 1;
  while ((1 << tile_bits) < tiles) ++tile_bits;
  size_t sort_bytes = 0;
  cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, keys.as<unsigned long long>(), keys_sorted.as<unsigned long long>(), ids.as<int>(), b.ids->as<int>(), pairs,
                                  0, 32 + tile_bits, stream);
  StreamBuffer sort_temp(sort_bytes, stream);
  if (!sort_temp.ok) return false;
  cub::DeviceRadixSort::SortPairs(sort_temp.p, sort_bytes, keys.as<unsigned long long>(), keys_sorted.as<unsigned long long>(), ids.as<int>(),
                                  b.ids->as<int>(), pairs, 0, 32 + tile_bits, stream);
  ranges_kernel<<<grid_for(pairs), kThreads, 0, stream>>>(keys_sorted.as<unsigned long long>(), pairs, b.ranges->as<int2>());
  return cudaGetLastError() == cudaSuccess;
}

}  // namespace

void launch_splat_project(const splat_math::Intrinsics<float>& k, const float* viewmat, int64_t n, const float* means, const float* quats,
                          const float* scales, const float* sh, int k_count, int64_t channels, float* m2, float* conic, float* color, float* depth,
                          int32_t* radii, cudaStream_t stream) {
  if (n > 0) project_kernel<<<grid_for(n), kThreads, 0, stream>>>(k, viewmat, n, means, quats, scales, sh, k_count, channels, m2, conic, color, depth, radii);
}

size_t splat_project_grad_scratch(int64_t n) { return sizeof(float) * 12 * static_cast<size_t>(std::max<int64_t>((n + kThreads - 1) / kThreads, 1)); }

void launch_splat_project_grad(const splat_math::Intrinsics<float>& k, const SplatProjectGrad& a, void* scratch, cudaStream_t stream) {
  int blocks = static_cast<int>((a.n + kThreads - 1) / kThreads);
  float* partial = static_cast<float*>(scratch);
  int64_t kc = static_cast<int64_t>(a.k_count) * a.channels;
  if (blocks > 0) {
    if (kc <= kShStage) {
      // once per process: the most a block stages (SH degree 3, three channels, both ways)
      static const bool sized = cudaFuncSetAttribute(project_grad_kernel<true>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                     static_cast<int>(2 * sizeof(float) * kThreads * kShStage)) == cudaSuccess;
      (void)sized;
      size_t smem = 2 * sizeof(float) * kThreads * static_cast<size_t>(kc);
      project_grad_kernel<true><<<blocks, kThreads, smem, stream>>>(k, a, partial);
    } else {
      project_grad_kernel<false><<<blocks, kThreads, 0, stream>>>(k, a, partial);
    }
  }
  project_grad_view_kernel<<<16, 256, 0, stream>>>(partial, blocks, a.g_viewmat);
}

bool launch_splat_rasterize(const SplatInputs& in, float* image, float* alpha, cudaStream_t stream) {
  Binned b;
  if (!bin(in, stream, b)) return false;
  render_kernel<<<dim3(b.tiles_x, b.tiles_y), dim3(kTile, kTile), 0, stream>>>(in, b.ranges->as<int2>(), b.ids->as<int>(), b.boxes->as<int4>(), b.tiles_x,
                                                                             image, alpha);
  return cudaGetLastError() == cudaSuccess;
}

bool launch_splat_rasterize_grad(const SplatInputs& in, const SplatGrads& g, cudaStream_t stream) {
  int64_t n = in.n, c = in.channels;
  for (auto [p, count] : {std::pair<float*, int64_t>{g.m2, n * 2}, {g.conic, n * 3}, {g.color, n * c}, {g.opacity, n}, {g.background, c}})
    if (count) cudaMemsetAsync(p, 0, sizeof(float) * static_cast<size_t>(count), stream);
  Binned b;
  if (!bin(in, stream, b)) return false;
  render_grad_kernel<<<dim3(b.tiles_x, b.tiles_y), dim3(kTile, kTile), 0, stream>>>(in, g, b.ranges->as<int2>(), b.ids->as<int>(), b.boxes->as<int4>(),
                                                                                  b.tiles_x);
  return cudaGetLastError() == cudaSuccess;
}

}  // namespace rlx::backends::cuda
