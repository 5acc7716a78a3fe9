// mir.conv — any spatial rank, strides, padding, dilation and groups — as a direct
// convolution: one invocation per output element sums its window over the group's input
// channels (f32 accumulation for floats, wrapping 64-bit for integers). The CNN training step's
// gradients are convolutions too (the autodiff writes them so), so this one kernel serves both.
#include "backends/vulkan/context.h"
#include "backends/vulkan/kernels.h"
#include "backends/vulkan/shader.h"
#include "rlx/error.h"
#include "util/strides.h"
#include "util/strings.h"

namespace rlx::backends::vulkan {

bool claims_conv(ir::Op op, const NodeTypes& t, const ir::Attrs&, const Features& f) {
  if (op != ir::Op::conv || t.in.size() != 2 || t.out.size() != 1 || t.in[0].dtype == DType::boolean) return false;
  if (t.out[0].dtype != t.in[0].dtype) return false;  // sums stored in a wider type (int8 products): not here yet
  for (const ir::Type& x : t.in)
    if (!indexable(x) || !storable(x.dtype, f)) return false;
  return indexable(t.out[0]) && storable(t.out[0].dtype, f) && t.in[0].shape.size() <= 5;
}

std::vector<Launch> conv_launches(const ir::Node& n, const NodeTypes& t) {
  const std::vector<int64_t> xs = dims(t.in[0]), ws = dims(t.in[1]), ys = dims(t.out[0]);
  const auto& strides = n.attrs.ints("strides");
  const auto& padding = n.attrs.intss("padding");
  const auto& dilation = n.attrs.ints("dilation");
  const int64_t groups = n.attrs.i("groups"), sp = static_cast<int64_t>(xs.size()) - 2;
  const int64_t C = xs[1], O = ws[0], Cg = C / groups, Og = O / groups;
  const std::vector<int64_t> xst = contiguous_strides(xs), wst = contiguous_strides(ws);
  const int64_t total = shape_numel(t.out[0].shape).value();
  int64_t K = 1;
  for (int64_t s = 0; s < sp; ++s) K *= ws[static_cast<size_t>(2 + s)];
  const bool fl = is_float_class(t.in[0].dtype);
  const std::string T = fl ? "float" : "int64_t", c = fl ? "f" : "i";
  Shader sh;
  sh.buffer("x", t.in[0].dtype, Access::read);
  sh.buffer("w", t.in[1].dtype, Access::read);
  sh.buffer("y", t.out[0].dtype, Access::write);
  sh.push("n");
  sh.local_size(256);
  std::string body = "void main() {\n  uint o = rlx_flat();\n  if (o >= p.n) return;\n  uint r = o;\n";
  for (int64_t s = sp; s-- > 0;) body += cat("  int p", s, " = int(r % ", ys[static_cast<size_t>(2 + s)], "u); r /= ", ys[static_cast<size_t>(2 + s)], "u;\n");
  body += cat("  uint oo = r % ", O, "u, nb = r / ", O, "u, g = oo / ", Og, "u;\n", "  ", T, " acc = ", fl ? "0.0" : "0l", ";\n", "  for (uint ci = 0u; ci < ", Cg,
              "u; ++ci) {\n", "    uint xb = nb * ", xst[0], "u + (g * ", Cg, "u + ci) * ", xst[1], "u, wb = oo * ", wst[0], "u + ci * ", wst[1], "u;\n",
              "    for (uint k = 0u; k < ", K, "u; ++k) {\n      uint q = k;\n      bool inside = true;\n      uint xo = xb, wo = wb;\n");
  for (int64_t s = sp; s-- > 0;) {
    const size_t d = static_cast<size_t>(2 + s);
    body += cat("      { int kc = int(q % ", ws[d], "u); q /= ", ws[d], "u;\n", "        int pos = p", s, " * ", strides[static_cast<size_t>(s)], " - ",
                padding[static_cast<size_t>(s)][0], " + kc * ", dilation[static_cast<size_t>(s)], ";\n", "        inside = inside && pos >= 0 && pos < ", xs[d],
                ";\n        xo += uint(max(pos, 0)) * ", xst[d], "u; wo += uint(kc) * ", wst[d], "u; }\n");
  }
  body += cat("      if (inside) acc += x_", c, "(xo) * w_", c, "(wo);\n    }\n  }\n  y_w", c, "(o, acc);\n}\n");
  Launch l;
  l.name = "conv";
  l.source = sh.source(body);
  l.operands = {{Operand::Kind::input, 0}, {Operand::Kind::input, 1}, {Operand::Kind::output, 0}};
  l.words = {static_cast<uint32_t>(total)};
  l.push_bytes = sh.push_bytes();
  l.groups = grid_for(total, 256);
  return total ? std::vector<Launch>{l} : std::vector<Launch>{};
}

}  // namespace rlx::backends::vulkan
