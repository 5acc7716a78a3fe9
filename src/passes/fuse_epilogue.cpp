#include "passes/fuse_epilogue.h"

#include "ir/text.h"
#include "ops/builder.h"
#include "ops/region.h"
#include "ops/rules.h"
#include "passes/rewrite.h"
#include "passes/simplify.h"

namespace rlx::passes {

namespace {

// The epilogue body for consumer `n` of the product (input `k` of n): input 0 is the product,
// then n's other inputs in order. Returns "" when n cannot be an epilogue. `cast`: a conversion
// between the product and n (an integer product's sums to float), the body's first node.
std::string epilogue_body(const ir::Graph& g, const ir::Node& n, size_t k, std::vector<ValueId>& extras, const ir::Node* cast = nullptr) {
  ir::Graph body;
  body.name = "epilogue";
  std::vector<ValueId> args(n.inputs.size(), ir::kNoValue);
  ValueId product = body.add_input(g.type(cast ? cast->inputs[0] : n.inputs[k]));
  args[k] = cast ? ops::Builder(body).emit1(Op::cast, {product}, cast->attrs) : product;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (i == k) continue;
    if (n.inputs[i] == n.inputs[k]) return "";  // the product read twice (x·x): keep it simple
    args[i] = body.add_input(g.type(n.inputs[i]));
    extras.push_back(n.inputs[i]);
  }
  ops::Builder b(body);
  std::vector<ValueId> outs;
  if (n.op == Op::elementwise_region) {
    auto inner = ops::region_body(n.attrs.s("body"));
    if (inner->outputs().size() != 1) return "";
    std::vector<ValueId> map(inner->num_values(), ir::kNoValue);
    for (size_t i = 0; i < args.size(); ++i) map[static_cast<size_t>(inner->inputs()[i])] = args[i];
    for (const auto& m : inner->nodes()) {
      std::vector<ValueId> in;
      for (ValueId v : m.inputs) in.push_back(map[static_cast<size_t>(v)]);
      auto o = b.emit(m.op, in, m.attrs);
      for (size_t j = 0; j < o.size(); ++j) map[static_cast<size_t>(m.outputs[j])] = o[j];
    }
    outs.push_back(map[static_cast<size_t>(inner->outputs()[0])]);
  } else {
    outs = b.emit(n.op, args, n.attrs);
  }
  body.set_outputs(outs);
  return ir::print_graph(body);
}

}  // namespace

