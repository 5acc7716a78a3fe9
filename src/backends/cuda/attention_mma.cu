// Flash attention on tensor cores (FlashAttention-2's forward pass with mma.sync m16n8k16):
// a block of 4 warps takes 64 query rows of one (batch, head), each warp 16 of them, and walks
// the keys in tiles of 64 staged in shared memory as bf16 (or f16). S = Q·Kᵀ and O += P·V are
// tensor-core products with f32 accumulators; scale, softcap, bias, masks and the online
// softmax stay in registers in f32. Used where the operands may be rounded to 16 bits: compute
// = bf16 or f16 (the bf16 / f16 precision policies) or 16-bit inputs — f32 attention keeps the
// exact kernel.
#include <algorithm>

#include "backends/cuda/common.cuh"

namespace rlx::backends::cuda {

namespace {

constexpr int kBc = 64;  // keys per tile; a block has W warps of 16 query rows each
constexpr int kLdBias = kBc + 8;  // a staged per-row bias tile's row stride (floats)
// A bias at or below this masks its score: with a running row maximum above kSettledMax, the
// score's exp(score + bias - max) is exactly 0 in f32 for any score below 1e19.
constexpr float kMaskedBias = -1e20f, kSettledMax = -1e10f;

template <bool kBf16>
__device__ __forceinline__ uint16_t to_bits(float x) {
  if constexpr (kBf16) return __bfloat16_as_ushort(__float2bfloat16_rn(x));
  else return __half_as_ushort(__float2half_rn(x));
}

template <bool kBf16>
__device__ __forceinline__ uint32_t pack(float lo, float hi) {
  return static_cast<uint32_t>(to_bits<kBf16>(lo)) | (static_cast<uint32_t>(to_bits<kBf16>(hi)) << 16);
}


template <bool kBf16>
__device__ __forceinline__ void mma(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  if constexpr (kBf16)
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  else
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Four 8×8 tiles of 16-bit values from shared memory in one instruction: lane l gives the
// address of row l % 8 of tile l / 8, and receives, of each tile, row l / 4, columns 2(l % 4)
// and 2(l % 4) + 1 — an mma B fragment half when the tile's rows are its columns (keys of K) —
// or with .trans, the same of the transposed tile (V, whose rows are the product's k).
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const uint16_t* p) {
  const uint32_t a = static_cast<uint32_t>(__cvta_generic_to_shared(p));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n" : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a));
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], const uint16_t* p) {
  const uint32_t a = static_cast<uint32_t>(__cvta_generic_to_shared(p));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n" : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a));
}

__device__ __forceinline__ float load_bias(const void* bias, Dt dt, int64_t off) {
  if (dt == Dt::f32) return static_cast<const float*>(bias)[off];
  return static_cast<float>(load_f64(bias, dt, off));
}

// Four consecutive elements, loaded with one 16-byte (f32) or 8-byte (16-bit) access.
template <class T>
struct Vec4;
template <>
struct Vec4<float> {
  using type = float4;
  static __device__ __forceinline__ void get(const type& v, float (&f)[4]) { f[0] = v.x, f[1] = v.y, f[2] = v.z, f[3] = v.w; }
};
template <>
struct Vec4<__half> {
  using type = uint2;
  static __device__ __forceinline__ void get(const type& v, float (&f)[4]) {
    const __half* h = reinterpret_cast<const __half*>(&v);
    for (int i = 0; i < 4; ++i) f[i] = __half2float(h[i]);
  }
};
template <>
struct Vec4<__nv_bfloat16> {
  using type = uint2;
  static __device__ __forceinline__ void get(const type& v, float (&f)[4]) {
    const __nv_bfloat16* h = reinterpret_cast<const __nv_bfloat16*>(&v);
    for (int i = 0; i < 4; ++i) f[i] = __bfloat162float(h[i]);
  }
};

// Rows [row0, row0 + R) of an operand (row j at base + j·stride, D contiguous elements) into
// shared memory as 16-bit values, rows past `valid` as zeros. Several vector loads are in flight
// per thread before the first is used: one memory latency per chunk, not one per element.
template <int R, int D, int W, bool kBf16, class T>
__device__ __forceinline__ void load_tile(uint16_t* dst, int ld, const T* src, int64_t base, int64_t stride, int64_t row0, int64_t valid) {
  using V = typename Vec4<T>::type;
  constexpr int kVecs = R * D / 4, kPer = kVecs / (W * 32), kChunk = kPer < 4 ? kPer : D >= 128 ? 2 : 4;
  static_assert(kVecs % (W * 32) == 0 && kPer % kChunk == 0, "tile must split evenly over the block");
#pragma unroll 1
  for (int c = 0; c < kPer; c += kChunk) {
    V v[kChunk];
#pragma unroll
    for (int u = 0; u < kChunk; ++u) {
      int e = threadIdx.x + (c + u) * W * 32, r = e / (D / 4), d = (e % (D / 4)) * 4;
      int64_t j = row0 + r;
      if (j < valid) v[u] = *reinterpret_cast<const V*>(src + base + j * stride + d);
      else v[u] = V{};
    }
#pragma unroll
    for (int u = 0; u < kChunk; ++u) {
      int e = threadIdx.x + (c + u) * W * 32, r = e / (D / 4), d = (e % (D / 4)) * 4;
      float f[4];
      Vec4<T>::get(v[u], f);
      uint2 packed = make_uint2(pack<kBf16>(f[0], f[1]), pack<kBf16>(f[2], f[3]));
      *reinterpret_cast<uint2*>(dst + r * ld + d) = packed;
    }
  }
}

// The key and value tiles of rows [row0, row0 + kBc) together, as load_tile stages each: up to
// 4 vector loads of each operand in flight per thread before the first is used (more spill the
// registers that hold O).
template <int D, int W, bool kBf16, class T>
__device__ __forceinline__ void load_kv(uint16_t* ks, uint16_t* vs, int ld, const T* k, int64_t k_base, int64_t k_stride, const T* v, int64_t v_base,
                                        int64_t v_stride, int64_t row0, int64_t valid) {
  using V = typename Vec4<T>::type;
  constexpr int kVecs = kBc * D / 4, kPer = kVecs / (W * 32), kChunk = kPer < 4 ? kPer : 4;
  static_assert(kVecs % (W * 32) == 0 && kPer % kChunk == 0, "tile must split evenly over the block");
#pragma unroll 1
  for (int c = 0; c < kPer; c += kChunk) {
    V kv[kChunk], vv[kChunk];
#pragma unroll
    for (int u = 0; u < kChunk; ++u) {
      int e = threadIdx.x + (c + u) * W * 32, r = e / (D / 4), d = (e % (D / 4)) * 4;
      int64_t j = row0 + r;
      kv[u] = j < valid ? *reinterpret_cast<const V*>(k + k_base + j * k_stride + d) : V{};
      vv[u] = j < valid ? *reinterpret_cast<const V*>(v + v_base + j * v_stride + d) : V{};
    }
#pragma unroll
    for (int u = 0; u < kChunk; ++u) {
      int e = threadIdx.x + (c + u) * W * 32, r = e / (D / 4), d = (e % (D / 4)) * 4;
      float f[4];
      Vec4<T>::get(kv[u], f);
      *reinterpret_cast<uint2*>(ks + r * ld + d) = make_uint2(pack<kBf16>(f[0], f[1]), pack<kBf16>(f[2], f[3]));
      Vec4<T>::get(vv[u], f);
      *reinterpret_cast<uint2*>(vs + r * ld + d) = make_uint2(pack<kBf16>(f[0], f[1]), pack<kBf16>(f[2], f[3]));
    }
  }
}

// Fragment layouts of m16n8k16 (g = lane / 4, t = lane % 4): A holds rows g and g+8 at columns
// 2t, 2t+1 (+8); B holds k = 2t, 2t+1 (+8) of column g; C holds rows g, g+8 at columns 2t, 2t+1.
template <int D, int DV, int W, bool kBf16, class T>
__global__ void __launch_bounds__(W * 32) attention_mma_kernel(const T* q, const T* k, const T* v, const void* bias, Dt bias_dt, T* y,
                                                                    float* part, const __grid_constant__ AttentionSpec a) {
  constexpr int kBr = 16 * W, LDQ = D + 8, LDK = D + 8, LDV = DV + 8;  // padded rows: fragment loads hit distinct banks
  extern __shared__ __align__(16) uint16_t smem[];
  uint16_t* qs = smem;
  uint16_t* ks = qs + kBr * LDQ;
  uint16_t* vs = ks + kBc * LDK;
  float* bsm = reinterpret_cast<float*>(vs + kBc * LDV);  // [kBc]: a bias that depends on the key alone
  float* rbs = bsm + kBc;                                  // [kBr][kLdBias]: a bias per (row, key), when it has rows
  const int warp = threadIdx.x / 32, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  // blockIdx.z: the batch and the share of the keys (split) this block takes
  const int64_t b = blockIdx.z / a.splits, split = blockIdx.z % a.splits, h = blockIdx.y, hk = h / (a.H / a.Hk);
  const int64_t i0 = static_cast<int64_t>(blockIdx.x) * kBr;

  load_tile<kBr, D, W, kBf16>(qs, LDQ, q, b * a.q_b + h * a.q_h, a.q_s, i0, a.Sq);
  __syncthreads();
  const int r0 = warp * 16 + g;
  uint32_t qf[D / 16][4];
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
    const uint16_t* p = qs + kk * 16 + 2 * t;
    qf[kk][0] = *reinterpret_cast<const uint32_t*>(p + r0 * LDQ);
    qf[kk][1] = *reinterpret_cast<const uint32_t*>(p + (r0 + 8) * LDQ);
    qf[kk][2] = *reinterpret_cast<const uint32_t*>(p + r0 * LDQ + 8);
    qf[kk][3] = *reinterpret_cast<const uint32_t*>(p + (r0 + 8) * LDQ + 8);
  }

