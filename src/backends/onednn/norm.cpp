// softmax and log_softmax (oneDNN's softmax_v2, accurate and log) over one axis; layer_norm over
// the trailing dims from its axis, with its scale and shift. The dims before the axis are the rows.
#include "backends/onednn/oneapi.h"

namespace rlx::backends::onednn {

namespace {

using ir::Op;

bool float_type(DType d) { return d == DType::f32 || d == DType::bf16; }

// [outer, axis, inner] around a normalized axis.
struct Around {
  int64_t outer = 1, len = 1, inner = 1;
};
Around around(const std::vector<int64_t>& s, int64_t axis) {
  Around a;
  for (size_t d = 0; d < s.size(); ++d) {
    int64_t ax = static_cast<int64_t>(d);
    if (ax < axis) a.outer *= s[d];
    else if (ax == axis) a.len = s[d];
    else a.inner *= s[d];
  }
  return a;
}

HostKernel softmax_kernel(Op op, const ir::Type& in, const ir::Type& out, int64_t axis_attr) {
  std::vector<int64_t> s = shape_values(in.shape);
  int64_t axis = codegen::normalize_axis(axis_attr, s.size());
  Around ar = around(s, axis);
  DType di = in.dtype, dout = out.dtype;
  dnnl::algorithm alg = op == Op::log_softmax ? dnnl::algorithm::softmax_log : dnnl::algorithm::softmax_accurate;
  int64_t row = ar.len * ar.inner;
  return split_kernel(ar.outer, row,
                      {{DNNL_ARG_SRC, 0, row * static_cast<int64_t>(dtype_size(di))}, {DNNL_ARG_DST, output(0), row * static_cast<int64_t>(dtype_size(dout))}},
                      [=](int64_t rows) {
                        // over the last axis: [rows, len], the form oneDNN's jit runs fastest
                        std::vector<int64_t> dims = ar.inner == 1 ? std::vector<int64_t>{rows, ar.len} : std::vector<int64_t>{rows, ar.len, ar.inner};
                        dnnl::memory::desc src = dense(dims, di), dst = dense(dims, dout);
                        dnnl::softmax_v2_forward::primitive_desc pd(
                            dnnl::softmax_v2_forward::desc(dnnl::prop_kind::forward_inference, alg, src, dst, 1), user_scratchpad(), cpu::onednn_engine());
                        return Prim{dnnl::softmax_v2_forward(pd), {src, dst}, pd.scratchpad_desc()};
                      });
}

bool claims_softmax(Op op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs& attrs) {
  if (!float_type(in[0].dtype) || !float_type(out[0].dtype) || in[0].shape.empty()) return false;
  if (!shape_is_static(in[0].shape)) return true;
  return buildable(claim_key(op, in, out, attrs), [&] { softmax_kernel(op, in[0], out[0], attrs.i("axis")); });
}

HostKernel make_softmax(const ir::Node& n, const ir::Graph& g) {
  return softmax_kernel(n.op, g.type(n.inputs[0]), g.type(n.outputs[0]), n.attrs.i("axis"));
}

// layer_norm(x[, scale[, shift]]) over the dims from `axis` on, flattened to C.
HostKernel layer_norm_kernel(const std::vector<ir::Type>& in, const ir::Type& out, int64_t axis_attr, float eps) {
  std::vector<int64_t> s = shape_values(in[0].shape);
  int64_t axis = codegen::normalize_axis(axis_attr, s.size());
  int64_t rows = 1, C = 1;
  for (size_t d = 0; d < s.size(); ++d) (static_cast<int64_t>(d) < axis ? rows : C) *= s[d];
  DType dt = in[0].dtype;
  size_t n_in = in.size();
  std::vector<Arg> args = {{DNNL_ARG_SRC, 0, C * static_cast<int64_t>(dtype_size(dt))}, {DNNL_ARG_DST, output(0), C * static_cast<int64_t>(dtype_size(dt))}};
  if (n_in > 1) args.push_back({DNNL_ARG_SCALE, 1, 0});
  if (n_in > 2) args.push_back({DNNL_ARG_SHIFT, 2, 0});
  (void)out;
  return split_kernel(rows, C, args, [=](int64_t share) {
    dnnl::memory::desc data = dense({share, C}, dt), param = dense({C}, DType::f32);
    auto flags = dnnl::normalization_flags::none;
    if (n_in > 1) flags = flags | dnnl::normalization_flags::use_scale;
    if (n_in > 2) flags = flags | dnnl::normalization_flags::use_shift;
    dnnl::layer_normalization_forward::primitive_desc pd(
        dnnl::layer_normalization_forward::desc(dnnl::prop_kind::forward_inference, data, eps, flags), user_scratchpad(), cpu::onednn_engine());
    std::vector<dnnl::memory::desc> descs = {data, data};
    for (size_t i = 1; i < n_in; ++i) descs.push_back(param);
    return Prim{dnnl::layer_normalization_forward(pd), descs, pd.scratchpad_desc()};
  });
}

bool claims_layer_norm(Op op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs& attrs) {
  // the normalized data keeps its type; scale and shift are f32
  if (!float_type(in[0].dtype) || out[0].dtype != in[0].dtype || in[0].shape.empty()) return false;
  for (size_t i = 1; i < in.size(); ++i)
    if (in[i].dtype != DType::f32) return false;
  for (const ir::Type& t : in)
    if (!shape_is_static(t.shape)) return true;
  // one scale (and shift) per normalized element
  std::vector<int64_t> s = shape_values(in[0].shape);
  int64_t C = 1;
  for (size_t d = static_cast<size_t>(codegen::normalize_axis(attrs.i("axis"), s.size())); d < s.size(); ++d) C *= s[d];
  for (size_t i = 1; i < in.size(); ++i) {
    int64_t n = 1;
    for (int64_t d : shape_values(in[i].shape)) n *= d;
    if (n != C) return false;
  }
  return buildable(claim_key(op, in, out, attrs),
                   [&] { layer_norm_kernel(in, out[0], attrs.i("axis"), static_cast<float>(attrs.f("eps"))); });
}

HostKernel make_layer_norm(const ir::Node& n, const ir::Graph& g) {
  std::vector<ir::Type> in;
  for (ir::ValueId v : n.inputs) in.push_back(g.type(v));
  return layer_norm_kernel(in, g.type(n.outputs[0]), n.attrs.i("axis"), static_cast<float>(n.attrs.f("eps")));
}

}  // namespace

void register_norm(KernelTable& t) {
  t[static_cast<size_t>(Op::softmax)] = {claims_softmax, make_softmax};
  t[static_cast<size_t>(Op::log_softmax)] = {claims_softmax, make_softmax};
  t[static_cast<size_t>(Op::layer_norm)] = {claims_layer_norm, make_layer_norm};
}

}  // namespace rlx::backends::onednn
