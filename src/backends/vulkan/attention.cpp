// hir.attention in one kernel: a workgroup of 128 per (batch, query head, query row) walks the
// keys its mask allows in blocks of 128 — a score per lane (q staged in shared memory), the
// block's maximum and exponentials (an online softmax: the running maximum rescales what was
// summed), then every lane accumulates its output features over the block's values. GQA maps
// query heads onto key/value heads; layouts bhsd and bshd are strides; causal and sliding
// windows bound the key range; the additive bias broadcasts like the decomposition's.
// Rounding follows the decomposition where it can: operands rounded to the products' dtype
// (compute), scores rounded to q's dtype when the products are taken in it, the output to q's;
// the probabilities stay f32 (an online softmax never holds the normalized values the
// decomposition rounds — a difference within the half types' own rounding).
#include <cmath>

#include "backends/vulkan/context.h"
#include "backends/vulkan/kernels.h"
#include "backends/vulkan/shader.h"
#include "codegen/index_map.h"
#include "rlx/error.h"
#include "util/half.h"
#include "util/strings.h"

namespace rlx::backends::vulkan {

namespace {

constexpr int64_t kLanes = 128;

bool half_or_f32(DType d) { return d == DType::f32 || d == DType::f16 || d == DType::bf16; }

std::string round_to(DType d, const std::string& v) {
  if (d == DType::bf16) return cat("rlx_bf2f(rlx_f2bf(", v, "))");
  if (d == DType::f16) return cat("rlx_h2f(rlx_f2h(", v, "))");
  return v;
}

}  // namespace

bool claims_attention(ir::Op op, const NodeTypes& t, const ir::Attrs& a, const Features& f) {
  if (op != ir::Op::attention || t.in.size() < 3 || t.out.size() != 1 || a.has("out")) return false;
  for (const ir::Type& x : t.in)
    if (!indexable(x) || !storable(x.dtype, f)) return false;
  if (!half_or_f32(t.in[0].dtype)) return false;
  if (a.has("compute") && !half_or_f32(a.dtype("compute"))) return false;
  return indexable(t.out[0]);
}

std::vector<Launch> attention_launches(const ir::Node& n, const NodeTypes& t) {
  const bool bshd = n.attrs.s("layout") == "bshd";
  auto bhsd_dims = [&](const ir::Type& x) {
    std::vector<int64_t> s = dims(x);
    if (bshd) std::swap(s[1], s[2]);
    return s;
  };
  const std::vector<int64_t> qs = bhsd_dims(t.in[0]), ks = bhsd_dims(t.in[1]), vs = bhsd_dims(t.in[2]);
  const int64_t B = qs[0], Hq = qs[1], Sq = qs[2], D = qs[3], Hk = ks[1], Sk = ks[2], Dv = vs[3];
  const int64_t groups = Hq / Hk;
  // element strides of (b, h, s, d) for each operand in its own layout
  auto strides = [&](const std::vector<int64_t>& s) {  // s in bhsd order
    const int64_t H = s[1], S = s[2], Dd = s[3];
    return bshd ? std::vector<int64_t>{S * H * Dd, Dd, H * Dd, 1} : std::vector<int64_t>{H * S * Dd, S * Dd, Dd, 1};
  };
  const std::vector<int64_t> qst = strides(qs), kst = strides(ks), vst = strides(vs), ost = strides({B, Hq, Sq, Dv});
  const DType d = t.in[0].dtype;
  const DType md = n.attrs.has("compute") ? n.attrs.dtype("compute") : d;
  double scale = n.attrs.f("scale");
  if (scale == 0) scale = 1.0 / std::sqrt(static_cast<double>(D));
  const double cap = n.attrs.f("softcap");
  const std::string& mask = n.attrs.s("mask");
  const bool bias = t.in.size() == 4;
  Shader sh;
  sh.buffer("q", d, Access::read);
  sh.buffer("k", d, Access::read);
  sh.buffer("v", d, Access::read);
  Launch l;
  l.operands = {{Operand::Kind::input, 0}, {Operand::Kind::input, 1}, {Operand::Kind::input, 2}};
  std::string bias_at;
  if (bias) {
    sh.buffer("m", t.in[3].dtype, Access::read);
    l.operands.push_back({Operand::Kind::input, 3});
    std::vector<int64_t> bs = codegen::broadcast_strides({B, Hq, Sq, Sk}, dims(t.in[3]));
    bias_at = cat("b * ", bs[0], "u + h * ", bs[1], "u + i * ", bs[2], "u + j * ", bs[3], "u");
  }
  sh.buffer("y", d, Access::write);
  l.operands.push_back({Operand::Kind::output, 0});
  sh.local_size(static_cast<uint32_t>(kLanes));
  // the score of key j, as the decomposition computes it (f32 from here on)
  const bool round_scores = md == d && d != DType::f32;
  std::string score = cat("    float s = 0.0;\n    for (uint e = 0u; e < ", D, "u; ++e) s += q_s[e] * ", round_to(md, cat("k_f(kb + j * ", kst[2], "u + e)")),
                          ";\n");
  if (round_scores) score += cat("    s = ", round_to(d, "s"), ";\n");
  score += cat("    s *= uintBitsToFloat(", float_bits(static_cast<float>(scale)), "u);\n");
  if (cap > 0)
    score += cat("    s = tanh(s * uintBitsToFloat(", float_bits(static_cast<float>(1.0 / cap)), "u)) * uintBitsToFloat(", float_bits(static_cast<float>(cap)),
                 "u);\n");
  if (bias) score += cat("    s += m_f(", bias_at, ");\n");
  // the keys the mask lets query row i see: [lo, hi)
  std::string range = cat("  uint lo = 0u, hi = ", Sk, "u;\n");
  if (mask == "causal" || mask == "sliding_window") {
    range += cat("  uint pos = i + ", Sk - Sq, "u;\n  hi = pos + 1u;\n");
    if (mask == "sliding_window") range += cat("  lo = pos >= ", n.attrs.i("window"), "u ? pos - ", n.attrs.i("window"), "u + 1u : 0u;\n");
  }
  const std::string body = cat(
      "shared float q_s[", D, "];\nshared float p_s[", kLanes, "];\nshared float red[", kLanes, "];\n", "void main() {\n",
      "  uint row = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;\n", "  uint i = row % ", Sq, "u, h = (row / ", Sq, "u) % ", Hq, "u, b = row / ",
      Sq * Hq, "u;\n", "  uint t = gl_LocalInvocationID.x, hk = h / ", groups, "u;\n", "  uint qb = b * ", qst[0], "u + h * ", qst[1], "u + i * ", qst[2], "u;\n",
      "  uint kb = b * ", kst[0], "u + hk * ", kst[1], "u, vb = b * ", vst[0], "u + hk * ", vst[1], "u;\n", "  for (uint e = t; e < ", D,
      "u; e += ", kLanes, "u) q_s[e] = ", round_to(md, "q_f(qb + e)"), ";\n", range, "  float mx = uintBitsToFloat(0xff800000u), l = 0.0;\n",
      "  float acc[", (Dv + kLanes - 1) / kLanes, "];\n", "  for (uint c = 0u; c < ", (Dv + kLanes - 1) / kLanes, "u; ++c) acc[c] = 0.0;\n", "  barrier();\n",
      "  for (uint j0 = lo; j0 < hi; j0 += ", kLanes, "u) {\n", "    uint j = j0 + t;\n", "    float sj = uintBitsToFloat(0xff800000u);\n", "    if (j < hi) {\n",
      score, "      sj = s;\n    }\n", "    red[t] = sj;\n    barrier();\n", "    for (uint s2 = ", kLanes / 2, "u; s2 > 0u; s2 >>= 1) {\n",
      "      if (t < s2) red[t] = max(red[t], red[t + s2]);\n      barrier();\n    }\n",
      "    float nm = max(mx, red[0]);\n", "    float alpha = nm == uintBitsToFloat(0xff800000u) ? 1.0 : exp(mx - nm);\n",
      "    p_s[t] = (j < hi && nm != uintBitsToFloat(0xff800000u)) ? exp(sj - nm) : 0.0;\n", "    barrier();\n", "    float bl = 0.0;\n",
      "    uint cnt = min(", kLanes, "u, hi - j0);\n", "    for (uint c = 0u; c < ", (Dv + kLanes - 1) / kLanes, "u; ++c) {\n", "      uint e = t + c * ", kLanes,
      "u;\n", "      float a = acc[c] * alpha;\n", "      if (e < ", Dv, "u)\n", "        for (uint u = 0u; u < cnt; ++u) a += p_s[u] * ", round_to(md, cat("v_f(vb + (j0 + u) * ", vst[2], "u + e)")), ";\n", "      acc[c] = a;\n    }\n", "    for (uint u = 0u; u < cnt; ++u) bl += p_s[u];\n", "    l = l * alpha + bl;\n", "    mx = nm;\n",
      "    barrier();\n  }\n", "  uint ob = b * ", ost[0], "u + h * ", ost[1], "u + i * ", ost[2], "u;\n", "  for (uint c = 0u; c < ", (Dv + kLanes - 1) / kLanes,
      "u; ++c) {\n", "    uint e = t + c * ", kLanes, "u;\n", "    if (e < ", Dv, "u) y_wf(ob + e, acc[c] / l);\n  }\n}\n");
  l.name = "attention";
  l.source = sh.source(body);
  l.push_bytes = sh.push_bytes();
  l.groups = grid_for(B * Hq * Sq, 1);
  return {l};
}

}  // namespace rlx::backends::vulkan
