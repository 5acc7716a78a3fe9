// cumsum along an axis: one invocation per line, summing in the reference's order (f32 for
// floats, wrapping 64-bit for integers). And sort and topk along an axis by rank: one invocation per element counts the elements of its
// line that the reference's stable order puts before it (NaN above every number, equals by
// index) and writes itself at that rank — all of sort, or the ranks below k for topk. O(n²)
// comparisons a line, all in parallel: claimed for lines of at most 4096 (MoE routers, small
// sorts), not for sampling over a vocabulary.
#include "backends/vulkan/context.h"
#include "backends/vulkan/kernels.h"
#include "backends/vulkan/shader.h"
#include "codegen/index_map.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::backends::vulkan {

namespace {
constexpr int64_t kMaxLine = 4096;
}

bool claims_sort(ir::Op op, const NodeTypes& t, const ir::Attrs& a, const Features& f) {
  if ((op != ir::Op::sort && op != ir::Op::topk) || t.in.size() != 1 || t.out.size() != 2) return false;
  const ir::Type& x = t.in[0];
  if (x.dtype == DType::boolean || !indexable(x) || !storable(x.dtype, f) || !storable(t.out[1].dtype, f)) return false;
  const int64_t axis = codegen::normalize_axis(a.i("axis"), x.shape.size());
  if (axis < 0 || axis >= static_cast<int64_t>(x.shape.size())) return false;
  const Dim& n = x.shape[static_cast<size_t>(axis)];
  return n.is_static() && n.value() <= kMaxLine;
}

std::vector<Launch> sort_launches(const ir::Node& node, const NodeTypes& t) {
  const std::vector<int64_t> xs = dims(t.in[0]);
  const int64_t axis = codegen::normalize_axis(node.attrs.i("axis"), xs.size());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= xs[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(axis) + 1; d < xs.size(); ++d) inner *= xs[d];
  const int64_t n = xs[static_cast<size_t>(axis)];
  const bool topk = node.op == ir::Op::topk;
  const int64_t k = topk ? node.attrs.i("k") : n;
  const bool descending = topk ? node.attrs.b("largest") : node.attrs.b("descending");
  const bool fl = is_float_class(t.in[0].dtype);
  const int64_t total = outer * n * inner;
  if (total == 0 || k == 0) return {};
  Shader sh;
  sh.buffer("x", t.in[0].dtype, Access::read);
  sh.buffer("v", t.out[0].dtype, Access::write);
  sh.buffer("ix", t.out[1].dtype, Access::write);
  sh.push("n");
  sh.local_size(256);
  const std::string T = fl ? "float" : "int64_t", c = fl ? "f" : "i";
  // less(a, b): a strictly before b by value in the requested direction (NaN the greatest)
  std::string less = fl ? "bool rlx_real_less(float a, float b) { if (isnan(a)) return false; if (isnan(b)) return true; return a < b; }\n"
                        : "bool rlx_real_less(int64_t a, int64_t b) { return a < b; }\n";
  less += cat("bool rlx_less(", T, " a, ", T, " b) { return ", descending ? "rlx_real_less(b, a)" : "rlx_real_less(a, b)", "; }\n");
  const std::string body =
      less + cat("void main() {\n  uint g = rlx_flat();\n  if (g >= p.n) return;\n", "  uint e = g % ", inner, "u, i = (g / ", inner, "u) % ", n, "u, o = g / ",
                 n * inner, "u;\n", "  uint base = o * ", n * inner, "u + e;\n", "  ", T, " me = x_", c, "(base + i * ", inner, "u);\n", "  uint rank = 0u;\n",
                 "  for (uint j = 0u; j < ", n, "u; ++j) {\n", "    ", T, " other = x_", c, "(base + j * ", inner, "u);\n",
                 "    if (rlx_less(other, me) || (j < i && !rlx_less(me, other))) ++rank;\n  }\n", "  if (rank < ", k, "u) {\n",
                 "    uint at = (o * ", k, "u + rank) * ", inner, "u + e;\n", "    v_st(at, x_ld(base + i * ", inner, "u));\n",
                 "    ix_wi(at, int64_t(i));\n  }\n}\n");
  Launch l;
  l.name = topk ? "topk" : "sort";
  l.source = sh.source(body);
  l.operands = {{Operand::Kind::input, 0}, {Operand::Kind::output, 0}, {Operand::Kind::output, 1}};
  l.words = {static_cast<uint32_t>(total)};
  l.push_bytes = sh.push_bytes();
  l.groups = grid_for(total, 256);
  return {l};
}

bool claims_cumsum(ir::Op op, const NodeTypes& t, const Features& f) {
  if (op != ir::Op::cumsum || t.in.size() != 1 || t.out.size() != 1 || t.in[0].dtype == DType::boolean) return false;
  return indexable(t.in[0]) && storable(t.in[0].dtype, f) && storable(t.out[0].dtype, f);
}

std::vector<Launch> cumsum_launches(const ir::Node& node, const NodeTypes& t) {
  const std::vector<int64_t> xs = dims(t.in[0]);
  const int64_t axis = codegen::normalize_axis(node.attrs.i("axis"), xs.size());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= xs[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(axis) + 1; d < xs.size(); ++d) inner *= xs[d];
  const int64_t n = xs[static_cast<size_t>(axis)], lines = outer * inner;
  if (lines == 0 || n == 0) return {};
  const bool fl = is_float_class(t.in[0].dtype), exclusive = node.attrs.b("exclusive"), reverse = node.attrs.b("reverse");
  const std::string T = fl ? "float" : "int64_t", c = fl ? "f" : "i";
  Shader sh;
  sh.buffer("x", t.in[0].dtype, Access::read);
  sh.buffer("y", t.out[0].dtype, Access::write);
  sh.push("n");
  sh.local_size(256);
  const std::string body = cat("void main() {\n  uint g = rlx_flat();\n  if (g >= p.n) return;\n", "  uint base = (g / ", inner, "u) * ", n * inner, "u + g % ", inner,
                               "u;\n", "  ", T, " s = ", fl ? "0.0" : "0l", ";\n", "  for (uint k = 0u; k < ", n, "u; ++k) {\n", "    uint j = base + ",
                               reverse ? cat("(", n - 1, "u - k)") : std::string("k"), " * ", inner, "u;\n", exclusive ? cat("    y_w", c, "(j, s);\n") : "",
                               "    s += x_", c, "(j);\n", exclusive ? "" : cat("    y_w", c, "(j, s);\n"), "  }\n}\n");
  Launch l;
  l.name = "cumsum";
  l.source = sh.source(body);
  l.operands = {{Operand::Kind::input, 0}, {Operand::Kind::output, 0}};
  l.words = {static_cast<uint32_t>(lines)};
  l.push_bytes = sh.push_bytes();
  l.groups = grid_for(lines, 256);
  return {l};
}

}  // namespace rlx::backends::vulkan
