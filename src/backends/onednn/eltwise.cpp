// Unary math and activations as oneDNN eltwise primitives; binary arithmetic and comparisons
// (numpy broadcasting) as binary primitives, the broadcast operand always oneDNN's src1.
#include "backends/onednn/algorithms.h"
#include "backends/onednn/broadcast.h"
#include "backends/onednn/oneapi.h"

namespace rlx::backends::onednn {

namespace {

using ir::Op;

bool float_type(DType d) { return d == DType::f32 || d == DType::bf16; }

HostKernel unary_kernel(Op op, const ir::Type& in, const ir::Type& out) {
  Eltwise e = *eltwise_of(op);
  int64_t n = 1;
  for (int64_t d : shape_values(in.shape)) n *= d;
  DType di = in.dtype;
  (void)out;
  return split_kernel(n, 1, {{DNNL_ARG_SRC, 0, static_cast<int64_t>(dtype_size(di))}, {DNNL_ARG_DST, output(0), static_cast<int64_t>(dtype_size(di))}},
                      [=](int64_t rows) {
                        dnnl::memory::desc src = dense({rows}, di);  // eltwise writes its source's type
                        dnnl::eltwise_forward::primitive_desc pd(
                            dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference, e.alg, src, e.alpha, e.beta), user_scratchpad(),
                            cpu::onednn_engine());
                        return Prim{dnnl::eltwise_forward(pd), {src, src}, pd.scratchpad_desc()};
                      });
}

bool claims_unary(Op op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs& attrs) {
  if (!eltwise_of(op) || !float_type(in[0].dtype) || out[0].dtype != in[0].dtype) return false;
  if (!shape_is_static(in[0].shape)) return true;
  return buildable(claim_key(op, in, out, attrs), [&] { unary_kernel(op, in[0], out[0]); });
}

HostKernel make_unary(const ir::Node& n, const ir::Graph& g) { return unary_kernel(n.op, g.type(n.inputs[0]), g.type(n.outputs[0])); }

// a OP b with b (oneDNN's src1) the one broadcast. When a is the broadcast one: the mirrored op
// on (b, a) (a < b as b > a), a − b as −(b − a) (a post-op; negation is exact), and otherwise
// (a / b, or both broadcast) a read through a zero-stride view with the output's dims.
HostKernel binary_kernel(Op op, const std::vector<ir::Type>& in, const ir::Type& out) {
  std::vector<int64_t> os = shape_values(out.shape);
  std::vector<std::vector<int64_t>> shapes = {shape_values(in[0].shape), shape_values(in[1].shape)};
  BroadcastLayout lay(os, shapes);
  int first = 0;
  bool negate = false, view = false;
  if (!lay.full(0)) {
    auto mirror = swapped(op);
    if (lay.full(1) && mirror) {
      op = *mirror;
      first = 1;
    } else if (lay.full(1) && op == Op::sub) {
      first = 1;
      negate = true;
    } else {
      view = true;
    }
  }
  dnnl::algorithm alg = *binary_of(op);
  DType dt = in[0].dtype, dout = out.dtype;
  size_t e = dtype_size(dt);
  size_t a_in = static_cast<size_t>(first), b_in = static_cast<size_t>(1 - first);
  std::vector<Arg> args = {{DNNL_ARG_SRC_0, first, lay.operand_row_bytes(a_in, e)},
                           {DNNL_ARG_SRC_1, 1 - first, lay.operand_row_bytes(b_in, e)},
                           {DNNL_ARG_DST, output(0), lay.out_row_bytes(dtype_size(dout))}};
  return split_kernel(lay.rows(), lay.row_elems(), args, [=](int64_t rows) {
    dnnl::memory::desc a = view ? strided(lay.out_dims(rows), dt, lay.operand_view_strides(a_in, rows)) : dense(lay.operand_dims(a_in, rows), dt);
    dnnl::memory::desc b = dense(lay.operand_dims(b_in, rows), dt);
    dnnl::memory::desc c = dense(lay.out_dims(rows), dout);
    dnnl::primitive_attr attr = user_scratchpad();
    if (negate) {
      dnnl::post_ops po;
      po.append_eltwise(1.0f, dnnl::algorithm::eltwise_linear, -1.0f, 0.0f);
      attr.set_post_ops(po);
    }
    dnnl::binary::primitive_desc pd(dnnl::binary::desc(alg, a, b, c), attr, cpu::onednn_engine());
    return Prim{dnnl::binary(pd), {a, b, c}, pd.scratchpad_desc()};
  });
}

bool claims_binary(Op op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs& attrs) {
  DType d = in[0].dtype;
  if (!binary_of(op) || in[1].dtype != d) return false;
  // oneDNN computes in f32 and saturates when it stores: exact for float types, and for 8-bit
  // integers only where nothing can overflow or round (max, min, comparisons) — RLX's integer
  // arithmetic wraps and divides toward zero, and i32 does not fit f32's 24 bits.
  bool exact_ints = op == Op::max || op == Op::min || is_comparison(op);
  if (!(d == DType::f32 || d == DType::bf16 || (exact_ints && (d == DType::i8 || d == DType::u8)))) return false;
  if (out[0].dtype != (is_comparison(op) ? DType::boolean : d)) return false;
  if (!shape_is_static(in[0].shape) || !shape_is_static(in[1].shape)) return true;
  return buildable(claim_key(op, in, out, attrs), [&] { binary_kernel(op, in, out[0]); });
}

HostKernel make_binary(const ir::Node& n, const ir::Graph& g) {
  return binary_kernel(n.op, {g.type(n.inputs[0]), g.type(n.inputs[1])}, g.type(n.outputs[0]));
}

}  // namespace

void register_eltwise(KernelTable& t) {
  for (int i = 0; i < ir::kNumOps; ++i) {
    Op op = static_cast<Op>(i);
    if (eltwise_of(op)) t[static_cast<size_t>(i)] = {claims_unary, make_unary};
    if (binary_of(op)) t[static_cast<size_t>(i)] = {claims_binary, make_binary};
  }
}

}  // namespace rlx::backends::onednn