  // this thread's two rows and the keys each may see
  // positions fit 32 bits: the kernel's index math stays 32-bit where it runs per score
  int row[2] = {static_cast<int>(i0) + r0, static_cast<int>(i0) + r0 + 8}, lo[2], hi[2];
  for (int x = 0; x < 2; ++x) {
    int pos = row[x] + static_cast<int>(a.Sk - a.Sq);
    lo[x] = a.mask == 2 ? max(0, pos - static_cast<int>(a.window) + 1) : 0;
    hi[x] = (a.mask == 1 || a.mask == 2) ? min(static_cast<int>(a.Sk), pos + 1) : static_cast<int>(a.Sk);
    if (row[x] >= a.Sq) hi[x] = 0;  // padding rows see nothing
  }
  // the common additive mask [B, 1, 1, Sk] (or [B, H, 1, Sk]): staged per key tile
  const bool key_bias = bias && a.bias_s[2] == 0, row_bias = bias && !key_bias;
  const bool vec_bias = row_bias && bias_dt == Dt::f32 && a.bias_s[3] == 1 && a.bias_s[2] % 4 == 0 && a.Sk % 4 == 0 &&
                        (b * a.bias_s[0] + h * a.bias_s[1]) % 4 == 0 && reinterpret_cast<uintptr_t>(bias) % 16 == 0;
  const int64_t bias_base = b * a.bias_s[0] + h * a.bias_s[1];
  // the block's key range: the union of its rows'
  int64_t last = min(i0 + kBr, a.Sq) - 1, j_begin = 0, j_end = a.Sk;
  if (a.mask == 1 || a.mask == 2) j_end = min(a.Sk, last + a.Sk - a.Sq + 1);
  if (a.mask == 2) j_begin = max(int64_t{0}, i0 + a.Sk - a.Sq - a.window + 1);
  j_begin -= j_begin % kBc;
  if (a.splits > 1) {  // this block's share: a run of whole key tiles
    const int64_t tiles = (a.Sk + kBc - 1) / kBc, per = (tiles + a.splits - 1) / a.splits;
    j_begin = max(j_begin, split * per * kBc);
    j_end = min(j_end, (split + 1) * per * kBc);
  }

