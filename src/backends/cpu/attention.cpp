// Fused attention: per (batch, head) — scores by one GEMM, scale / softcap / bias / causal or
// sliding-window mask and a row softmax in place, then one GEMM with V. Heads run in parallel;
// the S×S score block of one head stays in cache-resident scratch. With compute=bf16 the two
// GEMMs run on AMX through oneDNN (operands rounded to bf16, f32 accumulation and softmax).
#include <cblas.h>
#include <omp.h>

#include <cmath>
#include <cstring>
#include <dnnl.hpp>
#include <limits>

#include "backends/cpu/bf16_rate.h"
#include "backends/cpu/kernels.h"
#include "backends/cpu/onednn_matmul.h"
#include "backends/cpu/simd.h"
#include "util/flags.h"
#include "util/half.h"

namespace rlx::backends::cpu {

namespace {

using ir::Op;

struct Geometry {
  int64_t B, H, Sq, D, Hk, Sk, Dv, group;
  int64_t ldq, ldk, ldv, ldy;  // row strides of one head's [S, D] slice
  bool bshd;
  int64_t q_off(int64_t b, int64_t h) const { return bshd ? b * Sq * H * D + h * D : (b * H + h) * Sq * D; }
  int64_t k_off(int64_t b, int64_t h) const { return bshd ? b * Sk * Hk * D + h * D : (b * Hk + h) * Sk * D; }
  int64_t v_off(int64_t b, int64_t h) const { return bshd ? b * Sk * Hk * Dv + h * Dv : (b * Hk + h) * Sk * Dv; }
  int64_t y_off(int64_t b, int64_t h) const { return bshd ? b * Sq * H * Dv + h * Dv : (b * H + h) * Sq * Dv; }
};

Geometry geometry(const std::vector<int64_t>& q, const std::vector<int64_t>& k, const std::vector<int64_t>& v, bool bshd) {
  Geometry g;
  g.bshd = bshd;
  g.B = q[0];
  g.H = q[bshd ? 2 : 1];
  g.Sq = q[bshd ? 1 : 2];
  g.D = q[3];
  g.Hk = k[bshd ? 2 : 1];
  g.Sk = k[bshd ? 1 : 2];
  g.Dv = v[3];
  g.group = g.H / g.Hk;
  g.ldq = bshd ? g.H * g.D : g.D;
  g.ldk = bshd ? g.Hk * g.D : g.D;
  g.ldv = bshd ? g.Hk * g.Dv : g.Dv;
  g.ldy = bshd ? g.H * g.Dv : g.Dv;
  return g;
}

struct MaskSpec {
  bool causal = false, sliding = false;
  int64_t window = 0;
  double cap = 0;
};

// Raw scores → probabilities, row by row, for one (b, h): scale, softcap, bias, mask, softmax.
// The probabilities overwrite `s` (f32) or, with `pb`, go to a bf16 copy for the AMX product.
// `rows` query rows from row i0 on (a tile of the Sq queries).
// `keys`: only the first `keys` can have a nonzero probability (the decode kernel found the
// rest masked), so the others are left out of the max and the sum (they would add exact zeros).
void softmax_rows(float* s, float scale, const Geometry& g, const MaskSpec& m, const HostView* bias, const int64_t* bst, int64_t b, int64_t h,
                  uint16_t* pb = nullptr, int64_t i0 = 0, int64_t rows = -1, int64_t keys = -1) {
  if (rows < 0) rows = g.Sq;
  for (int64_t t = 0; t < rows; ++t, s += g.Sk, pb = pb ? pb + g.Sk : nullptr) {
    int64_t i = i0 + t;
    float* row = s;
    int64_t pos = i + g.Sk - g.Sq;  // the query's position among the keys (KV cache aligned)
    int64_t end = m.causal ? std::min(g.Sk, pos + 1) : g.Sk;
    if (keys >= 0) end = std::min(end, keys);
    int64_t begin = m.sliding ? std::max<int64_t>(0, pos - m.window + 1) : 0;
    int64_t len = std::max<int64_t>(0, end - begin);
    const float* bp = bias ? bias->as<float>() + b * bst[0] + h * bst[1] + i * bst[2] : nullptr;
    float mx;
    if (m.cap <= 0 && (!bp || bst[3] == 1)) {
      mx = simd::scale_bias_max(row + begin, len, scale, bp ? bp + begin : nullptr);
    } else {
      for (int64_t j = begin; j < end; ++j) {
        float x = row[j] * scale;
        if (m.cap > 0) x = static_cast<float>(m.cap * std::tanh(x / m.cap));
        row[j] = bp ? x + bp[j * bst[3]] : x;
      }
      mx = simd::scale_bias_max(row + begin, len, 1.0f, nullptr);
    }
    float sum = simd::exp_shifted_sum(row + begin, len, mx);
    // A fully masked row gives NaN, like the definition's softmax of all −inf.
    float inv = (end > begin && mx > -std::numeric_limits<float>::infinity()) ? 1.0f / sum : std::numeric_limits<float>::quiet_NaN();
    std::fill(row, row + begin, 0.0f);
    std::fill(row + std::max(begin, end), row + g.Sk, 0.0f);
    if (end <= begin) std::fill(row, row + g.Sk, std::numeric_limits<float>::quiet_NaN());
    if (pb)
      simd::scale_to_bf16(row, g.Sk, inv, pb);
    else
      simd::scale(row + begin, len, inv);
  }
}

// A block of heads of one batch row, all in two oneDNN calls: scores [G, Hg, Sq, Sk] =
// Q·Kᵀ and Y = P·V, batched over the heads (a call per head costs more than a small
// product). Hg = the GQA group: the query heads that share one K/V head (weights broadcast
// over it). Q, K and V are first packed into dense [heads, S, D] copies (rounded to bf16 for
// AMX) and Y comes back through a dense block too: oneDNN's fast kernels want dense operands.
struct BlockGemms {
  bool bf16 = false;   // the products in bf16 (AMX, or a CPU whose vdpbf16ps is fast: bf16_rate.h)
  bool round = false;  // compute=bf16 on f32 kernels: operands and P rounded to bf16, kept in f32
  int64_t kv_heads = 0;  // K/V heads per block (its query heads: kv_heads · group)
  int64_t q_rows = 0;    // query rows per block (a tile of Sq; long prompts are cut in tiles)
  dnnl::matmul qk, pv;
  dnnl::memory::desc q, kt, s, p, v, y;
  size_t scratch = 0;
};

std::shared_ptr<BlockGemms> make_block_gemms(const Geometry& g, std::pair<int64_t, int64_t> shape, bool bf16) {
  auto [kv_heads, q_rows] = shape;
  using dt = dnnl::memory::data_type;
  using dims = dnnl::memory::dims;
  auto G = std::make_shared<BlockGemms>();
  G->bf16 = bf16;
  G->kv_heads = kv_heads;
  G->q_rows = q_rows;
  dnnl::engine& eng = onednn_engine();
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dt op = bf16 ? dt::bf16 : dt::f32;
  int64_t n = kv_heads, r = g.group;
  // Everything dense: oneDNN 2.6 takes its brgemm kernels (AVX-512, AMX) only for dense
  // operands; with strided ones it falls back to a much slower GEMM.
  auto dense4 = [](int64_t a, int64_t b, int64_t c, int64_t d, dt t) { return dnnl::memory::desc({a, b, c, d}, t, dims{b * c * d, c * d, d, 1}); };
  G->q = dense4(n, r, q_rows, g.D, op);
  G->kt = dnnl::memory::desc({n, 1, g.D, g.Sk}, op, dims{g.Sk * g.D, g.Sk * g.D, 1, g.D});  // K [Sk, D] read transposed
  G->v = dense4(n, 1, g.Sk, g.Dv, op);
  G->s = dense4(n, r, q_rows, g.Sk, dt::f32);
  G->p = dense4(n, r, q_rows, g.Sk, op);
  G->y = dense4(n, r, q_rows, g.Dv, dt::f32);
  dnnl::matmul::primitive_desc qk(dnnl::matmul::desc(G->q, G->kt, G->s), attr, eng);
  dnnl::matmul::primitive_desc pv(dnnl::matmul::desc(G->p, G->v, G->y), attr, eng);
  // Anything but brgemm would be slower than the per-head path: refuse it.
  auto fast = [](const char* impl) { return std::string(impl).find("brg") != std::string::npos; };
  if (!fast(qk.impl_info_str()) || !fast(pv.impl_info_str())) return nullptr;
  G->qk = dnnl::matmul(qk);
  G->pv = dnnl::matmul(pv);
  G->scratch = std::max(qk.scratchpad_desc().get_size(), pv.scratchpad_desc().get_size());
  return G;
}

// Block shape (K/V heads, query rows): each block's scores within L2 (≈1 MiB) — long prompts
// are cut into tiles of query rows — and enough blocks for every thread, evenly where possible.
std::pair<int64_t, int64_t> block_shape(const Geometry& g) {
  constexpr int64_t kL2 = 1 << 20;
  int64_t rows = g.Sq;
  for (int64_t t = 2; g.group * rows * g.Sk * 4 > kL2 && g.Sq / t >= 32; ++t)
    if (g.Sq % t == 0) rows = g.Sq / t;
  int64_t tiles = g.Sq / rows;
  int64_t T = num_threads();
  int64_t head_bytes = g.group * rows * g.Sk * 4;
  int64_t best = 1;
  for (int64_t n = g.Hk; n >= 1; --n) {
    if (g.Hk % n) continue;
    int64_t blocks = g.B * (g.Hk / n) * tiles;
    if (n > 1 && n * head_bytes > kL2) continue;
    if (blocks >= T && blocks % T == 0) return {n, rows};
    if (blocks >= T && best == 1) best = n;
  }
  return {best, rows};
}

// The two matmuls of one head through oneDNN: [Sq, D]·[Sk, D]ᵀ → f32 scores and
// [Sq, Sk]·[Sk, Dv] → f32 output. In f32 the operands are read where they lie (strided views
// of q, k, v, y); in bf16 from packed, rounded copies.
struct HeadGemms {
  bool bf16 = false;
  dnnl::matmul qk, pv;
  dnnl::memory::desc q, kt, s, p, v, y, qk_scratch, pv_scratch;
};

std::shared_ptr<HeadGemms> make_head_gemms(const Geometry& g, bool bf16) {
  using dt = dnnl::memory::data_type;
  auto desc = [](int64_t r, int64_t c, dt t, int64_t rs, int64_t cs) { return dnnl::memory::desc({r, c}, t, dnnl::memory::dims{rs, cs}); };
  auto G = std::make_shared<HeadGemms>();
  G->bf16 = bf16;
  dnnl::engine& eng = onednn_engine();
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dt op = bf16 ? dt::bf16 : dt::f32;
  G->q = bf16 ? desc(g.Sq, g.D, op, g.D, 1) : desc(g.Sq, g.D, op, g.ldq, 1);
  G->kt = bf16 ? desc(g.D, g.Sk, op, 1, g.D) : desc(g.D, g.Sk, op, 1, g.ldk);  // K [Sk, D] transposed by strides
  G->s = desc(g.Sq, g.Sk, dt::f32, g.Sk, 1);
  dnnl::matmul::primitive_desc qk(dnnl::matmul::desc(G->q, G->kt, G->s), attr, eng);
  G->qk = dnnl::matmul(qk);
  G->qk_scratch = qk.scratchpad_desc();
  G->p = desc(g.Sq, g.Sk, op, g.Sk, 1);
  G->v = bf16 ? desc(g.Sk, g.Dv, op, g.Dv, 1) : desc(g.Sk, g.Dv, op, g.ldv, 1);
  G->y = desc(g.Sq, g.Dv, dt::f32, g.ldy, 1);
  dnnl::matmul::primitive_desc pv(dnnl::matmul::desc(G->p, G->v, G->y), attr, eng);
  G->pv = dnnl::matmul(pv);
  G->pv_scratch = pv.scratchpad_desc();
  return G;
}

// Scratch of one pool thread, grown to the largest block it has run (no allocation once warm).
template <typename T>
T* grow(std::vector<T>& v, size_t n) {
  if (v.size() < n) v.resize(n);
  return v.data();
}

// Copies `heads` heads of a strided [S, D] layout (head stride hs, row stride ld) into a
// packed [heads, S, D] buffer: f32 as is, f32 rounded to bf16's precision (round), or bf16.
void pack_heads(const float* src, int64_t heads, int64_t hs, int64_t rows, int64_t ld, int64_t cols, void* dst, bool bf16, bool round = false) {
  for (int64_t h = 0; h < heads; ++h) {
    int64_t at = h * rows * cols;
    if (bf16) {
      simd::copy_rows_bf16(src + h * hs, rows, ld, cols, static_cast<uint16_t*>(dst) + at, cols);
    } else {
      simd::copy_rows(src + h * hs, rows, ld, cols, static_cast<float*>(dst) + at, cols);
      if (round) round_to_bf16(static_cast<float*>(dst) + at, rows * cols);
    }
  }
}

void run_blocks(const BlockGemms& G, const Geometry& g, const MaskSpec& ms, float scale, const float* q, const float* k, const float* v, float* y,
                const HostView* bias, const int64_t* bst) {
  int64_t tiles = g.Sq / G.q_rows;
  int64_t per_b = g.Hk / G.kv_heads * tiles;  // blocks per batch row; the tiles of one head group are adjacent
  int64_t nq = G.kv_heads * g.group;           // query heads per block
  int64_t rows = G.q_rows;
  int64_t hq = g.bshd ? g.D : g.Sq * g.D, hk = g.bshd ? g.D : g.Sk * g.D, hv = g.bshd ? g.Dv : g.Sk * g.Dv, hy = g.bshd ? g.Dv : g.Sq * g.Dv;
  size_t esz = G.bf16 ? 2 : 4;
  rlx::parallel_for(g.B * per_b, 1, [&](int64_t lo, int64_t hi) {
    thread_local std::vector<float> s, ys;
    thread_local std::vector<uint8_t> qb, kb, vb, pb, scratch;
    omp_set_num_threads(1);
    dnnl::engine& eng = onednn_engine();
    thread_local dnnl::stream stream(eng);
    float* sp = grow(s, static_cast<size_t>(nq * rows * g.Sk));
    float* yp = grow(ys, static_cast<size_t>(nq * rows * g.Dv));
    void* qa = grow(qb, static_cast<size_t>(nq * rows * g.D) * esz);
    void* ka = grow(kb, static_cast<size_t>(G.kv_heads * g.Sk * g.D) * esz);
    void* va = grow(vb, static_cast<size_t>(G.kv_heads * g.Sk * g.Dv) * esz);
    uint16_t* pbp = G.bf16 ? reinterpret_cast<uint16_t*>(grow(pb, static_cast<size_t>(nq * rows * g.Sk) * 2)) : nullptr;
    uint8_t* scp = grow(scratch, std::max<size_t>(64, G.scratch));
    dnnl::memory qm(G.q, eng, qa), km(G.kt, eng, ka), vm_(G.v, eng, va), sm(G.s, eng, sp), ym(G.y, eng, yp);
    dnnl::memory pm(G.p, eng, G.bf16 ? static_cast<void*>(pbp) : static_cast<void*>(sp));
    dnnl::memory scm(dnnl::memory::desc({static_cast<int64_t>(std::max<size_t>(64, G.scratch))}, dnnl::memory::data_type::u8, dnnl::memory::dims{1}), eng, scp);
    int64_t packed_kv = -1;  // the (b, head group) whose K and V are in ka / va
    for (int64_t blk = lo; blk < hi; ++blk) {
      int64_t b = blk / per_b, grp = (blk % per_b) / tiles, q0 = (blk % tiles) * rows;
      int64_t hk0 = grp * G.kv_heads, h0 = hk0 * g.group;
      pack_heads(q + g.q_off(b, h0) + q0 * g.ldq, nq, hq, rows, g.ldq, g.D, qa, G.bf16, G.round);
      if (packed_kv != blk / tiles) {
        pack_heads(k + g.k_off(b, hk0), G.kv_heads, hk, g.Sk, g.ldk, g.D, ka, G.bf16, G.round);
        pack_heads(v + g.v_off(b, hk0), G.kv_heads, hv, g.Sk, g.ldv, g.Dv, va, G.bf16, G.round);
        packed_kv = blk / tiles;
      }
      G.qk.execute(stream, {{DNNL_ARG_SRC, qm}, {DNNL_ARG_WEIGHTS, km}, {DNNL_ARG_DST, sm}, {DNNL_ARG_SCRATCHPAD, scm}});
      for (int64_t j = 0; j < nq; ++j)
        softmax_rows(sp + j * rows * g.Sk, scale, g, ms, bias, bst, b, h0 + j, pbp ? pbp + j * rows * g.Sk : nullptr, q0, rows);
      if (G.round) round_to_bf16(sp, nq * rows * g.Sk);  // P as the bf16 product would take it
      G.pv.execute(stream, {{DNNL_ARG_SRC, pm}, {DNNL_ARG_WEIGHTS, vm_}, {DNNL_ARG_DST, ym}, {DNNL_ARG_SCRATCHPAD, scm}});
      float* yo = y + g.y_off(b, h0) + q0 * g.ldy;
      for (int64_t j = 0; j < nq; ++j)
        simd::copy_rows(yp + j * rows * g.Dv, rows, g.Dv, g.Dv, yo + j * hy, g.ldy);
    }
  });
}

// Query rows at or below which attention runs as dot products (decode over a KV cache).
constexpr int64_t kDecodeRows = 4;

// A bias this low masks its key: with any unmasked key in the row, exp(score + bias − max)
// underflows to exactly 0 in f32 (models mask with −1e30 or −inf), so skipping it is exact.
constexpr float kMaskedBias = -1e29f;

// Few query rows (decode): per head, the scores are dot products of the query with each key
// and the output a probability-weighted sum of value rows, straight from where K and V lie —
// no GEMM calls and no packing (which cost more than the arithmetic at Sq = 1). Keys that a
// masked at the end of the row (a cache's unfilled positions) are never read, K's or V's.
void run_decode(const Geometry& g, const MaskSpec& ms, float scale, const float* q, const float* k, const float* v, float* y, const HostView* bias,
                const int64_t* bst) {
  rlx::parallel_for(g.B * g.H, 1, [&](int64_t lo, int64_t hi) {
    thread_local std::vector<float> s;
    float* sp = grow(s, static_cast<size_t>(g.Sq * g.Sk));
    for (int64_t bh = lo; bh < hi; ++bh) {
      int64_t b = bh / g.H, h = bh % g.H, hk = h / g.group;
      const float* kp = k + g.k_off(b, hk);
      int64_t used = 0;  // keys up to the last one any row reads: V's rows past it weigh 0
      for (int64_t i = 0; i < g.Sq; ++i) {
        float* row = sp + i * g.Sk;
        int64_t pos = i + g.Sk - g.Sq;
        int64_t end = ms.causal ? std::min(g.Sk, pos + 1) : g.Sk;
        int64_t begin = ms.sliding ? std::max<int64_t>(0, pos - ms.window + 1) : 0;
        const float* bp = bias ? bias->as<float>() + b * bst[0] + h * bst[1] + i * bst[2] : nullptr;
        int64_t live = end;
        while (bp && live > begin && bp[(live - 1) * bst[3]] <= kMaskedBias) --live;
        if (live == begin) live = end;  // nothing unmasked: every key, as the definition has it
        used = std::max(used, live);
        // Skipped keys score 0 (+ their −inf bias → probability 0), never an uninitialized value.
        std::fill(row, row + g.Sk, 0.0f);
        if (live > begin) simd::dot_rows(kp + begin * g.ldk, live - begin, g.ldk, q + g.q_off(b, h) + i * g.ldq, g.D, row + begin);
      }
      softmax_rows(sp, scale, g, ms, bias, bst, b, h, nullptr, 0, -1, used);
      for (int64_t i = 0; i < g.Sq; ++i)
        simd::weighted_rows(sp + i * g.Sk, v + g.v_off(b, hk), used, g.ldv, g.Dv, y + g.y_off(b, h) + i * g.ldy);
    }
  });
}

HostKernel make_attention(const ir::Node& node, const ir::Graph& lir) {
  MaskSpec ms;
  const std::string& mask = node.attrs.s("mask");
  ms.causal = mask == "causal" || mask == "sliding_window";
  ms.sliding = mask == "sliding_window";
  ms.window = node.attrs.i("window");
  ms.cap = node.attrs.f("softcap");
  double scale_attr = node.attrs.f("scale");
  bool bshd = node.attrs.s("layout") == "bshd";
  bool bf16 = node.attrs.has("compute") && node.attrs.dtype("compute") == DType::bf16;
  Geometry geo = geometry(shape_values(lir.type(node.inputs[0]).shape), shape_values(lir.type(node.inputs[1]).shape),
                          shape_values(lir.type(node.inputs[2]).shape), bshd);
  // oneDNN's brgemm beats BLAS on these small per-head products; BLAS stays the fallback.
  bool decode = !bf16 && geo.Sq <= kDecodeRows;
  bool use_onednn = !decode && onednn_available() && (bf16 || flags().RLX_CPU_GEMM != "blas");
  // compute=bf16 where bf16 products are slower than f32 ones (bf16_rate.h): the f32 kernels on
  // operands rounded to bf16 — the same exact products, summed in f32
  const bool bf16_kernels = bf16 && bf16_products_native();
  std::shared_ptr<BlockGemms> blocks = use_onednn ? make_block_gemms(geo, block_shape(geo), bf16_kernels) : nullptr;
  if (blocks) blocks->round = bf16 && !bf16_kernels;
  std::shared_ptr<HeadGemms> gemms = use_onednn && !blocks ? make_head_gemms(geo, bf16) : nullptr;
  return [=](const KernelArgs& a) {
    const Geometry& g = geo;
    const float* q = a.in[0].as<float>();
    const float* k = a.in[1].as<float>();
    const float* v = a.in[2].as<float>();
    float* y = a.out[0].as<float>();
    float scale = static_cast<float>(scale_attr != 0 ? scale_attr : 1.0 / std::sqrt(static_cast<double>(g.D)));
    const HostView* bias = a.in.size() > 3 ? &a.in[3] : nullptr;
    int64_t bst[4] = {0, 0, 0, 0};  // bias strides over [B, H, Sq, Sk] (0 where broadcast)
    if (bias) {
      std::vector<int64_t> cs = contiguous_strides(bias->shape);
      size_t off = 4 - bias->shape.size();
      for (size_t d = 0; d < bias->shape.size(); ++d) bst[off + d] = bias->shape[d] == 1 ? 0 : cs[d];
    }
    if (decode) {
      run_decode(g, ms, scale, q, k, v, y, bias, bst);
      return;
    }
    if (blocks) {
      run_blocks(*blocks, g, ms, scale, q, k, v, y, bias, bst);
      return;
    }
    rlx::parallel_for(g.B * g.H, 1, [&](int64_t lo, int64_t hi) {
      std::vector<float> s(static_cast<size_t>(g.Sq * g.Sk));
      std::vector<uint16_t> qb, kb, vb, pb;
      std::vector<uint8_t> scratch;
      if (gemms) {
        scratch.resize(std::max<size_t>(64, std::max(gemms->qk_scratch.get_size(), gemms->pv_scratch.get_size())));
        omp_set_num_threads(1);
      }
      if (gemms && gemms->bf16) {
        qb.resize(static_cast<size_t>(g.Sq * g.D));
        kb.resize(static_cast<size_t>(g.Sk * g.D));
        vb.resize(static_cast<size_t>(g.Sk * g.Dv));
        pb.resize(static_cast<size_t>(g.Sq * g.Sk));
      }
      dnnl::engine& eng = onednn_engine();
      for (int64_t bh = lo; bh < hi; ++bh) {
        int64_t b = bh / g.H, h = bh % g.H, hk = h / g.group;
        const float* qp = q + g.q_off(b, h);
        const float* kp = k + g.k_off(b, hk);
        const float* vp = v + g.v_off(b, hk);
        float* yp = y + g.y_off(b, h);
        if (gemms && !gemms->bf16) {
          thread_local dnnl::stream fstream(eng);
          dnnl::memory qm(gemms->q, eng, const_cast<float*>(qp)), km(gemms->kt, eng, const_cast<float*>(kp)), sm(gemms->s, eng, s.data());
          dnnl::memory scm(gemms->qk_scratch, eng, scratch.data());
          gemms->qk.execute(fstream, {{DNNL_ARG_SRC, qm}, {DNNL_ARG_WEIGHTS, km}, {DNNL_ARG_DST, sm}, {DNNL_ARG_SCRATCHPAD, scm}});
          softmax_rows(s.data(), scale, g, ms, bias, bst, b, h);
          dnnl::memory pm(gemms->p, eng, s.data()), vm_(gemms->v, eng, const_cast<float*>(vp)), ym(gemms->y, eng, yp);
          dnnl::memory scm2(gemms->pv_scratch, eng, scratch.data());
          gemms->pv.execute(fstream, {{DNNL_ARG_SRC, pm}, {DNNL_ARG_WEIGHTS, vm_}, {DNNL_ARG_DST, ym}, {DNNL_ARG_SCRATCHPAD, scm2}});
          continue;
        }
        if (!gemms) {
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(g.Sq), static_cast<int>(g.Sk), static_cast<int>(g.D), 1.0f, qp,
                      static_cast<int>(g.ldq), kp, static_cast<int>(g.ldk), 0.0f, s.data(), static_cast<int>(g.Sk));
          softmax_rows(s.data(), scale, g, ms, bias, bst, b, h);
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(g.Sq), static_cast<int>(g.Dv), static_cast<int>(g.Sk), 1.0f,
                      s.data(), static_cast<int>(g.Sk), vp, static_cast<int>(g.ldv), 0.0f, yp, static_cast<int>(g.ldy));
          continue;
        }
        // Operands are rounded to bf16 as the definition says (scale applied to q first, exactly
        // as the decomposition multiplies the f32 scores: the order differs only by rounding).
        simd::copy_rows_bf16(qp, g.Sq, g.ldq, g.D, qb.data(), g.D);
        simd::copy_rows_bf16(kp, g.Sk, g.ldk, g.D, kb.data(), g.D);
        simd::copy_rows_bf16(vp, g.Sk, g.ldv, g.Dv, vb.data(), g.Dv);
        thread_local dnnl::stream stream(eng);
        dnnl::memory qm(gemms->q, eng, qb.data()), km(gemms->kt, eng, kb.data()), sm(gemms->s, eng, s.data());
        dnnl::memory scm(gemms->qk_scratch, eng, scratch.data());
        gemms->qk.execute(stream, {{DNNL_ARG_SRC, qm}, {DNNL_ARG_WEIGHTS, km}, {DNNL_ARG_DST, sm}, {DNNL_ARG_SCRATCHPAD, scm}});
        softmax_rows(s.data(), scale, g, ms, bias, bst, b, h, pb.data());
        dnnl::memory pm(gemms->p, eng, pb.data()), vm_(gemms->v, eng, vb.data()), ym(gemms->y, eng, yp);
        dnnl::memory scm2(gemms->pv_scratch, eng, scratch.data());
        gemms->pv.execute(stream, {{DNNL_ARG_SRC, pm}, {DNNL_ARG_WEIGHTS, vm_}, {DNNL_ARG_DST, ym}, {DNNL_ARG_SCRATCHPAD, scm2}});
      }
    });
  };
}

bool claims_attention(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs& attrs) {
  for (const auto& t : in)
    if (t.dtype != DType::f32) return false;
  if (out[0].dtype != DType::f32) return false;  // stored in another type (out=): the decomposition's cast
  if (attrs.has("compute")) {
    DType c = attrs.dtype("compute");
    return c == DType::f32 || (c == DType::bf16 && onednn_available());
  }
  return true;
}

}  // namespace

void register_attention(KernelTable& t) { t[static_cast<size_t>(Op::attention)] = {claims_attention, make_attention}; }

}  // namespace rlx::backends::cpu
