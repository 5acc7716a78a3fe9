// max_pool and avg_pool as oneDNN pooling over [N·C, 1, spatial…]: channels are independent, so
// the batch and channel dims together are the rows shared out among the threads.
#include "backends/onednn/oneapi.h"

namespace rlx::backends::onednn {

namespace {

using ir::Op;

HostKernel pool_kernel(Op op, const ir::Type& in, const ir::Type& out, const ir::Attrs& attrs) {
  std::vector<int64_t> xs = shape_values(in.shape), ys = shape_values(out.shape);
  size_t sp = xs.size() - 2;
  std::vector<int64_t> kernel = attrs.ints("kernel");
  std::vector<int64_t> strides = attrs.has("strides") ? attrs.ints("strides") : std::vector<int64_t>(sp, 1);
  std::vector<int64_t> pads = attrs.has("pads") ? attrs.ints("pads") : std::vector<int64_t>(2 * sp, 0);
  std::vector<int64_t> lo(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(sp)), hi(pads.begin() + static_cast<std::ptrdiff_t>(sp), pads.end());
  dnnl::algorithm alg = op == Op::max_pool                  ? dnnl::algorithm::pooling_max
                        : attrs.b("count_include_pad") ? dnnl::algorithm::pooling_avg_include_padding
                                                         : dnnl::algorithm::pooling_avg_exclude_padding;
  int64_t in_plane = 1, out_plane = 1;
  for (size_t s = 0; s < sp; ++s) {
    in_plane *= xs[2 + s];
    out_plane *= ys[2 + s];
  }
  DType dt = in.dtype;
  size_t e = dtype_size(dt);
  return split_kernel(xs[0] * xs[1], in_plane,
                      {{DNNL_ARG_SRC, 0, in_plane * static_cast<int64_t>(e)}, {DNNL_ARG_DST, output(0), out_plane * static_cast<int64_t>(e)}},
                      [=](int64_t rows) {
                        std::vector<int64_t> sd{rows, 1}, dd{rows, 1};
                        sd.insert(sd.end(), xs.begin() + 2, xs.end());
                        dd.insert(dd.end(), ys.begin() + 2, ys.end());
                        dnnl::memory::desc src = dense(sd, dt), dst = dense(dd, dt);
                        dnnl::pooling_v2_forward::primitive_desc pd(
                            dnnl::pooling_v2_forward::desc(dnnl::prop_kind::forward_inference, alg, src, dst, strides, kernel,
                                                           std::vector<int64_t>(sp, 0), lo, hi),
                            user_scratchpad(), cpu::onednn_engine());
                        return Prim{dnnl::pooling_v2_forward(pd), {src, dst}, pd.scratchpad_desc()};
                      });
}

bool claims_pool(Op op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs& attrs) {
  DType d = in[0].dtype;
  size_t rank = in[0].shape.size();
  if ((d != DType::f32 && d != DType::bf16) || out[0].dtype != d || rank < 3 || rank > 5) return false;
  if (!shape_is_static(in[0].shape) || !shape_is_static(out[0].shape)) return true;
  for (int64_t v : shape_values(out[0].shape))
    if (v == 0) return false;
  return buildable(claim_key(op, in, out, attrs), [&] { pool_kernel(op, in[0], out[0], attrs); });
}

HostKernel make_pool(const ir::Node& n, const ir::Graph& g) { return pool_kernel(n.op, g.type(n.inputs[0]), g.type(n.outputs[0]), n.attrs); }

}  // namespace

void register_pool(KernelTable& t) {
  t[static_cast<size_t>(Op::max_pool)] = {claims_pool, make_pool};
  t[static_cast<size_t>(Op::avg_pool)] = {claims_pool, make_pool};
}

}  // namespace rlx::backends::onednn