  float o[DV / 8][4];
#pragma unroll
  for (int n = 0; n < DV / 8; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0;
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0, 0};

  for (int64_t c0 = j_begin; c0 < j_end; c0 += kBc) {
    __syncthreads();
    if (row_bias) {
      // The tile's bias, staged with coalesced loads. A tile whose every score is masked (a causal
      // mask given as a bias: keys after the block's last position) adds exact zeros to rows that
      // have already seen an allowed key — it is skipped, K and V unread. (It shortens the light
      // blocks of a causal prefill; the heaviest, which set the kernel's time, skip nothing.)
      bool live = false;
      if (vec_bias) {  // f32 rows of keys, 16-byte aligned: four per load
#pragma unroll 4
        for (int u = 0; u < kBr * kBc / (4 * W * 32); ++u) {
          int e = (threadIdx.x + u * W * 32) * 4, r = e / kBc, jj = e % kBc;
          int64_t i = i0 + r, j = c0 + jj;
          float4 bv = make_float4(-INFINITY, -INFINITY, -INFINITY, -INFINITY);
          if (i < a.Sq && j < a.Sk) {  // Sk is a multiple of 4 here: the four are all in range
            bv = *reinterpret_cast<const float4*>(static_cast<const float*>(bias) + bias_base + i * a.bias_s[2] + j);
            live |= !(bv.x <= kMaskedBias) || !(bv.y <= kMaskedBias) || !(bv.z <= kMaskedBias) || !(bv.w <= kMaskedBias);
          }
          *reinterpret_cast<float4*>(rbs + r * kLdBias + jj) = bv;
        }
      } else {
#pragma unroll 8
        for (int u = 0; u < kBr * kBc / (W * 32); ++u) {
          int e = threadIdx.x + u * W * 32, r = e / kBc, jj = e % kBc;
          int64_t i = i0 + r, j = c0 + jj;
          float bv = -INFINITY;
          if (i < a.Sq && j < a.Sk) {
            bv = load_bias(bias, bias_dt, bias_base + i * a.bias_s[2] + j * a.bias_s[3]);
            live |= !(bv <= kMaskedBias);  // NaN counts as live
          }
          rbs[r * kLdBias + jj] = bv;
        }
      }
      bool settled = (row[0] >= a.Sq || m[0] > kSettledMax) && (row[1] >= a.Sq || m[1] > kSettledMax);
      if (!__syncthreads_or(live || !settled)) continue;
    }
    static_assert(D == DV && LDK == LDV, "the launcher pairs equal key and value widths");
    load_kv<D, W, kBf16>(ks, vs, LDK, k, b * a.k_b + hk * a.k_h, a.k_s, v, b * a.v_b + hk * a.v_h, a.v_s, c0, a.Sk);
    if (key_bias)
      for (int jj = threadIdx.x; jj < kBc; jj += blockDim.x) {
        int64_t j = c0 + jj;
        bsm[jj] = j < a.Sk ? load_bias(bias, bias_dt, bias_base + j * a.bias_s[3]) : 0.0f;
      }
    __syncthreads();

    // S = Q·Kᵀ: for keys n·8…n·8+7, one ldmatrix gives the B fragments of two 16-wide steps
    // of the head dim (tiles: dims +0, +8, +16, +24 of those keys' rows)
    static_assert(D % 32 == 0 && DV % 16 == 0, "ldmatrix takes two k-steps of K and two n-steps of V at once");
    float s[kBc / 8][4];
    const uint16_t* k_lane = ks + (lane & 7) * LDK + (lane >> 3) * 8;
#pragma unroll
    for (int n = 0; n < kBc / 8; ++n) {
      s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0;
#pragma unroll
      for (int kk = 0; kk < D / 16; kk += 2) {
        uint32_t kb[4];
        ldmatrix_x4(kb, k_lane + n * 8 * LDK + kk * 16);
        mma<kBf16>(s[n], qf[kk], kb[0], kb[1]);
        mma<kBf16>(s[n], qf[kk + 1], kb[2], kb[3]);
      }
    }
    // scores → masked, scaled logits; the tile's row maxima
    float mx[2] = {-INFINITY, -INFINITY};
    const int tile = static_cast<int>(c0);
    // every key of the tile allowed for both rows (no mask inside it): no per-score tests
    const bool open = tile >= lo[0] && tile >= lo[1] && tile + kBc <= hi[0] && tile + kBc <= hi[1];
#pragma unroll
    for (int n = 0; n < kBc / 8; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        int x = e >> 1, jj = n * 8 + 2 * t + (e & 1), j = tile + jj;
        float val = -INFINITY;
        if (open || (j >= lo[x] && j < hi[x])) {
          val = s[n][e] * a.scale;
          if (a.softcap > 0) val = a.softcap * tanhf(val / a.softcap);
          if (key_bias) val += bsm[jj];
          else if (row_bias) val += rbs[(r0 + 8 * x) * kLdBias + jj];
        }
        s[n][e] = val;
        mx[x] = fmaxf(mx[x], val);
      }
    float corr[2];
#pragma unroll
    for (int x = 0; x < 2; ++x) {
      mx[x] = fmaxf(mx[x], __shfl_xor_sync(0xffffffffu, mx[x], 1));
      mx[x] = fmaxf(mx[x], __shfl_xor_sync(0xffffffffu, mx[x], 2));
      float m_new = fmaxf(m[x], mx[x]);
      corr[x] = m_new == -INFINITY ? 1.0f : __expf(m[x] - m_new);  // exp(-inf) = 0 when m was -inf
      m[x] = m_new;
      l[x] *= corr[x];
    }
#pragma unroll
    for (int n = 0; n < kBc / 8; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        int x = e >> 1;
        float p = s[n][e] == -INFINITY ? 0.0f : __expf(s[n][e] - m[x]);
        s[n][e] = p;
        l[x] += p;  // this thread's part of the row sum; the quad's parts are added at the end
      }
#pragma unroll
    for (int n = 0; n < DV / 8; ++n) {
      o[n][0] *= corr[0];
      o[n][1] *= corr[0];
      o[n][2] *= corr[1];
      o[n][3] *= corr[1];
    }
    // O += P·V: P's C fragments are the A fragments of the next product
#pragma unroll
    for (int kk = 0; kk < kBc / 16; ++kk) {
      uint32_t pa[4] = {pack<kBf16>(s[2 * kk][0], s[2 * kk][1]), pack<kBf16>(s[2 * kk][2], s[2 * kk][3]),
                        pack<kBf16>(s[2 * kk + 1][0], s[2 * kk + 1][1]), pack<kBf16>(s[2 * kk + 1][2], s[2 * kk + 1][3])};
      // for keys kk·16…+15, one transposed ldmatrix gives the B fragments of two 8-wide
      // column steps (tiles: keys +0 and +8 of columns n·8, then of n·8+8)
      const uint16_t* vp = vs + (kk * 16 + ((lane >> 3) & 1) * 8 + (lane & 7)) * LDV + (lane >> 4) * 8;
#pragma unroll
      for (int n = 0; n < DV / 8; n += 2) {
        uint32_t vb[4];
        ldmatrix_x4_trans(vb, vp + n * 8);
        mma<kBf16>(o[n], pa, vb[0], vb[1]);
        mma<kBf16>(o[n + 1], pa, vb[2], vb[3]);
      }
    }
  }
#pragma unroll
  for (int x = 0; x < 2; ++x) {
    l[x] += __shfl_xor_sync(0xffffffffu, l[x], 1);
    l[x] += __shfl_xor_sync(0xffffffffu, l[x], 2);
  }
  if (a.splits > 1) {
    // unnormalized O, the running max and the sum of this share of the keys: [B, H, splits, Sq]
    // rows of DV values, then the (max, sum) pairs; attention_combine_kernel merges the shares
    const int64_t rows = a.B * a.H * a.splits * a.Sq, r_base = ((b * a.H + h) * a.splits + split) * a.Sq;
#pragma unroll
    for (int x = 0; x < 2; ++x) {
      if (row[x] >= a.Sq) continue;
      float* po = part + (r_base + row[x]) * DV;
#pragma unroll
      for (int n = 0; n < DV / 8; ++n) *reinterpret_cast<float2*>(po + n * 8 + 2 * t) = make_float2(o[n][2 * x], o[n][2 * x + 1]);
      if (t == 0) *reinterpret_cast<float2*>(part + rows * DV + 2 * (r_base + row[x])) = make_float2(m[x], l[x]);
    }
    return;
  }
  // a row with no allowed key is NaN, like the definition's softmax over nothing
  float inv[2] = {l[0] > 0 ? 1.0f / l[0] : __int_as_float(0x7fc00000), l[1] > 0 ? 1.0f / l[1] : __int_as_float(0x7fc00000)};
#pragma unroll
  for (int n = 0; n < DV / 8; ++n)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      int x = e >> 1;
      if (row[x] >= a.Sq) continue;
      int d = n * 8 + 2 * t + (e & 1);
      store_as(y, b * a.y_b + h * a.y_h + row[x] * a.y_s + d, o[n][e] * inv[x], a.y_dt);
    }
}

