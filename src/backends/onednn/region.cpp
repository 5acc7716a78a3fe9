// A fused elementwise region that is a chain — each step applies a function to the running value,
// or combines it with one of the region's inputs or a constant — as ONE oneDNN binary primitive:
// its own operation is the chain's head and every later step a post-op (eltwise or binary, the
// other operand broadcast). A unary head is x + 0 followed by its eltwise post-op. Regions that
// are not chains are refused, and the fusion pass shrinks them until they are (or leaves the
// ops unfused, each its own primitive).
#include <map>
#include <memory>

#include "backends/onednn/algorithms.h"
#include "backends/onednn/broadcast.h"
#include "backends/onednn/oneapi.h"
#include "ops/region.h"
#include "rlx/error.h"

namespace rlx::backends::onednn {

namespace {

using ir::Op;
using ir::ValueId;

struct Step {
  bool binary = false;
  Eltwise eltwise{dnnl::algorithm::eltwise_linear};
  dnnl::algorithm alg = dnnl::algorithm::binary_add;
  int operand = -1;  // a region input (binary steps)
};

struct Chain {
  dnnl::algorithm head = dnnl::algorithm::binary_add;
  int a = -1, b = -1;  // region inputs; b < 0: the head adds a constant zero
  float a_scale = 1;   // a enters the head scaled (oneDNN's source scale)
  std::vector<Step> post;
  DType out = DType::f32;
};

// oneDNN's jit takes broadcast operands well as the primitive's own second source and poorly as
// post-ops: a chain that starts x·α (or x) and then meets its first tensor operand m makes
// (α·x) OP m its head — the attention mask added to scaled scores is one primitive then.
Chain with_tensor_head(Chain c) {
  if (c.b >= 0) return c;
  size_t i = 0;
  float alpha = 1;
  if (i < c.post.size() && !c.post[i].binary && c.post[i].eltwise.alg == dnnl::algorithm::eltwise_linear && c.post[i].eltwise.beta == 0) {
    alpha = c.post[i].eltwise.alpha;
    ++i;
  }
  if (i >= c.post.size() || !c.post[i].binary) return c;
  c.head = c.post[i].alg;
  c.b = c.post[i].operand;
  c.a_scale = alpha;
  c.post.erase(c.post.begin(), c.post.begin() + static_cast<std::ptrdiff_t>(i + 1));
  return c;
}

// y → alpha·y + beta. oneDNN 2.6's jit runs every eltwise_linear post-op of a primitive with the
// first one's alpha and beta, so a chain holds at most one: consecutive affine steps compose.
bool affine(std::vector<Step>& post, float alpha, float beta) {
  auto is_linear = [](const Step& s) { return !s.binary && s.eltwise.alg == dnnl::algorithm::eltwise_linear; };
  if (!post.empty() && is_linear(post.back())) {
    Eltwise& last = post.back().eltwise;
    last.beta = alpha * last.beta + beta;
    last.alpha = alpha * last.alpha;
    return true;
  }
  for (const Step& s : post)
    if (is_linear(s)) return false;
  post.push_back(Step{false, Eltwise{dnnl::algorithm::eltwise_linear, alpha, beta}});
  return true;
}

// The chain, or nullopt. `full[i]`: region input i has the output's shape (no broadcasting).
std::optional<Chain> parse_chain(const ir::Graph& body, const std::vector<bool>& full) {
  Chain c;
  std::map<ValueId, int> input_of;
  for (size_t i = 0; i < body.inputs().size(); ++i) input_of[body.inputs()[i]] = static_cast<int>(i);
  std::map<ValueId, float> scalars;
  ValueId cur = -1;
  int n = body.num_nodes();
  bool ended = false;  // a cast or comparison ends the chain
  for (int i = 0; i < n; ++i) {
    const ir::Node& node = body.node(i);
    if (node.op == Op::constant) {
      if (!body.type(node.outputs[0]).shape.empty() || body.type(node.outputs[0]).dtype != DType::f32) return std::nullopt;
      scalars[node.outputs[0]] = static_cast<float>(node.attrs.tensor("value").at_f64(0));
      continue;
    }
    if (ended) return std::nullopt;
    for (ValueId v : node.inputs) {
      bool known = v == cur || input_of.count(v) || scalars.count(v);
      if (!known || (input_of.count(v) && body.type(v).dtype != DType::f32)) return std::nullopt;
    }
    if (cur < 0) {
      // the head: a function of one full input, or two inputs combined
      if (auto e = eltwise_of(node.op); e && input_of.count(node.inputs[0]) && full[static_cast<size_t>(input_of[node.inputs[0]])]) {
        c.a = input_of[node.inputs[0]];
        c.post.push_back(Step{false, *e});
      } else if (auto alg = binary_of(node.op); alg && node.inputs.size() == 2 && input_of.count(node.inputs[0]) && input_of.count(node.inputs[1])) {
        int x = input_of[node.inputs[0]], y = input_of[node.inputs[1]];
        Op op = node.op;
        if (!full[static_cast<size_t>(x)]) {
          auto mirror = swapped(op);
          if (!mirror || !full[static_cast<size_t>(y)]) return std::nullopt;
          std::swap(x, y);
          op = *mirror;
        }
        c.head = *binary_of(op);
        c.a = x;
        c.b = y;
      } else if (node.inputs.size() == 2 && (scalars.count(node.inputs[0]) || scalars.count(node.inputs[1]))) {
        bool first = scalars.count(node.inputs[1]) > 0;
        ValueId x = first ? node.inputs[0] : node.inputs[1];
        if (!input_of.count(x) || !full[static_cast<size_t>(input_of[x])]) return std::nullopt;
        c.a = input_of[x];
        cur = x;  // then the scalar step below applies to it
        --i;
        continue;
      } else {
        return std::nullopt;
      }
      cur = node.outputs[0];
      if (is_comparison(node.op)) {
        c.out = DType::boolean;
        ended = true;
      }
      continue;
    }
    if (node.op == Op::cast) {
      if (node.inputs[0] != cur || body.type(node.outputs[0]).dtype != DType::bf16) return std::nullopt;
      c.out = DType::bf16;
      cur = node.outputs[0];
      ended = true;
      continue;
    }
    if (auto e = eltwise_of(node.op); e && node.inputs.size() == 1 && node.inputs[0] == cur) {
      if (e->alg == dnnl::algorithm::eltwise_linear) {
        if (!affine(c.post, e->alpha, e->beta)) return std::nullopt;
      } else {
        c.post.push_back(Step{false, *e});
      }
      cur = node.outputs[0];
      continue;
    }
    auto alg = binary_of(node.op);
    if (!alg || node.inputs.size() != 2) return std::nullopt;
    bool first = node.inputs[0] == cur, second = node.inputs[1] == cur;
    if (first == second) return std::nullopt;
    ValueId other = first ? node.inputs[1] : node.inputs[0];
    if (auto it = scalars.find(other); it != scalars.end() && !is_comparison(node.op)) {
      float k = it->second;
      bool ok;
      if (node.op == Op::add) ok = affine(c.post, 1, k);
      else if (node.op == Op::mul) ok = affine(c.post, k, 0);
      else if (node.op == Op::sub) ok = first ? affine(c.post, 1, -k) : affine(c.post, -1, k);
      else if (node.op == Op::div && first && k != 0) ok = affine(c.post, 1.0f / k, 0);
      else if (node.op == Op::max && k == 0) {
        c.post.push_back(Step{false, Eltwise{dnnl::algorithm::eltwise_relu}});
        ok = true;
      } else {
        return std::nullopt;
      }
      if (!ok) return std::nullopt;
      cur = node.outputs[0];
      continue;
    }
    if (!input_of.count(other)) return std::nullopt;
    Op op = node.op;
    if (!first) {
      auto mirror = swapped(op);
      if (!mirror) return std::nullopt;
      op = *mirror;
    }
    c.post.push_back(Step{true, Eltwise{dnnl::algorithm::eltwise_linear}, *binary_of(op), input_of[other]});
    cur = node.outputs[0];
    if (is_comparison(op)) {
      c.out = DType::boolean;
      ended = true;
    }
  }
  if (cur < 0 || body.outputs().size() != 1 || body.outputs()[0] != cur) return std::nullopt;
  return c;
}

const float kZero = 0.0f;

// `any_impl`: take whatever oneDNN has, its reference loop included; `one_row`: built for one row
// at a time (see split_kernel).
HostKernel chain_kernel(const Chain& c, const std::vector<ir::Type>& in, const ir::Type& out, bool any_impl, bool one_row = false) {
  std::vector<std::vector<int64_t>> shapes;
  for (const ir::Type& t : in) shapes.push_back(shape_values(t.shape));
  std::vector<int64_t> os = shape_values(out.shape);
  BroadcastLayout lay(os, shapes);
  std::vector<Arg> args = {{DNNL_ARG_SRC_0, c.a, lay.operand_row_bytes(static_cast<size_t>(c.a), 4)}};
  if (c.b >= 0) args.push_back({DNNL_ARG_SRC_1, c.b, lay.operand_row_bytes(static_cast<size_t>(c.b), 4)});
  else args.push_back({DNNL_ARG_SRC_1, 0, 0, 0, &kZero});
  args.push_back({DNNL_ARG_DST, output(0), lay.out_row_bytes(dtype_size(c.out))});
  for (size_t i = 0; i < c.post.size(); ++i)
    if (c.post[i].binary)
      args.push_back({DNNL_ARG_ATTR_MULTIPLE_POST_OP(static_cast<int>(i)) | DNNL_ARG_SRC_1, c.post[i].operand,
                      lay.operand_row_bytes(static_cast<size_t>(c.post[i].operand), 4)});
  return split_kernel(lay.rows(), lay.row_elems(), args, [=](int64_t rows) {
    Prim p;
    dnnl::memory::desc a = dense(lay.operand_dims(static_cast<size_t>(c.a), rows), DType::f32);
    dnnl::memory::desc b = c.b >= 0 ? dense(lay.operand_dims(static_cast<size_t>(c.b), rows), DType::f32)
                                    : dense(std::vector<int64_t>(lay.out_dims(rows).size(), 1), DType::f32);
    dnnl::memory::desc d = dense(lay.out_dims(rows), c.out);
    p.descs = {a, b, d};
    dnnl::post_ops po;
    for (const Step& s : c.post) {
      if (!s.binary) {
        po.append_eltwise(1.0f, s.eltwise.alg, s.eltwise.alpha, s.eltwise.beta);
        continue;
      }
      dnnl::memory::desc src1 = dense(lay.operand_dims(static_cast<size_t>(s.operand), rows), DType::f32);
      po.append_binary(s.alg, src1);
      p.descs.push_back(src1);
    }
    dnnl::primitive_attr attr = user_scratchpad();
    attr.set_post_ops(po);
    if (c.a_scale != 1) attr.set_scales(DNNL_ARG_SRC_0, 0, {c.a_scale});
    dnnl::binary::primitive_desc pd(dnnl::binary::desc(c.head, a, b, d), attr, cpu::onednn_engine());
    // judged with static shapes, a region has a fallback (smaller regions, or its ops one by
    // one): never oneDNN's reference loop then
    if (!any_impl && std::string(pd.impl_info_str()).rfind("ref", 0) == 0) throw dnnl::error(dnnl_unimplemented, "only oneDNN's reference binary");
    p.prim = dnnl::binary(pd);
    p.scratch = pd.scratchpad_desc();
    return p;
  }, one_row);
}

// The fastest form oneDNN builds: shares of rows, else a row at a time, else (only where the
// caller allows it) its reference loop.
HostKernel best_chain_kernel(const Chain& c, const std::vector<ir::Type>& in, const ir::Type& out, bool any_impl) {
  Chain t = with_tensor_head(c);
  if (t.b != c.b) {  // the head's first source is full-shaped in every chain (parse_chain)
    try {
      return chain_kernel(t, in, out, false);
    } catch (const dnnl::error&) {
    }
  }
  try {
    return chain_kernel(c, in, out, false);
  } catch (const dnnl::error&) {
  }
  try {
    return chain_kernel(c, in, out, false, true);
  } catch (const dnnl::error& e) {
    if (!any_impl) throw;
  }
  return chain_kernel(c, in, out, true);
}

std::vector<bool> full_inputs(const std::vector<ir::Type>& in, const ir::Type& out) {
  std::vector<bool> full;
  for (const ir::Type& t : in) full.push_back(t.shape == out.shape);
  return full;
}

bool claims_region(Op op, const std::vector<ir::Type>& in, const std::vector<ir::Type>& out, const ir::Attrs& attrs) {
  if (out.size() != 1) return false;
  std::shared_ptr<const ir::Graph> body;
  try {
    body = ops::region_body(attrs.s("body"));
  } catch (const Error&) {
    return false;
  }
  auto chain = parse_chain(*body, full_inputs(in, out[0]));
  if (!chain || chain->out != out[0].dtype) return false;
  // Fusion runs on symbolic shapes: a chain is claimed by its form, and the kernel built for the
  // static shapes takes oneDNN's reference loop where its jit has no broadcast pattern for them.
  for (const ir::Type& t : in)
    if (!shape_is_static(t.shape)) return true;
  if (!shape_is_static(out[0].shape)) return true;
  return buildable(claim_key(op, in, out, attrs), [&] { best_chain_kernel(*chain, in, out[0], false); });
}

HostKernel make_region(const ir::Node& n, const ir::Graph& g) {
  std::vector<ir::Type> in;
  for (ValueId v : n.inputs) in.push_back(g.type(v));
  auto chain = parse_chain(*ops::region_body(n.attrs.s("body")), full_inputs(in, g.type(n.outputs[0])));
  if (!chain) return {};
  return best_chain_kernel(*chain, in, g.type(n.outputs[0]), true);
}

}  // namespace

void register_region(KernelTable& t) { t[static_cast<size_t>(Op::elementwise_region)] = {claims_region, make_region}; }

}  // namespace rlx::backends::onednn
