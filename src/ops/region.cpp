// elementwise_region: type inference re-infers the body for the actual input types (so one
// body serves every shape), and the decomposition inlines it. fused_dot and fused_reduce: the
// same for their epilogue / prologue around the dot_general / reduce.
#include "ops/region.h"

#include <mutex>
#include <unordered_map>

#include "ir/text.h"
#include "ops/builder.h"
#include "ops/infer_util.h"
#include "ops/rules.h"

namespace rlx::ops {

std::shared_ptr<const ir::Graph> region_body(const std::string& text) {
  static std::mutex mu;
  static std::unordered_map<std::string, std::shared_ptr<const ir::Graph>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(text);
  if (it != cache.end()) return it->second;
  std::shared_ptr<const ir::Graph> g;
  try {
    g = std::make_shared<const ir::Graph>(ir::parse_graph(text, "elementwise_region body"));
  } catch (const Error& e) {
    throw Error(ErrorKind::invalid_graph, cat("mir.elementwise_region: malformed body: ", e.what()));
  }
  for (const auto& n : g->nodes())
    if (!ir::has_trait(n.op, ir::kElementwise) && n.op != Op::constant)
      throw Error(ErrorKind::invalid_graph, cat("mir.elementwise_region: body op ", ir::op_keyword(n.op), " is not elementwise"));
  if (cache.size() > 4096) cache.clear();  // bodies are few in practice; never grow without bound
  cache.emplace(text, g);
  return g;
}

namespace {

// Emits the body into `b` with the given inputs; returns the body's outputs.
std::vector<ValueId> inline_body(Builder& b, const ir::Graph& body, const std::vector<ValueId>& in) {
  if (in.size() != body.inputs().size())
    throw Error(ErrorKind::invalid_graph, cat("mir.elementwise_region: the body takes ", body.inputs().size(), " inputs, the node has ", in.size()));
  std::vector<ValueId> map(body.num_values(), ir::kNoValue);
  for (size_t i = 0; i < in.size(); ++i) {
    if (b.dtype(in[i]) != body.type(body.inputs()[i]).dtype)
      throw Error(ErrorKind::invalid_graph, cat("mir.elementwise_region: input ", i, " must be ", dtype_name(body.type(body.inputs()[i]).dtype)));
    map[static_cast<size_t>(body.inputs()[i])] = in[i];
  }
  for (const auto& n : body.nodes()) {
    std::vector<ValueId> ins;
    for (ValueId v : n.inputs) ins.push_back(map[static_cast<size_t>(v)]);
    auto outs = b.emit(n.op, ins, n.attrs);
    for (size_t k = 0; k < outs.size(); ++k) map[static_cast<size_t>(n.outputs[k])] = outs[k];
  }
  std::vector<ValueId> out;
  for (ValueId v : body.outputs()) out.push_back(map[static_cast<size_t>(v)]);
  return out;
}

std::vector<Type> infer_region(Op, const std::vector<Type>& in, const Attrs& a) {
  auto body = region_body(a.s("body"));
  ir::Graph scratch;
  std::vector<ValueId> ins;
  for (const auto& t : in) ins.push_back(scratch.add_input(t));
  Builder b(scratch);
  std::vector<Type> out;
  for (ValueId v : inline_body(b, *body, ins)) out.push_back(scratch.type(v));
  return out;
}

std::vector<ValueId> decompose_region(Builder& b, const std::vector<ValueId>& in, const Attrs& a) {
  return inline_body(b, *region_body(a.s("body")), in);
}

Attrs dot_attrs(const Attrs& a) {
  Attrs d{{"batch", a.intss("batch")}, {"contract", a.intss("contract")}};
  if (const ir::AttrValue* o = a.find("out")) d.set("out", *o);
  if (const ir::AttrValue* c = a.find("compute")) d.set("compute", *c);
  return d;
}

std::vector<ValueId> decompose_fused_dot(Builder& b, const std::vector<ValueId>& in, const Attrs& a) {
  std::vector<ValueId> ep = {b.emit1(Op::dot_general, {in[0], in[1]}, dot_attrs(a))};
  ep.insert(ep.end(), in.begin() + 2, in.end());
  return inline_body(b, *region_body(a.s("epilogue")), ep);
}

std::vector<Type> infer_fused_dot(Op, const std::vector<Type>& in, const Attrs& a) {
  ir::Graph scratch;
  std::vector<ValueId> ins;
  for (const auto& t : in) ins.push_back(scratch.add_input(t));
  Builder b(scratch);
  std::vector<Type> out;
  for (ValueId v : decompose_fused_dot(b, ins, a)) out.push_back(scratch.type(v));
  if (out.size() != 1) type_error(Op::fused_dot, cat("the epilogue must have one output, it has ", out.size()));
  return out;
}

Attrs reduce_attrs(const Attrs& a) { return Attrs{{"kind", a.s("kind")}, {"axes", a.ints("axes")}, {"keepdims", a.b("keepdims")}}; }

std::vector<ValueId> decompose_fused_reduce(Builder& b, const std::vector<ValueId>& in, const Attrs& a) {
  std::vector<ValueId> x = inline_body(b, *region_body(a.s("prologue")), in);
  if (x.size() != 1) type_error(Op::fused_reduce, cat("the prologue must have one output, it has ", x.size()));
  return {b.emit1(Op::reduce, {x[0]}, reduce_attrs(a))};
}

std::vector<Type> infer_fused_reduce(Op, const std::vector<Type>& in, const Attrs& a) {
  ir::Graph scratch;
  std::vector<ValueId> ins;
  for (const auto& t : in) ins.push_back(scratch.add_input(t));
  Builder b(scratch);
  return {scratch.type(decompose_fused_reduce(b, ins, a)[0])};
}

}  // namespace

void register_region(RuleTable& t) {
  t[static_cast<size_t>(Op::elementwise_region)] = {infer_region, decompose_region};
  t[static_cast<size_t>(Op::fused_dot)] = {infer_fused_dot, decompose_fused_dot};
  t[static_cast<size_t>(Op::fused_reduce)] = {infer_fused_reduce, decompose_fused_reduce};
}

}  // namespace rlx::ops
