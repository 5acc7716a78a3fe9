// expert_matmul as grouped GEMMs: the (token, choice) rows routed to each expert are gathered
// into one block, and the block is multiplied by that expert's matrix — packed rows decoded on
// the fly (few rows, decoding) or by tiles into a GEMM (many rows, prefill), dense f32 by
// OpenBLAS. Work is (expert, block of ~64 KiB of its rows) items over the thread pool, so a
// decode step streams each chosen expert's weights once, as a dense layer streams its own.
#include <cblas.h>
#include <omp.h>

#include <atomic>
#include <map>
#include <memory>

#include "backends/cpu/kernels.h"
#include "backends/cpu/onednn_matmul.h"
#include "backends/cpu/quant_q8.h"
#include "backends/cpu/quant_rows.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::backends::cpu {

namespace {

using ir::Op;

// bf16 rows x[M, K] times a decoded bf16 tile W[nt, K] → f32 y[M, nt] with row stride ldc; M is
// a run-time dimension (each expert gets its own count). One oneDNN primitive per thread and
// shape, so concurrent runs never share a scratchpad.
void bf16_rows_gemm(const uint16_t* x, int64_t M, const uint16_t* tile, int64_t nt, int64_t K, float* y, int64_t ldc) {
  using dt = dnnl::memory::data_type;
  struct Prim {
    dnnl::matmul prim;
  };
  thread_local std::map<std::tuple<int64_t, int64_t, int64_t>, std::shared_ptr<Prim>> cache;
  auto& p = cache[{nt, K, ldc}];
  dnnl::engine& e = onednn_engine();
  if (!p) {
    const auto rt = DNNL_RUNTIME_DIM_VAL;
    dnnl::memory::desc a({rt, K}, dt::bf16, dnnl::memory::dims{K, 1});
    dnnl::memory::desc b({K, nt}, dt::bf16, dnnl::memory::dims{1, K});
    dnnl::memory::desc c({rt, nt}, dt::f32, dnnl::memory::dims{ldc, 1});
    p = std::make_shared<Prim>(Prim{dnnl::matmul(dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, b, c), e))});
  }
  omp_set_num_threads(1);  // oneDNN's OpenMP stays single-threaded inside our pool threads
  thread_local dnnl::stream stream(e);
  p->prim.execute(stream, {{DNNL_ARG_SRC, dnnl::memory({{M, K}, dt::bf16, dnnl::memory::dims{K, 1}}, e, const_cast<uint16_t*>(x))},
                           {DNNL_ARG_WEIGHTS, dnnl::memory({{K, nt}, dt::bf16, dnnl::memory::dims{1, K}}, e, const_cast<uint16_t*>(tile))},
                           {DNNL_ARG_DST, dnnl::memory({{M, nt}, dt::f32, dnnl::memory::dims{ldc, 1}}, e, y)}});
}

