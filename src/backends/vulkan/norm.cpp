// hir.rms_norm and hir.layer_norm over the last axis in one kernel: a workgroup of 128 lanes
// per row folds the row's sums in shared memory (layer_norm: the mean first, then the centered
// squares, as its decomposition computes them) and writes the normalized row, scaled and
// shifted, rounded to x's dtype and then to `out`'s — the decomposition's arithmetic in f32.
#include "backends/vulkan/context.h"
#include "backends/vulkan/kernels.h"
#include "backends/vulkan/shader.h"
#include "backends/vulkan/target.h"
#include "codegen/dialect_glsl.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::backends::vulkan {

namespace {

constexpr int64_t kLanes = 128;

std::string lit(double v) { return codegen::glsl().literal(static_cast<float>(v), codegen::ValueClass::floating); }

}  // namespace

bool claims_norm(ir::Op op, const NodeTypes& t, const ir::Attrs& a, const Features& f) {
  if ((op != ir::Op::rms_norm && op != ir::Op::layer_norm) || t.out.size() != 1) return false;
  const ir::Type& x = t.in[0];
  if (x.dtype != DType::f32 && x.dtype != DType::f16 && x.dtype != DType::bf16) return false;
  const int64_t rank = static_cast<int64_t>(x.shape.size()), axis = a.i("axis");
  if (rank == 0 || (axis != -1 && axis != rank - 1) || !x.shape.back().is_static()) return false;
  for (size_t k = 1; k < t.in.size(); ++k)
    if (t.in[k].shape != Shape{x.shape.back()}) return false;
  for (const ir::Type& v : t.in)
    if (!indexable(v) || !storable(v.dtype, f)) return false;
  return indexable(t.out[0]) && storable(t.out[0].dtype, f);
}

std::vector<Launch> norm_launches(const ir::Node& n, const NodeTypes& t) {
  const DType d = t.in[0].dtype;
  const int64_t D = t.in[0].shape.back().value(), rows = D ? shape_numel(t.in[0].shape).value() / D : 0;
  if (rows == 0) return {};
  const bool layer = n.op == ir::Op::layer_norm;
  Shader sh;
  Launch l;
  sh.buffer("x", d, Access::read);
  l.operands = {{Operand::Kind::input, 0}};
  std::string scaled = "v";
  if (t.in.size() > 1) {
    sh.buffer("w", t.in[1].dtype, Access::read);
    l.operands.push_back({Operand::Kind::input, 1});
    scaled = "v * w_f(e)";
  }
  if (t.in.size() > 2) {
    sh.buffer("b", t.in[2].dtype, Access::read);
    l.operands.push_back({Operand::Kind::input, 2});
    scaled = cat("(", scaled, ") + b_f(e)");
  }
  sh.buffer("y", t.out[0].dtype, Access::write);
  l.operands.push_back({Operand::Kind::output, 0});
  const std::string inv_n = lit(1.0 / static_cast<double>(D)), eps = lit(n.attrs.f("eps"));
  const Features& f = current_target().features;
  const int64_t S = f.subgroup_size;
  if (f.subgroup_arithmetic && S >= 8 && S <= 256 && D <= 32 * S) {
    // short rows (an encoder's 384): a subgroup a row, the row held in registers (at most 32 a
    // lane), its sums by subgroupAdd — no shared memory, no barrier
    const int64_t R = (D + S - 1) / S, per = 256 / S;
    sh.extension("GL_KHR_shader_subgroup_arithmetic");
    sh.local_size(256);
    std::string body = cat("void main() {\n", "  uint t = gl_LocalInvocationID.x, lane = t % ", S, "u, r = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * ", per, "u + t / ", S, "u;\n",
                           "  if (r >= ", rows, "u) return;\n", "  uint xb = r * ", D, "u;\n", "  float xs[", R, "];\n", "  for (uint i = 0u; i < ", R,
                           "u; ++i) { uint e = lane + ", S, "u * i; xs[i] = e < ", D, "u ? x_f(xb + e) : 0.0; }\n");
    if (layer)
      body += cat("  float s0 = 0.0;\n  for (uint i = 0u; i < ", R, "u; ++i) s0 += xs[i];\n", "  float mean = subgroupAdd(s0) * ", inv_n, ";\n", "  float s1 = 0.0;\n",
                  "  for (uint i = 0u; i < ", R, "u; ++i) { float c = lane + ", S, "u * i < ", D, "u ? xs[i] - mean : 0.0; s1 += c * c; }\n", "  float inv = rlx_rsqrt(subgroupAdd(s1) * ",
                  inv_n, " + ", eps, ");\n");
    else
      body += cat("  float mean = 0.0, s0 = 0.0;\n  for (uint i = 0u; i < ", R, "u; ++i) s0 += xs[i] * xs[i];\n", "  float inv = rlx_rsqrt(subgroupAdd(s0) * ", inv_n, " + ",
                  eps, ");\n");
    body += cat("  for (uint i = 0u; i < ", R, "u; ++i) {\n    uint e = lane + ", S, "u * i;\n", "    if (e < ", D, "u) { float v = (xs[i] - mean) * inv; y_wf(xb + e, ",
                round_to(d, scaled), "); }\n  }\n}\n");
    l.name = layer ? "layer-norm-rows" : "rms-norm-rows";
    l.source = sh.source(body);
    l.push_bytes = sh.push_bytes();
    l.groups = grid_for((rows + per - 1) / per, 1);
    return {l};
  }
  sh.local_size(static_cast<uint32_t>(kLanes));
  std::string body = cat("shared float red[", kLanes, "];\n", "void main() {\n",
                         "  uint r = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x, t = gl_LocalInvocationID.x, xb = r * ", D, "u;\n");
  if (layer) {
    body += cat("  float s0 = 0.0;\n  for (uint e = t; e < ", D, "u; e += ", kLanes, "u) s0 += x_f(xb + e);\n", workgroup_sum("s0", "sum", kLanes), "  float mean = sum * ", inv_n,
                ";\n", "  float s1 = 0.0;\n  for (uint e = t; e < ", D, "u; e += ", kLanes, "u) { float c = x_f(xb + e) - mean; s1 += c * c; }\n",
                workgroup_sum("s1", "sq", kLanes), "  float inv = rlx_rsqrt(sq * ", inv_n, " + ", eps, ");\n", "  for (uint e = t; e < ", D, "u; e += ", kLanes,
                "u) {\n    float v = (x_f(xb + e) - mean) * inv;\n", "    y_wf(xb + e, ", round_to(d, scaled), ");\n  }\n}\n");
  } else {
    body += cat("  float s0 = 0.0;\n  for (uint e = t; e < ", D, "u; e += ", kLanes, "u) { float v = x_f(xb + e); s0 += v * v; }\n", workgroup_sum("s0", "sq", kLanes),
                "  float inv = rlx_rsqrt(sq * ", inv_n, " + ", eps, ");\n", "  for (uint e = t; e < ", D, "u; e += ", kLanes,
                "u) {\n    float v = x_f(xb + e) * inv;\n", "    y_wf(xb + e, ", round_to(d, scaled), ");\n  }\n}\n");
  }
  l.name = layer ? "layer-norm" : "rms-norm";
  l.source = sh.source(body);
  l.push_bytes = sh.push_bytes();
  l.groups = grid_for(rows, 1);
  return {l};
}

}  // namespace rlx::backends::vulkan