// y[b, h, i] = Σ_s e^(m_s − M)·O_s / Σ_s e^(m_s − M)·l_s over the key shares s of row i (M: the
// largest m_s); a share that saw no key has m_s = −inf and weighs nothing. One warp per row:
// lane s holds share s's (m, l), the lanes then take the row's values four at a time (one
// 16-byte load per share) — a block of Dv threads per row left each thread one load in flight.
constexpr int kCombineRows = 8;  // rows (warps) per block
template <class T>
__global__ void attention_combine_kernel(const float* part, T* y, const __grid_constant__ AttentionSpec a) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kCombineRows + threadIdx.x / 32;  // (b·H + h)·Sq + i
  if (row >= a.B * a.H * a.Sq) return;
  const int lane = threadIdx.x & 31;
  const int64_t i = row % a.Sq, bh = row / a.Sq, h = bh % a.H, b = bh / a.H;
  const int64_t rows = a.B * a.H * a.splits * a.Sq, r0 = bh * a.splits * a.Sq + i;
  const float2* ml = reinterpret_cast<const float2*>(part + rows * a.Dv);
  const float2 mine = lane < a.splits ? ml[r0 + lane * a.Sq] : make_float2(-INFINITY, 0.0f);
  float M = mine.x;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) M = fmaxf(M, __shfl_xor_sync(0xffffffffu, M, o));
  const float w = mine.x == -INFINITY ? 0.0f : __expf(mine.x - M);  // all 0 when M is −inf
  float L = 0;
  for (int sp = 0; sp < a.splits; ++sp) L += __shfl_sync(0xffffffffu, w, sp) * __shfl_sync(0xffffffffu, mine.y, sp);
  // a row with no allowed key is NaN, like the definition's softmax over nothing
  const float inv = L > 0 ? 1.0f / L : __int_as_float(0x7fc00000);
  for (int64_t d = 4 * lane; d < a.Dv; d += 128) {
    float4 acc = make_float4(0, 0, 0, 0);
    for (int sp = 0; sp < a.splits; ++sp) {
      const float ws = __shfl_sync(0xffffffffu, w, sp);
      if (ws == 0.0f) continue;
      const float4 p = *reinterpret_cast<const float4*>(part + (r0 + sp * a.Sq) * a.Dv + d);
      acc.x += ws * p.x, acc.y += ws * p.y, acc.z += ws * p.z, acc.w += ws * p.w;
    }
    const int64_t off = b * a.y_b + h * a.y_h + i * a.y_s + d;
    store_as(y, off, acc.x * inv, a.y_dt);
    store_as(y, off + 1, acc.y * inv, a.y_dt);
    store_as(y, off + 2, acc.z * inv, a.y_dt);
    store_as(y, off + 3, acc.w * inv, a.y_dt);
  }
}