ir::Graph fuse_matmul_epilogues(const ir::Graph& g, const KernelClaims& device) {
  std::vector<int> uses = g.use_counts();
  int n_nodes = g.num_nodes();
  // consumer node → (dot node, input index of the product)
  std::vector<std::pair<int, size_t>> plan(static_cast<size_t>(n_nodes), {-1, 0});
  std::vector<bool> absorbed(static_cast<size_t>(n_nodes), false);
  std::vector<std::string> bodies(static_cast<size_t>(n_nodes));
  std::vector<std::vector<ValueId>> extras(static_cast<size_t>(n_nodes));
  auto try_consumer = [&](int i) {
    const ir::Node& n = g.node(i);
    if (absorbed[static_cast<size_t>(i)]) return;
    bool elementwise = n.op == Op::elementwise_region || (ir::has_trait(n.op, ir::kElementwise) && n.op != Op::constant);
    if (!elementwise || n.outputs.size() != 1) return;
    if (n.op == Op::add && n.inputs[0] != n.inputs[1]) {
      // add(dequant_matmul(x, W), r) with r of the sum's type: the addend input (a decode
      // step's residual adds, stored with the product instead of a pass of their own)
      for (size_t k = 0; k < 2; ++k) {
        const ir::Node* d = g.producer(n.inputs[k]);
        ValueId r = n.inputs[1 - k];
        if (!d || d->op != Op::dequant_matmul || d->inputs.size() != 2 || uses[static_cast<size_t>(n.inputs[k])] != 1) continue;
        int di = g.value(n.inputs[k]).node;
        if (absorbed[static_cast<size_t>(di)] || g.type(r) != g.type(n.outputs[0]) || g.type(n.inputs[k]) != g.type(r)) continue;
        if (!device.claims(Op::dequant_matmul, {g.type(d->inputs[0]), g.type(d->inputs[1]), g.type(r)}, {g.type(r)}, d->attrs)) continue;
        plan[static_cast<size_t>(i)] = {di, k};
        absorbed[static_cast<size_t>(di)] = true;
        extras[static_cast<size_t>(i)] = {r};
        break;
      }
      if (plan[static_cast<size_t>(i)].first >= 0) return;
    }
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const ir::Node* d = g.producer(n.inputs[k]);
      if (g.type(n.inputs[k]).shape != g.type(n.outputs[0]).shape) continue;
      // an int8 product reaches its epilogue through the cast of its i32 sums to f32
      const ir::Node* cast = nullptr;
      int ci = -1;
      if (d && d->op == Op::cast && n.op != Op::cast && uses[static_cast<size_t>(n.inputs[k])] == 1 && is_float(g.type(n.inputs[k]).dtype)) {
        const ir::Node* p = g.producer(d->inputs[0]);
        if (p && p->op == Op::dot_general && g.type(d->inputs[0]).dtype == DType::i32 && uses[static_cast<size_t>(d->inputs[0])] == 1) {
          cast = d;
          ci = g.value(n.inputs[k]).node;
          d = p;
        }
      }
      if (!d || d->op != Op::dot_general) continue;
      ValueId product = cast ? cast->inputs[0] : n.inputs[k];
      if (uses[static_cast<size_t>(product)] != 1) continue;
      int di = g.value(product).node;
      if (absorbed[static_cast<size_t>(di)] || (ci >= 0 && absorbed[static_cast<size_t>(ci)])) continue;
      std::vector<ValueId> ex;
      std::string body = epilogue_body(g, n, k, ex, cast);
      if (body.empty()) continue;
      Attrs a{{"batch", d->attrs.intss("batch")}, {"contract", d->attrs.intss("contract")}, {"epilogue", body}};
      if (const ir::AttrValue* o = d->attrs.find("out")) a.set("out", *o);
      if (const ir::AttrValue* c = d->attrs.find("compute")) a.set("compute", *c);
      std::vector<Type> in_types = {g.type(d->inputs[0]), g.type(d->inputs[1])};
      for (ValueId v : ex) in_types.push_back(g.type(v));
      if (!device.claims(Op::fused_dot, in_types, {g.type(n.outputs[0])}, a)) continue;
      plan[static_cast<size_t>(i)] = {di, k};
      absorbed[static_cast<size_t>(di)] = true;
      if (ci >= 0) absorbed[static_cast<size_t>(ci)] = true;
      bodies[static_cast<size_t>(i)] = std::move(body);
      extras[static_cast<size_t>(i)] = std::move(ex);
      break;
    }
  };
  // Casts last: an integer product's cast to f32 goes with the epilogue that reads it when one
  // can take both, and is the whole epilogue only otherwise.
  for (int i = 0; i < n_nodes; ++i)
    if (g.node(i).op != Op::cast) try_consumer(i);
  for (int i = 0; i < n_nodes; ++i)
    if (g.node(i).op == Op::cast) try_consumer(i);
  bool any = false;
  for (bool a : absorbed) any = any || a;
  if (!any) return g;

  return copy_rewriting(g, "fuse-epilogue", [&](ops::Builder& b, const ir::Node& n, int i, std::vector<ValueId>& map) {
    if (absorbed[static_cast<size_t>(i)]) return true;  // emitted with its epilogue
    if (plan[static_cast<size_t>(i)].first < 0) return false;
    const ir::Node& d = g.node(plan[static_cast<size_t>(i)].first);
    std::vector<ValueId> in = mapped({d.inputs[0], d.inputs[1]}, map);
    for (ValueId v : mapped(extras[static_cast<size_t>(i)], map)) in.push_back(v);
    Op op = Op::dequant_matmul;
    Attrs attrs = d.attrs;
    if (d.op != Op::dequant_matmul) {
      op = Op::fused_dot;
      attrs = Attrs{{"batch", d.attrs.intss("batch")}, {"contract", d.attrs.intss("contract")}, {"epilogue", bodies[static_cast<size_t>(i)]}};
      if (const ir::AttrValue* o = d.attrs.find("out")) attrs.set("out", *o);
      if (const ir::AttrValue* c = d.attrs.find("compute")) attrs.set("compute", *c);
    }
    emit_in_place_of(b, n, op, in, attrs, ir::Path::native, map, &d);
    return true;
  });
}

}  // namespace rlx::passes