HostKernel make_expert_matmul(const ir::Node& node, const ir::Graph& lir) {
  const int64_t N = node.attrs.i("n"), K = node.attrs.i("k");
  const bool packed = node.attrs.has("type");
  const quant::BlockType t = packed ? *quant::block_type_from_name(node.attrs.s("type")) : quant::BlockType::q8_0;
  const int64_t rb = packed ? *quant::row_bytes(t, K) : K * 4;
  const bool per_choice = lir.type(node.inputs[0]).shape.size() == 3;
  const bool half_x = lir.type(node.inputs[0]).dtype == DType::bf16;  // weights rounded to bf16 too
  // act=q8: the gathered rows are rounded to 8-bit blocks once; experts with few rows take the
  // integer dot products where the type has them, the rest multiply the rounded rows as f32.
  const bool act_q8 = node.attrs.has("act") && node.attrs.s("act") == "q8";
  const q8::DotFn q8dot = act_q8 && packed ? q8::dot_fn(t) : nullptr;
  return [=](const KernelArgs& a) {
    const int64_t* idx = a.in[1].as<int64_t>();
    const auto* w = static_cast<const uint8_t*>(a.in[2].data);
    const int64_t E = a.in[2].shape[0], T = a.in[1].shape[0], A = a.in[1].shape[1];
    float* y = a.out[0].as<float>();
    // Rows per expert: counting sort of the T·A choices by expert.
    thread_local std::vector<int64_t> start, order;
    start.assign(static_cast<size_t>(E + 1), 0);
    for (int64_t i = 0; i < T * A; ++i) {
      int64_t e = idx[i];
      if (e < 0 || e >= E)
        throw Error(ErrorKind::invalid_argument, cat("expert_matmul: choice ", i / A, ",", i % A, " names expert ", e, "; the layer has ", E));
      ++start[static_cast<size_t>(e + 1)];
    }
    for (int64_t e = 0; e < E; ++e) start[static_cast<size_t>(e + 1)] += start[static_cast<size_t>(e)];
    order.resize(static_cast<size_t>(T * A));
    {
      std::vector<int64_t> fill(start.begin(), start.end() - 1);
      for (int64_t i = 0; i < T * A; ++i) order[static_cast<size_t>(fill[static_cast<size_t>(idx[i])]++)] = i;
    }
    thread_local std::vector<int64_t> used;
    used.clear();
    for (int64_t e = 0; e < E; ++e)
      if (start[static_cast<size_t>(e + 1)] > start[static_cast<size_t>(e)]) used.push_back(e);
    // Items: (expert, block of its rows): ~64 KiB of weights when experts get few rows (each
    // row block streamed once, decoded per dot product); 256-row tiles when they get many
    // (prefill), so each tile's GEMM is wide enough to run at the FMA units' rate.
    const bool wide = packed ? T * A >= 16 * static_cast<int64_t>(used.size()) : true;
    const int64_t block = wide ? 256 : std::max<int64_t>(8, 65536 / std::max<int64_t>(1, rb));
    const int64_t blocks = (N + block - 1) / block;
    // bf16 rows of experts with many of them: decoded bf16 tiles into oneDNN's bf16 GEMM
    const bool gemm16 = half_x && packed && wide && cpu_has_bf16_gemm();
    // Each expert's rows of x, gathered contiguously in expert order; results land likewise.
    thread_local std::vector<float> xg, yg;
    thread_local std::vector<uint16_t> xg16;
    // (bf16 rows are widened to f32 only for the row kernels; the bf16 GEMM takes them as they are)
    const bool widen = half_x && !gemm16;
    xg.resize(half_x && !widen ? 0 : static_cast<size_t>(T * A * K));
    yg.resize(static_cast<size_t>(T * A * N));
    if (half_x) xg16.resize(static_cast<size_t>(T * A * K));
    for (int64_t r = 0; r < T * A; ++r) {
      int64_t i = order[static_cast<size_t>(r)], row = per_choice ? i : i / A;
      if (half_x) {
        const uint16_t* src = a.in[0].as<uint16_t>() + row * K;
        std::copy(src, src + K, xg16.data() + r * K);
        if (widen)
          for (int64_t k = 0; k < K; ++k) xg[static_cast<size_t>(r * K + k)] = bf16_to_f32(src[k]);
      } else {
        const float* src = a.in[0].as<float>() + row * K;
        std::copy(src, src + K, xg.data() + r * K);
      }
    }
    thread_local std::vector<int8_t> xq;
    thread_local std::vector<float> xd, xdeq;
    thread_local q8::RowExtras extras;
    q8::Rows xr;
    const int64_t rows = T * A;
    if (act_q8) {
      const int64_t nb = rows * K / 32;
      xq.resize(static_cast<size_t>(rows * K));
      xd.resize(static_cast<size_t>(2 * nb));
      xdeq.resize(static_cast<size_t>(rows * K));
      q8::quantize_rows(xg.data(), rows, K, xq.data(), xd.data(), xd.data() + nb, xdeq.data());
      xr = {xq.data(), xd.data(), xd.data() + nb, K, K / 32};
      if (q8dot) q8::prepare_rows(t, rows, K, extras, xr);
    }
    const uint16_t* xs16 = xg16.data();
    const int64_t items = static_cast<int64_t>(used.size()) * blocks;
    // Pointers, not the thread_local vectors: inside the pool's threads those names would be
    // the workers' own (empty) vectors.
    const int64_t* first = start.data();
    const int64_t* experts = used.data();
    const float* xs = act_q8 ? xdeq.data() : xg.data();  // rounded rows under act=q8
    float* ys = yg.data();
    std::atomic<int64_t> next{0};
    rlx::parallel_for(items > 1 ? num_threads() : 1, 1, [&](int64_t, int64_t) {
      for (int64_t it; (it = next.fetch_add(1, std::memory_order_relaxed)) < items;) {
        int64_t e = experts[it / blocks], n0 = (it % blocks) * block, cnt = std::min(block, N - n0);
        int64_t r0 = first[e], M = first[e + 1] - r0;
        const uint8_t* we = w + e * N * rb;
        float* ye = ys + r0 * N + n0;
        if (q8dot && M < 16) {
          float out[q8::kMaxRows];
          for (int64_t j = 0; j < cnt; ++j)
            for (int64_t m0 = 0; m0 < M; m0 += q8::kMaxRows) {
              int mm = static_cast<int>(std::min<int64_t>(q8::kMaxRows, M - m0));
              q8dot(we + (n0 + j) * rb, K, xr.from(r0 + m0), mm, out);
              for (int m = 0; m < mm; ++m) ye[(m0 + m) * N + j] = out[m];
            }
        } else if (gemm16) {
          thread_local std::vector<uint16_t> tile;
          tile.resize(static_cast<size_t>(cnt * K));
          packed_rows_decode_bf16(t, we, rb, K, n0, cnt, tile.data());
          bf16_rows_gemm(xs16 + r0 * K, M, tile.data(), cnt, K, ye, N);
        } else if (packed) {
          packed_rows_product(t, we, rb, K, n0, cnt, xs + r0 * K, M, ye, N, half_x);
        } else {
          const float* wf = reinterpret_cast<const float*>(we) + n0 * K;
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(M), static_cast<int>(cnt), static_cast<int>(K), 1.0f,
                      xs + r0 * K, static_cast<int>(K), wf, static_cast<int>(K), 0.0f, ye, static_cast<int>(N));
        }
      }
    });
    for (int64_t r = 0; r < T * A; ++r) {
      const float* src = yg.data() + r * N;
      std::copy(src, src + N, y + order[static_cast<size_t>(r)] * N);
    }
  };
}

bool claims_expert_matmul(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>&, const ir::Attrs&) {
  return in[0].dtype == DType::f32 || (in[0].dtype == DType::bf16 && in[2].dtype == DType::u8);
}

}  // namespace

void register_experts(KernelTable& t) { t[static_cast<size_t>(Op::expert_matmul)] = {claims_expert_matmul, make_expert_matmul}; }

}  // namespace rlx::backends::cpu
