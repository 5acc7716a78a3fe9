// fused_dot on the cpu: the epilogue body becomes a chain of oneDNN post-ops (eltwise and binary
// on the accumulator), so bias, activation, residual and the cast to bf16 cost no extra pass —
// and an int8 product's dequantization (its i32 sums to f32, times the weight's per-column and
// the activation's per-row scale) neither.
#include <algorithm>
#include <dnnl.hpp>
#include <map>
#include <optional>

#include "backends/cpu/kernels.h"
#include "backends/cpu/onednn_matmul.h"
#include "ops/region.h"
#include "passes/memory_plan.h"
#include "rlx/error.h"

namespace rlx::backends::cpu {

namespace {

using ir::Op;
using ir::ValueId;

std::optional<int> eltwise_alg(Op op) {
  switch (op) {
    case Op::gelu: return static_cast<int>(dnnl::algorithm::eltwise_gelu_erf);
    case Op::gelu_tanh: return static_cast<int>(dnnl::algorithm::eltwise_gelu_tanh);
    case Op::relu: return static_cast<int>(dnnl::algorithm::eltwise_relu);
    case Op::silu: return static_cast<int>(dnnl::algorithm::eltwise_swish);
    case Op::tanh: return static_cast<int>(dnnl::algorithm::eltwise_tanh);
    case Op::sigmoid: return static_cast<int>(dnnl::algorithm::eltwise_logistic);
    case Op::exp: return static_cast<int>(dnnl::algorithm::eltwise_exp);
    case Op::sqrt: return static_cast<int>(dnnl::algorithm::eltwise_sqrt);
    case Op::abs: return static_cast<int>(dnnl::algorithm::eltwise_abs);
    default: return std::nullopt;
  }
}

std::optional<int> binary_alg(Op op) {
  switch (op) {
    case Op::add: return static_cast<int>(dnnl::algorithm::binary_add);
    case Op::sub: return static_cast<int>(dnnl::algorithm::binary_sub);
    case Op::mul: return static_cast<int>(dnnl::algorithm::binary_mul);
    case Op::div: return static_cast<int>(dnnl::algorithm::binary_div);
    case Op::max: return static_cast<int>(dnnl::algorithm::binary_max);
    case Op::min: return static_cast<int>(dnnl::algorithm::binary_min);
    default: return std::nullopt;
  }
}

// y → alpha·y + beta as a post-op. oneDNN 2.6's jit runs every eltwise_linear post-op of a
// primitive with the first one's alpha and beta, so an epilogue holds at most one: consecutive
// affine steps compose into it, and a second one after another post-op (a soft-cap's
// p/cap → tanh → ·cap) is refused — the region then runs unfused. False when refused.
bool affine(Epilogue& ep, float alpha, float beta) {
  const int linear = static_cast<int>(dnnl::algorithm::eltwise_linear);
  auto is_linear = [&](const PostOp& op) { return op.kind == PostOp::Kind::eltwise && op.alg == linear; };
  if (!ep.ops.empty() && is_linear(ep.ops.back())) {
    PostOp& last = ep.ops.back();  // alpha·(a·y + b) + beta
    last.beta = alpha * last.beta + beta;
    last.alpha = alpha * last.alpha;
    return true;
  }
  if (std::any_of(ep.ops.begin(), ep.ops.end(), is_linear)) return false;
  ep.ops.push_back({PostOp::Kind::eltwise, linear, alpha, beta});
  return true;
}

// The body as a chain on the running value (the product), or nullopt when it is not one.
// Shapes come from the node (`extra` = its inputs after the two operands), not from the body:
// bodies are shape-polymorphic and keep the symbols they were fused with.
std::optional<Epilogue> parse_epilogue(const ir::Graph& body, const Shape& out_shape, const std::vector<Shape>& extra) {
  Epilogue ep;
  ValueId cur = body.inputs()[0];
  std::map<ValueId, float> scalars;
  int n = body.num_nodes();
  for (int i = 0; i < n; ++i) {
    const ir::Node& node = body.node(i);
    if (node.op == Op::constant) {
      if (!body.type(node.outputs[0]).shape.empty()) return std::nullopt;
      scalars[node.outputs[0]] = static_cast<float>(node.attrs.tensor("value").at_f64(0));
      continue;
    }
    if (node.op == Op::cast && node.inputs[0] == cur && cur == body.inputs()[0] && body.type(cur).dtype == DType::i32 &&
        body.type(node.outputs[0]).dtype == DType::f32) {
      ep.from_int = true;  // oneDNN converts the i32 sums to f32 before the post-ops
      cur = node.outputs[0];
      continue;
    }
    if (node.op == Op::cast) {
      if (node.inputs[0] != cur || body.type(node.outputs[0]).dtype != DType::bf16 || i != n - 1) return std::nullopt;
      ep.out = DType::bf16;
      cur = node.outputs[0];
      continue;
    }
    if (body.type(node.outputs[0]).dtype != DType::f32) return std::nullopt;
    if (auto alg = eltwise_alg(node.op); alg && node.inputs.size() == 1 && node.inputs[0] == cur) {
      PostOp op{PostOp::Kind::eltwise, *alg, node.op == Op::silu ? 1.0f : 0.0f, 0.0f};
      ep.ops.push_back(op);
      cur = node.outputs[0];
      continue;
    }
    if (node.op == Op::neg && node.inputs[0] == cur) {
      if (!affine(ep, -1.0f, 0.0f)) return std::nullopt;
      cur = node.outputs[0];
      continue;
    }
    auto alg = binary_alg(node.op);
    if (!alg || node.inputs.size() != 2) return std::nullopt;
    bool first = node.inputs[0] == cur, second = node.inputs[1] == cur;
    if (first == second) return std::nullopt;
    ValueId other = first ? node.inputs[1] : node.inputs[0];
    bool commutative = node.op == Op::add || node.op == Op::mul || node.op == Op::max || node.op == Op::min;
    if (auto it = scalars.find(other); it != scalars.end()) {
      float c = it->second;
      bool ok = true;
      if (node.op == Op::add) ok = affine(ep, 1, c);
      else if (node.op == Op::mul) ok = affine(ep, c, 0);
      else if (node.op == Op::sub) ok = first ? affine(ep, 1, -c) : affine(ep, -1, c);
      else if (node.op == Op::div && first && c != 0) ok = affine(ep, 1.0f / c, 0);
      else if (node.op == Op::max && c == 0) ep.ops.push_back({PostOp::Kind::eltwise, static_cast<int>(dnnl::algorithm::eltwise_relu), 0, 0});
      else return std::nullopt;
      if (!ok) return std::nullopt;
      cur = node.outputs[0];
      continue;
    }
    if (!first && !commutative) return std::nullopt;
    // an extra input of the node: broadcast per column, per element, or a scalar tensor
    int index = -1;
    for (size_t k = 1; k < body.inputs().size(); ++k)
      if (body.inputs()[k] == other) index = static_cast<int>(k) - 1;
    if (index < 0 || static_cast<size_t>(index) >= extra.size() || body.type(other).dtype != DType::f32) return std::nullopt;
    const Shape& os = extra[static_cast<size_t>(index)];
    PostOp op{PostOp::Kind::binary, *alg, 0, 0, index};
    bool leading_ones = true, leading_rows = os.size() == out_shape.size();
    for (size_t d = 0; d + 1 < os.size(); ++d) {
      leading_ones = leading_ones && os[d] == Dim(1);
      leading_rows = leading_rows && os[d] == out_shape[d];
    }
    if (os == out_shape) op.src1 = PostOp::Src1::full;
    else if (leading_ones && !os.empty() && os.back() == out_shape.back()) op.src1 = PostOp::Src1::row;
    else if (leading_ones && (os.empty() || os.back() == Dim(1))) op.src1 = PostOp::Src1::scalar;
    else if (leading_rows && !os.empty() && os.back() == Dim(1)) op.src1 = PostOp::Src1::column;  // one value per row (a row's scale)
    else return std::nullopt;
    ep.ops.push_back(op);
    cur = node.outputs[0];
  }
  if (body.outputs().size() != 1 || body.outputs()[0] != cur) return std::nullopt;
  if (body.type(body.inputs()[0]).dtype == DType::i32 && !ep.from_int) return std::nullopt;
  return ep;
}

}  // namespace

static std::optional<MatmulShape> fused_shape(const std::vector<ir::Type>& in, const ir::Attrs& attrs) {
  if (!shape_is_static(in[0].shape) || !shape_is_static(in[1].shape)) return MatmulShape{};  // layout only
  return onednn_shape(shape_values(in[0].shape), shape_values(in[1].shape), attrs);
}

bool claims_onednn_fused_dot(Op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs& attrs) {
  if (!onednn_available()) return false;
  DType a = in[0].dtype;
  // i8 · i8 summed in i32 (VNNI), the epilogue from its conversion to f32 on
  const bool int8 = (a == DType::i8 || a == DType::u8) && in[1].dtype == DType::i8;
  if (int8) {
    if (!attrs.has("out") || attrs.dtype("out") != DType::i32 || attrs.has("compute")) return false;
  } else {
    if (a != in[1].dtype || (a != DType::f32 && a != DType::bf16)) return false;
    if (const ir::AttrValue* o = attrs.find("out"); o && std::get<DType>(*o) != DType::f32) return false;
    if (a == DType::f32 && attrs.has("out")) return false;
    if (const ir::AttrValue* c = attrs.find("compute"); c && !(std::get<DType>(*c) == a || (a == DType::f32 && std::get<DType>(*c) == DType::bf16)))
      return false;
  }
  if (!attrs.intss("batch")[0].empty()) return false;  // plain 2-D products only
  auto shape = fused_shape(in, attrs);
  if (!shape) return false;
  std::shared_ptr<const ir::Graph> body;
  try {
    body = ops::region_body(attrs.s("epilogue"));
  } catch (const Error&) {
    return false;
  }
  std::vector<Shape> extra;
  for (size_t i = 2; i < in.size(); ++i) extra.push_back(in[i].shape);
  auto ep = parse_epilogue(*body, out[0].shape, extra);
  if (!ep) return false;
  if (shape->M == 0) return true;  // symbolic dims: the layout is all that can be judged yet
  // static shapes: claim only what this CPU's oneDNN can build (the unclaimed product and its
  // epilogue then run as separate kernels)
  MatmulShape s = *shape;
  s.a_dtype = in[0].dtype;
  s.b_dtype = in[1].dtype;
  s.c_dtype = ep->out;
  s.compute = attrs.has("compute") ? attrs.dtype("compute") : s.a_dtype;
  return onednn_matmul_buildable(s, *ep);
}

HostKernel make_onednn_fused_dot(const ir::Node& node, const ir::Graph& lir) {
  std::vector<ir::Type> in;
  for (ValueId v : node.inputs) in.push_back(lir.type(v));
  auto shape = onednn_shape(shape_values(in[0].shape), shape_values(in[1].shape), node.attrs);
  std::vector<Shape> extra;
  for (size_t i = 2; i < in.size(); ++i) extra.push_back(in[i].shape);
  auto ep = parse_epilogue(*ops::region_body(node.attrs.s("epilogue")), lir.type(node.outputs[0]).shape, extra);
  if (!shape || !ep) return {};
  MatmulShape s = *shape;
  s.a_dtype = in[0].dtype;
  s.b_dtype = in[1].dtype;
  s.c_dtype = ep->out;
  s.compute = node.attrs.has("compute") ? node.attrs.dtype("compute") : s.a_dtype;
  const void* const_b = passes::constant_bytes(lir, node.inputs[1]);
  return make_onednn_matmul(s, const_b, *ep);
}

void register_fused_dot(KernelTable& t) { t[static_cast<size_t>(Op::fused_dot)] = {claims_onednn_fused_dot, make_onednn_fused_dot}; }

}  // namespace rlx::backends::cpu