template <int D, int DV, int W, bool kBf16, class T>
void launch_tiles(const void* q, const void* k, const void* v, const void* bias, Dt bias_dt, void* y, const AttentionSpec& a, void* scratch,
                  cudaStream_t s) {
  constexpr int kBr = 16 * W;
  constexpr size_t base = sizeof(uint16_t) * (kBr * (D + 8) + kBc * (D + 8) + kBc * (DV + 8)) + sizeof(float) * kBc;
  constexpr size_t most = base + sizeof(float) * kBr * kLdBias;
  const size_t smem = bias && a.bias_s[2] != 0 ? most : base;  // a per-row bias is staged per tile
  static bool raised = false;  // more than 48 KB of shared memory must be asked for once
  if (!raised) {
    cudaFuncSetAttribute(attention_mma_kernel<D, DV, W, kBf16, T>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(most));
    raised = true;
  }
  dim3 grid(static_cast<unsigned>((a.Sq + kBr - 1) / kBr), static_cast<unsigned>(a.H), static_cast<unsigned>(a.B * a.splits));
  float* part = static_cast<float*>(scratch);
  attention_mma_kernel<D, DV, W, kBf16, T><<<grid, W * 32, smem, s>>>(static_cast<const T*>(q), static_cast<const T*>(k), static_cast<const T*>(v),
                                                                      bias, bias_dt, static_cast<T*>(y), part, a);
  if (a.splits > 1)
    attention_combine_kernel<T><<<static_cast<unsigned>((a.B * a.H * a.Sq + kCombineRows - 1) / kCombineRows), kCombineRows * 32, 0, s>>>(
        part, static_cast<T*>(y), a);
}

