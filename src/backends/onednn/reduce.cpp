// reduce (sum, prod, max, min over any axes) as oneDNN's reduction primitive (sums over middle
// axes as a matmul with ones). The dims before the first reduced axis are the rows shared out
// among the threads.
#include <algorithm>

#include "backends/onednn/oneapi.h"

namespace rlx::backends::onednn {

namespace {

using ir::Op;

std::optional<dnnl::algorithm> reduction_of(const std::string& kind) {
  if (kind == "sum") return dnnl::algorithm::reduction_sum;
  if (kind == "prod") return dnnl::algorithm::reduction_mul;
  if (kind == "max") return dnnl::algorithm::reduction_max;
  if (kind == "min") return dnnl::algorithm::reduction_min;
  return std::nullopt;
}

HostKernel reduce_kernel(const ir::Type& in, const ir::Type& out, const ir::Attrs& attrs) {
  dnnl::algorithm alg = *reduction_of(attrs.s("kind"));
  std::vector<int64_t> s = shape_values(in.shape);
  std::vector<bool> reduced(s.size(), false);
  for (int64_t a : attrs.ints("axes")) reduced[static_cast<size_t>(codegen::normalize_axis(a, s.size()))] = true;
  size_t k = static_cast<size_t>(std::find(reduced.begin(), reduced.end(), true) - reduced.begin());
  int64_t rows = 1, src_row = 1, dst_row = 1;
  std::vector<int64_t> src_inner, dst_inner;
  for (size_t d = 0; d < s.size(); ++d) {
    if (d < k) {
      rows *= s[d];
      continue;
    }
    src_inner.push_back(s[d]);
    dst_inner.push_back(reduced[d] ? 1 : s[d]);
    src_row *= s[d];
    dst_row *= reduced[d] ? 1 : s[d];
  }
  DType di = in.dtype, dout = out.dtype;
  return split_kernel(rows, src_row,
                      {{DNNL_ARG_SRC, 0, src_row * static_cast<int64_t>(dtype_size(di))},
                       {DNNL_ARG_DST, output(0), dst_row * static_cast<int64_t>(dtype_size(dout))}},
                      [=](int64_t n) {
                        std::vector<int64_t> sd{n}, dd{n};
                        sd.insert(sd.end(), src_inner.begin(), src_inner.end());
                        dd.insert(dd.end(), dst_inner.begin(), dst_inner.end());
                        dnnl::memory::desc src = dense(sd, di), dst = dense(dd, dout);
                        dnnl::reduction::primitive_desc pd(dnnl::reduction::desc(alg, src, dst, 0.0f, 0.0f), user_scratchpad(), cpu::onednn_engine());
                        return Prim{dnnl::reduction(pd), {src, dst}, pd.scratchpad_desc()};
                      });
}

// A sum over a block of middle axes — [R, K, N] → [R, N], N > 1 — for which oneDNN's reduction
// has only its reference loop (30 ms for MiniLM's mean pooling at batch 32): a batched matmul
// of a row of ones [1, K] with each [K, N] block.
std::optional<HostKernel> middle_sum_kernel(const ir::Type& in, const ir::Attrs& attrs) {
  if (attrs.s("kind") != "sum" || in.dtype != DType::f32) return std::nullopt;
  std::vector<int64_t> s = shape_values(in.shape);
  std::vector<bool> reduced(s.size(), false);
  for (int64_t a : attrs.ints("axes")) reduced[static_cast<size_t>(codegen::normalize_axis(a, s.size()))] = true;
  size_t first = static_cast<size_t>(std::find(reduced.begin(), reduced.end(), true) - reduced.begin());
  size_t last = first;
  while (last < s.size() && reduced[last]) ++last;
  for (size_t d = last; d < s.size(); ++d)
    if (reduced[d]) return std::nullopt;  // not one block
  int64_t R = 1, K = 1, N = 1;
  for (size_t d = 0; d < s.size(); ++d) (d < first ? R : d < last ? K : N) *= s[d];
  if (N == 1 || first == s.size()) return std::nullopt;
  auto ones = std::make_shared<std::vector<float>>(static_cast<size_t>(K), 1.0f);
  HostKernel k = split_kernel(R, K * N,
                              {{DNNL_ARG_SRC, 0, 0, 0, ones->data()}, {DNNL_ARG_WEIGHTS, 0, K * N * 4}, {DNNL_ARG_DST, output(0), N * 4}},
                              [=](int64_t n) {
                                dnnl::memory::desc a = dense({1, 1, K}, DType::f32), b = dense({n, K, N}, DType::f32), c = dense({n, 1, N}, DType::f32);
                                dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b, c), user_scratchpad(), cpu::onednn_engine());
                                if (std::string(pd.impl_info_str()).rfind("ref", 0) == 0) throw dnnl::error(dnnl_unimplemented, "reference matmul");
                                return Prim{dnnl::matmul(pd), {a, b, c}, pd.scratchpad_desc()};
                              });
  return HostKernel([ones, k](const KernelArgs& a) { k(a); });  // the row of ones lives with the kernel
}

HostKernel best_reduce_kernel(const ir::Type& in, const ir::Type& out, const ir::Attrs& attrs) {
  try {
    if (auto k = middle_sum_kernel(in, attrs)) return *k;
  } catch (const dnnl::error&) {
  }
  return reduce_kernel(in, out, attrs);
}

bool claims_reduce(Op op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs& attrs) {
  DType d = in[0].dtype;
  if (!reduction_of(attrs.s("kind")) || (d != DType::f32 && d != DType::bf16) || out[0].dtype != d || in[0].shape.empty()) return false;
  if (!shape_is_static(in[0].shape)) return true;
  for (int64_t v : shape_values(in[0].shape))
    if (v == 0) return false;
  return buildable(claim_key(op, in, out, attrs), [&] { best_reduce_kernel(in[0], out[0], attrs); });
}

HostKernel make_reduce(const ir::Node& n, const ir::Graph& g) { return best_reduce_kernel(g.type(n.inputs[0]), g.type(n.outputs[0]), n.attrs); }

}  // namespace

void register_reduce(KernelTable& t) { t[static_cast<size_t>(Op::reduce)] = {claims_reduce, make_reduce}; }

}  // namespace rlx::backends::onednn
