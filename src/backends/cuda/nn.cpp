// Native kernels for the hot HIR ops on the cuda device: softmax, layer/RMS norm, RoPE,
// embedding (f32, f16, bf16), dequantize of packed ggml weights, and dequant_matmul.
#include <cmath>
#include <memory>

#include "backends/cuda/gemm.h"
#include "backends/cuda/device.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/megakernel.h"
#include "util/quant_blocks.h"
#include "util/strings.h"

namespace rlx::backends::cuda {

namespace {

using ir::Op;

bool claims_softmax(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>&, const ir::Attrs&) { return is_half_or_f32(in[0].dtype); }

bool claims_norm(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>&, const ir::Attrs& a) {
  if (!is_half_or_f32(in[0].dtype)) return false;
  if (!storable_out(in[0].dtype, a)) return false;
  const Shape& x = in[0].shape;
  size_t axis = static_cast<size_t>(norm_axis(a.i("axis"), x.size()));
  Shape trailing(x.begin() + static_cast<std::ptrdiff_t>(axis), x.end());
  for (size_t k = 1; k < in.size(); ++k)  // gamma and beta cover the normalized dims exactly
    if (in[k].dtype != in[0].dtype || in[k].shape != trailing) return false;
  return true;
}

bool claims_rope(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>&, const ir::Attrs& a) {
  if (a.has("norm_eps") && in[2].dtype != in[0].dtype) return false;  // the norm's weight in x's type
  if (a.has("append_axis") && (in.back().dtype != in[0].dtype || in[1].shape.size() != 1)) return false;
  return is_half_or_f32(in[0].dtype) && in[0].shape.size() >= 2 && is_integer(in[1].dtype) && in[1].shape.size() <= 2;
}

bool claims_embedding(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>&, const ir::Attrs&) {
  return is_half_or_f32(in[0].dtype) && in[0].shape.size() == 2 && is_integer(in[1].dtype);
}

bool claims_dequantize(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs& a) {
  return in[0].dtype == DType::u8 && out[0].dtype == DType::f32 && quant::block_type_from_name(a.s("type")).has_value();
}

Kernel make_softmax(const ir::Node& n, const ir::Graph& g) {
  std::vector<int64_t> x = static_shape(g, n.inputs[0]);
  size_t axis = static_cast<size_t>(norm_axis(n.attrs.i("axis"), x.size()));
  int64_t outer = 1, inner = 1, len = x[axis];
  for (size_t d = 0; d < axis; ++d) outer *= x[d];
  for (size_t d = axis + 1; d < x.size(); ++d) inner *= x[d];
  bool log = n.op == Op::log_softmax;
  Dt dt = to_dt(in_type(g, n, 0).dtype);
  return {[=](const LaunchArgs& a) { launch_softmax(dt, a.in[0].data, a.out[0].data, outer, len, inner, log, a.stream); }};
}

Kernel make_norm(const ir::Node& n, const ir::Graph& g) {
  std::vector<int64_t> x = static_shape(g, n.inputs[0]);
  size_t axis = static_cast<size_t>(norm_axis(n.attrs.i("axis"), x.size()));
  int64_t inner = 1, total = 1;
  for (size_t d = 0; d < x.size(); ++d) {
    total *= x[d];
    if (d >= axis) inner *= x[d];
  }
  int64_t rows = inner ? total / inner : 0;
  float eps = static_cast<float>(n.attrs.f("eps"));
  bool rms = n.op == Op::rms_norm;
  Dt dt = to_dt(in_type(g, n, 0).dtype), od = to_dt(out_type(g, n, 0).dtype);
  return {[=](const LaunchArgs& a) {
    launch_norm(dt, a.in[0].data, a.in.size() > 1 ? a.in[1].data : nullptr, a.in.size() > 2 ? a.in[2].data : nullptr, od, a.out[0].data, rows,
                inner, eps, rms, a.stream);
  }};
}

Kernel make_rope(const ir::Node& n, const ir::Graph& g) {
  std::vector<int64_t> x = static_shape(g, n.inputs[0]), p = static_shape(g, n.inputs[1]);
  RopeSpec r{};
  size_t rank = x.size();
  r.total = 1;
  for (int64_t d : x) r.total *= d;
  r.D = x[rank - 1];
  r.S = x[rank - 2];
  r.dims = n.attrs.i("dims") ? n.attrs.i("dims") : r.D;
  r.half = r.dims / 2;
  r.interleaved = n.attrs.b("interleaved");
  r.batched_positions = p.size() == 2;
  r.batch_elems = x[0] ? r.total / x[0] : 1;
  r.theta = static_cast<float>(n.attrs.f("theta"));
  r.table = r.half <= kRopeTablePairs;
  for (int64_t k = 0; r.table && k < r.half; ++k)  // the reference's expression, on the same libm
    r.inv_freq[k] = 1.0f / std::pow(r.theta, static_cast<float>(2 * k) / static_cast<float>(r.dims));
  Dt dt = to_dt(in_type(g, n, 0).dtype), pdt = to_dt(in_type(g, n, 1).dtype);
  const bool normed = n.attrs.has("norm_eps"), append = n.attrs.has("append_axis");
  const float eps = normed ? static_cast<float>(n.attrs.f("norm_eps")) : 0.0f;
  r.C = append ? static_shape(g, n.inputs.back())[rank - 2] : 0;
  std::string label = normed ? "rms-normed first" : "";
  if (append) label += label.empty() ? "into the cache" : ", into the cache";
  const size_t cache_bytes = append ? dtype_bytes(in_type(g, n, 0).dtype, static_cast<size_t>(r.total / r.S * r.C)) : 0;
  Kernel k{[=](const LaunchArgs& a) {
            // appending not in place (the cache was not donated): its other rows first
            if (append && a.in.back().data != a.out[0].data)
              check(cudaMemcpyAsync(a.out[0].data, a.in.back().data, cache_bytes, cudaMemcpyDeviceToDevice, a.stream), "copying the cache a rope appends to");
            launch_rope(dt, a.in[0].data, a.in[1].data, pdt, a.out[0].data, r, normed ? a.in[2].data : nullptr, eps, a.error, a.node_index, a.stream);
          },
          0, label};
  k.mega = [=](const LaunchArgs& a, MegaOp& op) {
    if (append && a.in.back().data != a.out[0].data) return false;  // the copy first: a kernel's job
    MegaRope& m = op.rope;
    op.kind = normed ? MegaKind::norm_rope : MegaKind::rope;
    m.x = a.in[0].data;
    m.pos = a.in[1].data;
    m.norm_g = normed ? a.in[2].data : nullptr;
    m.y = a.out[0].data;
    m.dt = dt;
    m.pos_dt = pdt;
    m.eps = eps;
    m.r = r;
    const int64_t rows = r.total / r.D;
    op.tiles = normed ? (rows + kMegaThreads / 32 - 1) / (kMegaThreads / 32) : (rows * (r.D - r.dims / 2) + kMegaThreads - 1) / kMegaThreads;
    return true;
  };
  return k;
}

Kernel make_embedding(const ir::Node& n, const ir::Graph& g) {
  std::vector<int64_t> t = static_shape(g, n.inputs[0]);
  Dt dt = to_dt(in_type(g, n, 0).dtype), idt = to_dt(in_type(g, n, 1).dtype);
  int64_t V = t[0], D = t[1];
  return {[=](const LaunchArgs& a) {
    launch_embedding(dt, a.in[0].data, a.in[1].data, idt, a.out[0].data, a.in[1].numel, V, D, a.error, a.node_index, a.stream);
  }};
}

Kernel make_dequantize(const ir::Node& n, const ir::Graph&) {
  quant::BlockType t = *quant::block_type_from_name(n.attrs.s("type"));
  int64_t elems = quant::block_elems(t), bytes = quant::block_bytes(t);
  int type = static_cast<int>(t);
  return {[=](const LaunchArgs& a) {
    launch_dequantize(type, a.in[0].data, static_cast<float*>(a.out[0].data), a.out[0].numel / elems, bytes, elems, a.stream);
  }};
}

// dequant_matmul, x[..., k] · Wᵀ with W[n, k] packed: f32 x → f32, bf16 x → f32 or bf16; with
// an addend (a residual) added as the product is stored.
constexpr int64_t kMaxNormedRows = 16384;

bool claims_dequant_matmul(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs& a) {
  const bool norm = a.has("norm_eps"), half = (a.s("type") == "bf16" || a.s("type") == "f16") && a.i("k") % 8 == 0;
  if (in.size() == 3 && !norm && in[2].dtype != out[0].dtype) return false;               // the addend
  if (norm && (in.size() != 3 || in[2].dtype != in[0].dtype || !half)) return false;      // the norm's weight
  // every block of the GEMV normalizes x again: worth a kernel for a layer's projections, not
  // for an LM head's ~19k blocks (152k rows), which keeps its own norm kernel
  if (norm && a.i("n") > kMaxNormedRows) return false;
  if (a.has("glu") && ((in.size() == 3 && !norm) || !half)) return false;
  if (in[1].dtype != DType::u8 || !quant::block_type_from_name(a.s("type")).has_value()) return false;
  if (a.has("act") && a.s("act") != "f32") return false;  // 8-bit activations: the decomposition
  if (in[0].dtype == DType::f32) return out[0].dtype == DType::f32;
  return in[0].dtype == DType::bf16 && (out[0].dtype == DType::f32 || out[0].dtype == DType::bf16);
}

// A few rows (decode): one GEMV-like kernel reading the packed weights once. More rows
// (prefill): bf16 weights with bf16 x are multiplied by cuBLASLt in place; other weights are
// decoded into scratch (f32, or bf16 for bf16 x) first.
Kernel make_dequant_matmul(const ir::Node& n, const ir::Graph& g) {
  quant::BlockType t = *quant::block_type_from_name(n.attrs.s("type"));
  int64_t N = n.attrs.i("n"), K = n.attrs.i("k");
  int64_t be = quant::block_elems(t), bb = quant::block_bytes(t);
  int type = static_cast<int>(t);
  DType xd = in_type(g, n, 0).dtype, yd = out_type(g, n, 0).dtype;
  Dt xdt = to_dt(xd), ydt = to_dt(yd);
  int64_t M = 1;
  for (int64_t d : static_shape(g, n.inputs[0])) M *= d;
  M /= K;
  const bool norm = n.attrs.has("norm_eps"), addend = n.inputs.size() == 3 && !norm, glu = n.attrs.has("glu");
  const float eps = norm ? static_cast<float>(n.attrs.f("norm_eps")) : 0.0f;
  if (M <= kGemvMaxRows) {
    Kernel k{[=](const LaunchArgs& a) {
               launch_dequant_gemv(type, xdt, a.in[0].data, a.in[1].data, ydt, a.out[0].data, addend ? a.in[2].data : nullptr, M, N, K, bb, be, glu,
                                   norm ? a.in[2].data : nullptr, eps, a.stream);
             },
             0, cat(M, "×", N, "×", K, " ", n.attrs.s("type"), " gemv", norm ? " (rms-normed x)" : "", glu ? " (silu-gated)" : "", addend ? " + addend" : "")};
    if (M == 1)
      k.mega = [=](const LaunchArgs& a, MegaOp& op) {
        const bool half = (t == quant::BlockType::bf16 || t == quant::BlockType::f16) && K % 8 == 0;
        MegaGemv& m = op.gemv;
        op.kind = half ? MegaKind::gemv_half : MegaKind::gemv_blocks;
        m.x = a.in[0].data;
        m.w = a.in[1].data;
        m.y = a.out[0].data;
        m.addend = addend ? a.in[2].data : nullptr;
        m.norm_g = norm ? a.in[2].data : nullptr;
        m.eps = eps;
        m.M = 1;
        m.N = N;
        m.K = static_cast<int>(K);
        m.x_bf16 = xdt == Dt::bf16;
        m.y_bf16 = ydt == Dt::bf16;
        m.w_bf16 = t == quant::BlockType::bf16;
        m.glu = glu;
        m.round_w = m.x_bf16 && t != quant::BlockType::bf16;  // as launch_dequant_gemv decides
        m.block_type = type;
        m.bb = static_cast<int>(bb);
        m.be = static_cast<int>(be);
        m.row_bytes = K / be * bb;
        m.split = gemv_split(N, half ? K / 8 : K / be);
        const int64_t cols = kGemvWarpsPerBlock / m.split;
        op.tiles = (N + cols - 1) / cols;
        return true;
      };
    return k;
  }
  bool direct = xd == DType::bf16 && t == quant::BlockType::bf16;
  DType wd = xd;  // the weights' dtype in the GEMM
  const int64_t rows = glu ? 2 * N : N;  // glu: gate and up rows in one GEMM, then silu(gate)·up
  auto plan = std::make_shared<GemmPlan>(std::vector<int64_t>{M, K}, std::vector<int64_t>{rows, K}, ir::Intss{{}, {}}, ir::Intss{{1}, {1}}, wd, yd);
  size_t wbytes = direct ? 0 : (static_cast<size_t>(rows * K) * dtype_bytes(wd, 1) + 255) / 256 * 256;
  size_t pbytes = glu ? (dtype_bytes(yd, M * rows) + 255) / 256 * 256 : 0;  // the [M, 2N] product
  size_t xbytes = norm ? (dtype_bytes(xd, M * K) + 255) / 256 * 256 : 0;     // the normalized x
  int64_t blocks = rows * K / be;
  return {[=](const LaunchArgs& a) {
            const void* w = a.in[1].data;
            auto* scratch = static_cast<uint8_t*>(a.scratch);
            if (!direct) {
              if (wd == DType::bf16) launch_dequantize_bf16(type, w, scratch, blocks, bb, be, a.stream);
              else launch_dequantize(type, w, reinterpret_cast<float*>(scratch), blocks, bb, be, a.stream);
              w = scratch;
            }
            void* product = glu ? scratch + wbytes : a.out[0].data;
            const void* x = a.in[0].data;
            if (norm) {
              void* xn = scratch + wbytes + pbytes;
              launch_norm(xdt, x, a.in[2].data, nullptr, xdt, xn, M, K, eps, true, a.stream);
              x = xn;
            }
            plan->run(x, w, product, nullptr, nullptr, scratch + wbytes + pbytes + xbytes, a.stream);
            if (glu) launch_glu(ydt, product, a.out[0].data, M, N, a.stream);
            if (addend) {  // many rows: the addend in a second pass, in place
              Space sp;
              sp.rank = 1;
              sp.shape[0] = M * N;
              Strides one;
              one.s[0] = 1;
              launch_binary(Op::add, ydt, ydt, a.out[0].data, a.in[2].data, a.out[0].data, sp, one, one, a.stream);
            }
          },
          wbytes + pbytes + xbytes + plan->scratch(),
          cat(norm ? "rms_norm, " : "", direct ? "" : "dequantize, ", plan->describe(), glu ? ", silu-gated" : "", addend ? ", + addend" : "")};
}

// expert_matmul: f32 x, dense f32 or packed experts; 8-bit activations go to the decomposition.
bool claims_expert_matmul(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>&, const ir::Attrs& a) {
  if (a.has("act") && a.s("act") != "f32") return false;
  return in[1].dtype == DType::i64 && (in[0].dtype == DType::f32 || (in[0].dtype == DType::bf16 && in[2].dtype == DType::u8));
}

Kernel make_expert_matmul(const ir::Node& n, const ir::Graph& g) {
  const int64_t N = n.attrs.i("n"), K = n.attrs.i("k");
  const bool packed = n.attrs.has("type");
  const quant::BlockType t = packed ? *quant::block_type_from_name(n.attrs.s("type")) : quant::BlockType::q8_0;
  const int type = packed ? static_cast<int>(t) : -1;
  const int64_t bb = packed ? quant::block_bytes(t) : 4, be = packed ? quant::block_elems(t) : 1;
  const bool per_choice = static_shape(g, n.inputs[0]).size() == 3;
  const bool x_bf16 = in_type(g, n, 0).dtype == DType::bf16;
  return {[=](const LaunchArgs& a) {
            const int64_t E = a.in[2].shape[0], A = a.in[1].shape[1];
            launch_expert_matmul(type, a.in[0].data, x_bf16, per_choice, static_cast<const int64_t*>(a.in[1].data), a.in[2].data,
                                 static_cast<float*>(a.out[0].data), E, a.in[1].numel, A, N, K, bb, be, a.error, a.node_index, a.stream);
          },
          0, cat("expert_matmul ", N, "×", K, " ", packed ? n.attrs.s("type") : std::string("f32"), ", a warp per (choice, row)")};
}

}  // namespace

void register_nn(KernelTable& t) {
  t[static_cast<size_t>(Op::expert_matmul)] = {claims_expert_matmul, make_expert_matmul};
  t[static_cast<size_t>(Op::dequant_matmul)] = {claims_dequant_matmul, make_dequant_matmul};
  t[static_cast<size_t>(Op::softmax)] = {claims_softmax, make_softmax};
  t[static_cast<size_t>(Op::log_softmax)] = {claims_softmax, make_softmax};
  t[static_cast<size_t>(Op::layer_norm)] = {claims_norm, make_norm};
  t[static_cast<size_t>(Op::rms_norm)] = {claims_norm, make_norm};
  t[static_cast<size_t>(Op::rope)] = {claims_rope, make_rope};
  t[static_cast<size_t>(Op::embedding)] = {claims_embedding, make_embedding};
  t[static_cast<size_t>(Op::dequantize)] = {claims_dequantize, make_dequantize};
}

}  // namespace rlx::backends::cuda