// Blocks of 4 warps share each key tile among 64 query rows (2 or 1 warps for shorter queries).
// Even where that leaves SMs idle (one sequence, 16 heads: 128 blocks on the H200's 132 SMs),
// it beats blocks of one warp on 4× as many SMs, which stage every key tile 4× as often:
// Qwen3 pp512 attention 240 → 152 µs per layer, MiniLM b1 0.45 → 0.41 ms.
template <int D, int DV, bool kBf16, class T>
void launch_rows(const void* q, const void* k, const void* v, const void* bias, Dt bias_dt, void* y, const AttentionSpec& a, void* scratch,
                 cudaStream_t s) {
  if (a.Sq > 32) launch_tiles<D, DV, 4, kBf16, T>(q, k, v, bias, bias_dt, y, a, scratch, s);
  else if (a.Sq > 16) launch_tiles<D, DV, 2, kBf16, T>(q, k, v, bias, bias_dt, y, a, scratch, s);
  else launch_tiles<D, DV, 1, kBf16, T>(q, k, v, bias, bias_dt, y, a, scratch, s);
}

template <bool kBf16, class T>
bool launch_dims(const void* q, const void* k, const void* v, const void* bias, Dt bias_dt, void* y, const AttentionSpec& a, void* scratch,
                 cudaStream_t s) {
  if (a.D == 32 && a.Dv == 32) launch_rows<32, 32, kBf16, T>(q, k, v, bias, bias_dt, y, a, scratch, s);
  else if (a.D == 64 && a.Dv == 64) launch_rows<64, 64, kBf16, T>(q, k, v, bias, bias_dt, y, a, scratch, s);
  else if (a.D == 128 && a.Dv == 128) launch_rows<128, 128, kBf16, T>(q, k, v, bias, bias_dt, y, a, scratch, s);
  else return false;
  return true;
}

}  // namespace

