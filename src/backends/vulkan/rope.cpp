// hir.rope in one kernel, with its fused forms: the RMS norm before the rotation (norm_eps,
// a weight) and the append of the rotated rows into a KV cache at their positions
// (append_axis). A workgroup of 128 lanes per row: the norm's sum of squares folded in shared
// memory, the (normalized, rounded) row staged there so each lane reads its rotation partner,
// then every feature rotated with the decomposition's arithmetic — inverse frequencies computed
// on the host exactly as it does, angles in f32, cos and sin rounded to x's dtype, each product
// and sum rounded as the unfused elementwise ops store them.
#include <cmath>

#include "backends/vulkan/context.h"
#include "backends/vulkan/kernels.h"
#include "backends/vulkan/shader.h"
#include "codegen/dialect_glsl.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::backends::vulkan {

namespace {

constexpr int64_t kLanes = 128;

std::string f32(double v) { return f32_bits(static_cast<float>(v)); }

}  // namespace

bool claims_rope(ir::Op op, const NodeTypes& t, const ir::Attrs&, const Features& f) {
  if (op != ir::Op::rope || t.out.size() != 1) return false;
  const DType d = t.in[0].dtype;
  if (d != DType::f32 && d != DType::f16 && d != DType::bf16) return false;
  for (const ir::Type& x : t.in)
    if (!indexable(x) || !storable(x.dtype, f)) return false;
  if (!t.in[0].shape.back().is_static() || t.in[0].shape.back().value() > 4096) return false;
  return indexable(t.out[0]);
}

std::vector<Launch> rope_launches(const ir::Node& n, const NodeTypes& t) {
  const std::vector<int64_t> xs = dims(t.in[0]), ps = dims(t.in[1]);
  const DType d = t.in[0].dtype;
  const int64_t D = xs.back(), S = xs[xs.size() - 2], rows = shape_numel(t.in[0].shape).value() / D;
  const int64_t rot_dims = n.attrs.i("dims") ? n.attrs.i("dims") : D, half = rot_dims / 2;
  const bool interleaved = n.attrs.b("interleaved"), normed = n.attrs.has("norm_eps"), append = n.attrs.has("append_axis");
  const float theta = static_cast<float>(n.attrs.f("theta"));
  std::string inv = cat("const float inv_freq[", half, "] = float[](");
  for (int64_t i = 0; i < half; ++i)
    inv += cat(i ? ", " : "", codegen::glsl().literal(1.0f / std::pow(theta, static_cast<float>(2 * i) / static_cast<float>(rot_dims)), codegen::ValueClass::floating));
  inv += ");\n";
  Shader sh;
  Launch l;
  sh.buffer("x", d, Access::read);
  sh.buffer("pos", t.in[1].dtype, Access::read);
  l.operands = {{Operand::Kind::input, 0}, {Operand::Kind::input, 1}};
  if (normed) {
    sh.buffer("w", t.in[2].dtype, Access::read);
    l.operands.push_back({Operand::Kind::input, 2});
  }
  sh.buffer("y", d, append ? Access::read_write : Access::write);
  l.operands.push_back({Operand::Kind::output, 0});
  if (append) {
    sh.error_buffer();
    l.operands.push_back({Operand::Kind::error, 0});
    l.step_word = 0;
  }
  sh.local_size(static_cast<uint32_t>(kLanes));
  // the row's position: positions [S], or [B, S] over x[B, H, S, D]
  const std::string pos_at = ps.size() == 2 ? cat("(r / ", S * xs[1], "u) * ", S, "u + r % ", S, "u") : cat("r % ", S, "u");
  std::string body = inv + cat("shared float xs_[", D, "];\nshared float red[", kLanes, "];\n", "void main() {\n",
                               "  uint r = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x, t = gl_LocalInvocationID.x;\n", "  uint xb = r * ", D, "u;\n");
  if (normed) {
    // rms_norm's decomposition: Σ x² · (1/D), + eps, rsqrt, · x, · w, rounded to x's dtype
    body += cat("  float ss = 0.0;\n  for (uint e = t; e < ", D, "u; e += ", kLanes, "u) { float v = x_f(xb + e); ss += v * v; }\n",
                workgroup_sum("ss", "sum_sq", kLanes), "  float inv_rms = rlx_rsqrt(sum_sq * ", f32(1.0 / static_cast<double>(D)), " + ", f32(n.attrs.f("norm_eps")), ");\n",
                "  for (uint e = t; e < ", D, "u; e += ", kLanes, "u) xs_[e] = ", round_to(d, "(x_f(xb + e) * inv_rms) * w_f(e)"), ";\n");
  } else {
    body += cat("  for (uint e = t; e < ", D, "u; e += ", kLanes, "u) xs_[e] = x_f(xb + e);\n");
  }
  body += cat("  barrier();\n  int64_t p64 = pos_i(", pos_at, ");\n  float ang_pos = float(p64);\n");
  std::string out_at = "xb + e";
  if (append) {
    // rows go to the cache's row `pos` of the same leading index
    const std::vector<int64_t> cs = dims(t.in.back());
    const int64_t L = cs[cs.size() - 2];
    body += cat("  if (p64 < 0l || p64 >= ", L, "l) { if (t == 0u) rlx_index_error(p64, ", L, "l); return; }\n");
    out_at = cat("((r / ", S, "u) * ", L, "u + uint(p64)) * ", D, "u + e");
  }
  body += cat("  for (uint e = t; e < ", D, "u; e += ", kLanes, "u) {\n", "    float o = xs_[e];\n", "    if (e < ", rot_dims, "u) {\n");
  if (!interleaved) {
    body += cat("      uint j = e % ", half, "u;\n      float ang = ang_pos * inv_freq[j];\n", "      float c = ", round_to(d, "rlx_cos(ang)"), ", s = ",
                round_to(d, "rlx_sin(ang)"), ";\n", "      float rot = e < ", half, "u ? -xs_[e + ", half, "u] : xs_[e - ", half, "u];\n", "      o = ",
                round_to(d, cat(round_to(d, "o * c"), " + ", round_to(d, "rot * s"))), ";\n");
  } else {
    body += cat("      uint j = e / 2u;\n      float ang = ang_pos * inv_freq[j];\n", "      float c = ", round_to(d, "rlx_cos(ang)"), ", s = ",
                round_to(d, "rlx_sin(ang)"), ";\n", "      float x0 = xs_[2u * j], x1 = xs_[2u * j + 1u];\n", "      o = (e % 2u) == 0u ? ",
                round_to(d, cat(round_to(d, "x0 * c"), " - ", round_to(d, "x1 * s"))), " : ", round_to(d, cat(round_to(d, "x1 * c"), " + ", round_to(d, "x0 * s"))),
                ";\n");
  }
  body += cat("    }\n    y_wf(", out_at, ", o);\n  }\n}\n");
  l.name = cat("rope", normed ? "-norm" : "", append ? "-append" : "");
  l.source = sh.source(body);
  l.words = append ? std::vector<uint32_t>{0} : std::vector<uint32_t>{};
  l.push_bytes = sh.push_bytes();
  l.groups = grid_for(rows, 1);
  if (!append) return {l};
  // the cache as it was, then the new rows (nothing to copy when the output is the cache itself)
  Launch copy = copy_launch(d, shape_numel(t.out[0].shape).value(), {Operand::Kind::input, static_cast<int>(t.in.size() - 1)});
  return {copy, l};
}

}  // namespace rlx::backends::vulkan
