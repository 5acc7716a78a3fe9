// Fused elementwise regions (mir.elementwise_region): the body graph printed as straight-line
// GLSL — each node scalar.h's expression through the GLSL dialect, its result rounded to the
// node's dtype (f16/bf16 round to nearest even, bool to 0/1) as the unfused nodes would store
// it — over one pass of the iteration space, every input addressed through its broadcast
// strides. The same printing is the prologue of fused_reduce (reduce.cpp).
#include "backends/vulkan/context.h"
#include "backends/vulkan/kernels.h"
#include "backends/vulkan/shader.h"
#include "codegen/dialect_glsl.h"
#include "codegen/index_map.h"
#include "codegen/scalar.h"
#include "ops/region.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::backends::vulkan {

namespace {

constexpr uint32_t kThreads = 256;

bool region_dtype(DType d) { return d == DType::f32 || d == DType::f16 || d == DType::bf16 || d == DType::boolean; }

}  // namespace

std::shared_ptr<const ir::Graph> printable_body(const std::string& text, const std::vector<ir::Type>& in) {
  std::shared_ptr<const ir::Graph> body;
  try {
    body = ops::region_body(text);
  } catch (const Error&) {
    return nullptr;
  }
  if (body->inputs().size() != in.size() || body->inputs().empty() || body->outputs().empty()) return nullptr;
  for (size_t k = 0; k < in.size(); ++k)
    if (in[k].dtype != body->type(body->inputs()[k]).dtype) return nullptr;
  for (size_t v = 0; v < body->num_values(); ++v)
    if (!region_dtype(body->type(static_cast<ir::ValueId>(v)).dtype)) return nullptr;
  for (int i = 0; i < body->num_nodes(); ++i) {
    const ir::Node& n = body->node(i);
    if (n.outputs.size() != 1) return nullptr;
    if (n.op == ir::Op::constant) {
      if (n.attrs.tensor("value").numel() != 1) return nullptr;
      continue;
    }
    if (n.op != ir::Op::cast && !(codegen::is_elementwise(n.op) && codegen::defines(codegen::ValueClass::floating, n.op))) return nullptr;
  }
  return body;
}

std::string body_code(const ir::Graph& body, const std::vector<std::string>& inputs) {
  auto reg = [](ir::ValueId v) { return cat("r", v); };
  std::string s;
  for (size_t k = 0; k < inputs.size(); ++k) s += cat("  float ", reg(body.inputs()[k]), " = ", inputs[k], ";\n");
  for (int i = 0; i < body.num_nodes(); ++i) {
    const ir::Node& n = body.node(i);
    const ir::ValueId out = n.outputs[0];
    const DType dt = body.type(out).dtype;
    std::string e;
    if (n.op == ir::Op::constant) {
      // the constant as its dtype holds it, spelled by its bits (exact, NaN and ±inf too)
      e = f32_bits(static_cast<float>(n.attrs.tensor("value").at_f64(0)));
    } else if (n.op == ir::Op::cast) {
      e = reg(n.inputs[0]);
    } else {
      std::vector<std::string> ops;
      for (ir::ValueId v : n.inputs) ops.push_back(reg(v));
      e = codegen::print_scalar(codegen::glsl(), codegen::ValueClass::floating, n.op, ops);
    }
    s += cat("  float ", reg(out), " = ", round_to(dt, e), ";\n");
  }
  return s;
}

bool claims_region(ir::Op op, const NodeTypes& t, const ir::Attrs& a, const Features& f) {
  if (op != ir::Op::elementwise_region || t.out.empty()) return false;
  // every input and output is a storage buffer of the kernel: a descriptor set holds 16
  // (program.cpp; OpenGL's minimum too) and the HLSL printer binds one more for the launch's
  // words — the fusion pass shrinks a region this refuses
  if (t.in.size() + t.out.size() > 15) return false;
  const ir::Type& o = t.out[0];
  if (!indexable(o)) return false;
  for (const ir::Type& y : t.out)
    if (!storable(y.dtype, f) || y.shape != o.shape) return false;
  for (const ir::Type& x : t.in)
    if (!indexable(x) || !storable(x.dtype, f) || !broadcasts_to(x.shape, o.shape)) return false;
  auto body = printable_body(a.s("body"), t.in);
  return body && body->outputs().size() == t.out.size();
}

std::vector<Launch> region_launches(const ir::Node& n, const NodeTypes& t) {
  auto body = printable_body(n.attrs.s("body"), t.in);
  if (!body) throw Error(ErrorKind::internal, "vulkan: a region body it claimed does not print");
  Shader sh;
  std::vector<std::string> loads;
  Launch l;
  for (size_t k = 0; k < t.in.size(); ++k) {
    sh.buffer(cat("x", k), t.in[k].dtype, Access::read);
    loads.push_back(cat("x", k, "_f(x", k, "_at)"));
    l.operands.push_back({Operand::Kind::input, static_cast<int>(k)});
  }
  for (size_t o = 0; o < t.out.size(); ++o) {
    sh.buffer(cat("y", o), t.out[o].dtype, Access::write);
    l.operands.push_back({Operand::Kind::output, static_cast<int>(o)});
  }
  sh.push("n");
  sh.local_size(kThreads);
  std::string main = "void main() {\n  uint i = rlx_flat();\n  if (i >= p.n) return;\n" + broadcast_index_code(t.in, t.out[0]) + body_code(*body, loads);
  for (size_t o = 0; o < t.out.size(); ++o) main += cat("  y", o, "_wf(i, r", body->outputs()[o], ");\n");
  const int64_t count = shape_numel(t.out[0].shape).value();
  l.name = "region";
  l.source = sh.source(main + "}\n");
  l.words = {static_cast<uint32_t>(count)};
  l.push_bytes = sh.push_bytes();
  l.groups = grid_for(count, kThreads);
  return {l};
}

}  // namespace rlx::backends::vulkan