bool attention_uses_mma(Dt dt, const AttentionSpec& a) {
  bool dims = (a.D == 32 && a.Dv == 32) || (a.D == 64 && a.Dv == 64) || (a.D == 128 && a.Dv == 128);
  if (a.Sq < 16 || !dims) return false;
  return dt == Dt::bf16 || (dt == Dt::f32 && (a.round_bf16 || a.round_f16)) || (dt == Dt::f16 && !a.round_bf16);
}

// A grid of fewer blocks than SMs leaves each SM one warp per scheduler, every latency exposed
// (Qwen3's pp512: 8 query tiles × 16 heads = 128 blocks, 143 µs a layer): the keys are then split
// over up to 4× as many blocks, each a run of whole key tiles, and a second kernel merges them.
int attention_mma_splits(Dt dt, const AttentionSpec& a, int sms) {
  if (!attention_uses_mma(dt, a) || sms <= 0) return 1;
  const int64_t rows = a.Sq > 32 ? 64 : a.Sq > 16 ? 32 : 16, blocks = (a.Sq + rows - 1) / rows * a.H * a.B;
  const int64_t tiles = (a.Sk + kBc - 1) / kBc;
  if (blocks >= sms || tiles < 2) return 1;
  int64_t want = std::min<int64_t>({tiles, (4 * sms + blocks - 1) / blocks, 16});  // ≤ 32: the combine kernel gives each share a lane
  int64_t per = (tiles + want - 1) / want;  // whole tiles per share; no share left empty
  return static_cast<int>((tiles + per - 1) / per);
}

size_t attention_mma_scratch(const AttentionSpec& a) {
  return static_cast<size_t>(a.B * a.H * a.splits * a.Sq) * static_cast<size_t>(a.Dv + 2) * sizeof(float);
}

bool launch_attention_mma(Dt dt, const void* q, const void* k, const void* v, const void* bias, Dt bias_dt, void* y, const AttentionSpec& a,
                          void* scratch, cudaStream_t s) {
  // a few query rows (decode) leave most of a 64-row tile idle: the exact kernel does better
  if (!attention_uses_mma(dt, a)) return false;
  switch (dt) {
    case Dt::f32:  // f32 operands rounded to the compute dtype as they are staged
      if (a.round_bf16) return launch_dims<true, float>(q, k, v, bias, bias_dt, y, a, scratch, s);
      return a.round_f16 && launch_dims<false, float>(q, k, v, bias, bias_dt, y, a, scratch, s);
    case Dt::bf16: return launch_dims<true, __nv_bfloat16>(q, k, v, bias, bias_dt, y, a, scratch, s);
    case Dt::f16: return !a.round_bf16 && launch_dims<false, __half>(q, k, v, bias, bias_dt, y, a, scratch, s);
    default: return false;
  }
}

}  // namespace rlx::backends::cuda
