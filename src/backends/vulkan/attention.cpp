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

#include "backends/vulkan/attention.h"
#include "backends/vulkan/context.h"
#include "backends/vulkan/kernels.h"
#include "backends/vulkan/shader.h"
#include "backends/vulkan/target.h"
#include "codegen/index_map.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::backends::vulkan {

namespace {

constexpr int64_t kLanes = 128;

bool half_or_f32(DType d) { return d == DType::f32 || d == DType::f16 || d == DType::bf16; }

}  // namespace

bool claims_attention(ir::Op op, const NodeTypes& t, const ir::Attrs& a, const Features& f) {
  if (op != ir::Op::attention || t.in.size() < 3 || t.out.size() != 1 || a.has("out")) return false;
  for (const ir::Type& x : t.in)
    if (!indexable(x) || !storable(x.dtype, f)) return false;
  if (!half_or_f32(t.in[0].dtype)) return false;
  if (a.has("compute") && !half_or_f32(a.dtype("compute"))) return false;
  return indexable(t.out[0]);
}

std::vector<Launch> attention_launches(const ir::Node& n, const NodeTypes& t, size_t& scratch) {
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
  // what follows the dot product, for both schedules: rounding, scale, soft cap, bias
  auto finish_score = [&](const std::string& indent) {
    std::string f;
    if (round_scores) f += cat(indent, "s = ", round_to(d, "s"), ";\n");
    f += cat(indent, "s *= ", f32_bits(static_cast<float>(scale)), ";\n");
    if (cap > 0) f += cat(indent, "s = tanh(s * ", f32_bits(static_cast<float>(1.0 / cap)), ") * ", f32_bits(static_cast<float>(cap)), ";\n");
    if (bias) f += cat(indent, "s += m_f(", bias_at, ");\n");
    return f;
  };
  score += finish_score("    ");
  // the keys query row i (absolute) may see: [rlx_lo(i), rlx_hi(i))
  std::string bounds = cat("uint rlx_hi(uint i) { return ", mask == "causal" || mask == "sliding_window" ? cat("i + ", Sk - Sq + 1, "u") : cat(Sk, "u"), "; }\n");
  bounds += mask == "sliding_window" ? cat("uint rlx_lo(uint i) { uint pos = i + ", Sk - Sq, "u; return pos >= ", n.attrs.i("window"), "u ? pos - ",
                                           n.attrs.i("window"), "u + 1u : 0u; }\n")
                                     : "uint rlx_lo(uint i) { return 0u; }\n";
  const int64_t shared_bytes = 4 * (16 * D + 32 * (D + 1) + 32 * Dv + 16 * 33 + 48);
  const uint32_t shared_max = current_target().features.max_shared_bytes;
  if (Sq >= 16 && D <= 128 && Dv <= 128 && shared_bytes <= std::min<int64_t>(48 * 1024, shared_max ? shared_max : 48 * 1024)) {
    // a block of 16 query rows per workgroup of 256: key/value blocks of 32 staged in shared
    // memory once for all 16 rows (prefill and encoders), scores 2 a lane, each row's online
    // softmax kept by one lane, outputs 16 rows × Dv spread over the lanes
    std::string sc = cat("        for (uint e = 0u; e < ", D, "u; ++e) s += Qs[row][e] * Ks[jj][e];\n");
    sc += finish_score("        ");
    const int64_t nqb = (Sq + 15) / 16, cols = (Dv + 15) / 16;
    const std::string ninf = "uintBitsToFloat(0xff800000u)";
    const std::string block = cat(
        bounds, "shared float Qs[16][", D, "];\nshared float Ks[32][", D + 1, "];\nshared float Vs[32][", Dv, "];\nshared float Ss[16][33];\n",
        "shared float m_s[16], l_s[16], a_s[16];\n", "void main() {\n", "  uint blk = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;\n",
        "  uint qb = blk % ", nqb, "u, h = (blk / ", nqb, "u) % ", Hq, "u, b = blk / ", nqb * Hq, "u;\n",
        "  uint t = gl_LocalInvocationID.x, hk = h / ", groups, "u, i0 = qb * 16u, row = t / 16u, col = t % 16u;\n",
        "  uint kb = b * ", kst[0], "u + hk * ", kst[1], "u, vb = b * ", vst[0], "u + hk * ", vst[1], "u;\n", "  for (uint e = t; e < ", 16 * D,
        "u; e += 256u) {\n    uint i = e / ", D, "u, dd = e % ", D, "u;\n", "    Qs[i][dd] = i0 + i < ", Sq, "u ? ",
        round_to(md, cat("q_f(b * ", qst[0], "u + h * ", qst[1], "u + (i0 + i) * ", qst[2], "u + dd)")), " : 0.0;\n  }\n",
        "  if (t < 16u) { m_s[t] = ", ninf, "; l_s[t] = 0.0; }\n", "  uint lo = rlx_lo(i0), hi = rlx_hi(min(i0 + 15u, ", Sq - 1, "u));\n", "  float acc[", cols,
        "];\n", "  for (uint c = 0u; c < ", cols, "u; ++c) acc[c] = 0.0;\n", "  barrier();\n", "  for (uint j0 = lo; j0 < hi; j0 += 32u) {\n",
        "    for (uint e = t; e < ", 32 * D, "u; e += 256u) {\n      uint jj = e / ", D, "u, dd = e % ", D, "u;\n", "      Ks[jj][dd] = j0 + jj < hi ? ",
        round_to(md, cat("k_f(kb + (j0 + jj) * ", kst[2], "u + dd)")), " : 0.0;\n    }\n", "    for (uint e = t; e < ", 32 * Dv, "u; e += 256u) {\n      uint jj = e / ",
        Dv, "u, dd = e % ", Dv, "u;\n", "      Vs[jj][dd] = j0 + jj < hi ? ", round_to(md, cat("v_f(vb + (j0 + jj) * ", vst[2], "u + dd)")),
        " : 0.0;\n    }\n", "    barrier();\n", "    for (uint q2 = 0u; q2 < 2u; ++q2) {\n", "      uint jj = col + 16u * q2, i = i0 + row, j = j0 + jj;\n",
        "      float s = ", ninf, ";\n", "      if (i < ", Sq, "u && j < hi && j >= rlx_lo(i) && j < rlx_hi(i)) {\n        s = 0.0;\n", sc, "      }\n",
        "      Ss[row][jj] = s;\n    }\n", "    barrier();\n", "    if (t < 16u) {\n", "      float mx = m_s[t], bm = ", ninf, ";\n",
        "      for (uint jj = 0u; jj < 32u; ++jj) bm = max(bm, Ss[t][jj]);\n", "      float nm = max(mx, bm), sum = 0.0;\n",
        "      float alpha = nm == ", ninf, " ? 1.0 : exp(mx - nm);\n", "      for (uint jj = 0u; jj < 32u; ++jj) {\n",
        "        float pj = nm == ", ninf, " ? 0.0 : exp(Ss[t][jj] - nm);\n        Ss[t][jj] = pj;\n        sum += pj;\n      }\n",
        "      l_s[t] = l_s[t] * alpha + sum; m_s[t] = nm; a_s[t] = alpha;\n    }\n", "    barrier();\n", "    float alpha = a_s[row];\n",
        "    for (uint c = 0u; c < ", cols, "u; ++c) {\n      uint e = col + 16u * c;\n      if (e < ", Dv, "u) {\n        float a = acc[c] * alpha;\n",
        "        for (uint jj = 0u; jj < 32u; ++jj) a += Ss[row][jj] * Vs[jj][e];\n        acc[c] = a;\n      }\n    }\n", "    barrier();\n  }\n",
        "  if (i0 + row < ", Sq, "u)\n", "    for (uint c = 0u; c < ", cols, "u; ++c) {\n      uint e = col + 16u * c;\n",
        "      if (e < ", Dv, "u) y_wf(b * ", ost[0], "u + h * ", ost[1], "u + (i0 + row) * ", ost[2], "u + e, acc[c] / l_s[row]);\n    }\n}\n");
    sh.local_size(256);
    l.name = "attention-block";
    l.source = sh.source(block);
    l.push_bytes = sh.push_bytes();
    l.groups = grid_for(B * Hq * nqb, 1);
    AttentionShape as;
    as.B = B, as.Hq = Hq, as.Sq = Sq, as.D = D, as.Hk = Hk, as.Sk = Sk, as.Dv = Dv, as.groups = groups;
    as.qst = qst, as.kst = kst, as.vst = vst, as.ost = ost, as.d = d, as.md = md, as.bias = bias;
    if (bias) as.bias_dtype = t.in[3].dtype;
    as.bounds = bounds, as.finish_score = finish_score;
    const Features& f = current_target().features;
    if (attention_coop_fits(as, f)) {
      std::vector<Launch> c = attention_coop(as, f, scratch);
      c.front().unaligned = std::make_shared<std::vector<Launch>>(std::vector<Launch>{l});
      return c;
    }
    return {l};
  }
  const std::string body = cat(
      bounds, "shared float q_s[", D, "];\nshared float p_s[", kLanes, "];\nshared float red[", kLanes, "];\n", "void main() {\n",
      "  uint row = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;\n", "  uint i = row % ", Sq, "u, h = (row / ", Sq, "u) % ", Hq, "u, b = row / ",
      Sq * Hq, "u;\n", "  uint t = gl_LocalInvocationID.x, hk = h / ", groups, "u;\n", "  uint qb = b * ", qst[0], "u + h * ", qst[1], "u + i * ", qst[2], "u;\n",
      "  uint kb = b * ", kst[0], "u + hk * ", kst[1], "u, vb = b * ", vst[0], "u + hk * ", vst[1], "u;\n", "  for (uint e = t; e < ", D,
      "u; e += ", kLanes, "u) q_s[e] = ", round_to(md, "q_f(qb + e)"), ";\n", "  uint lo = rlx_lo(i), hi = rlx_hi(i);\n  float mx = uintBitsToFloat(0xff800000u), l = 0.0;\n",
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
