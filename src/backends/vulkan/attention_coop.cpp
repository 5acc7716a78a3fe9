// hir.attention on tensor cores (prefill and encoders) in two launches:
//  1. the keys and values staged once as f16 rows (zero-padded to whole blocks of 32 keys);
//  2. a 32-wide subgroup takes 16 query rows of one (batch, head) — kept as cooperative-matrix
//     fragments — and walks their key range in blocks of 32 with no workgroup barrier (where
//     row blocks are few, four subgroups share one, each every fourth key block, their shares
//     combined at the end as split-key flash attention does): scores
//     Q·Kᵀ from key fragments read straight from the staged rows, the online softmax in plain
//     lanes (two lanes a row, 16 scores each: mask, rounding, scale, soft cap and bias as the
//     block schedule applies them), the probabilities as f16 fragments times value fragments,
//     32 output features at a time, added into f32 outputs the lanes hold.
// Operands become f16 words exactly: f16 as they are, f32 rounded to the products' half type
// (the decomposition's casts), bf16 through powers of two — each q row and each key row scaled so
// its largest magnitude lands in [2^14, 2^15) (undone on the scores), each block of 32 value rows
// as a whole (undone on its contribution).
#include <algorithm>

#include "backends/vulkan/attention.h"
#include "backends/vulkan/context.h"
#include "backends/vulkan/shader.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::backends::vulkan {

namespace {

constexpr int64_t kKeys = 32;  // keys a block

bool pow2(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }
int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

// GLSL both launches share: 8 values of q, k or v from element `at` as 16-bit words
// (rlx_ld_q/k/v), and for bf16 words the largest magnitude of 8 and their f16 times 2^sh.
std::string word_functions(const AttentionShape& a, bool bf, const std::vector<const char*>& operands) {
  std::string s;
  for (const char* x : operands) {
    if (a.d == DType::f32) {
      const std::string w = bf ? "rlx_f2bf" : "rlx_f2h";
      s += cat("uint rlx_pk_", x, "(uint lo, uint hi) { return ", w, "(uintBitsToFloat(lo)) | (", w, "(uintBitsToFloat(hi)) << 16); }\n", "uvec4 rlx_ld_", x,
               "(uint at) {\n  uvec4 a = ", x, "4_[p.o_", x, "4 + at / 4u], b = ", x, "4_[p.o_", x, "4 + at / 4u + 1u];\n", "  return uvec4(rlx_pk_", x, "(a.x, a.y), rlx_pk_", x,
               "(a.z, a.w), rlx_pk_", x, "(b.x, b.y), rlx_pk_", x, "(b.z, b.w));\n}\n");
    } else {
      s += cat("uvec4 rlx_ld_", x, "(uint at) { return ", x, "4_[p.o_", x, "4 + at / 8u]; }\n");
    }
  }
  if (bf) {
    s += "float rlx_max8(uvec4 u) {\n  float m = 0.0;\n  for (uint c = 0u; c < 4u; ++c) m = max(m, max(abs(uintBitsToFloat(u[c] << 16)), abs(uintBitsToFloat(u[c] & 0xffff0000u))));\n  return m;\n}\n";
    s += "uvec4 rlx_half8(uvec4 u, int sh) {\n  uvec4 o;\n  for (uint c = 0u; c < 4u; ++c) o[c] = packHalf2x16(ldexp(vec2(uintBitsToFloat(u[c] << 16), uintBitsToFloat(u[c] & 0xffff0000u)), ivec2(sh)));\n  return o;\n}\n";
  } else {
    s += "float rlx_max8(uvec4 u) { return 0.0; }\nuvec4 rlx_half8(uvec4 u, int sh) { return u; }\n";
  }
  s += half_shift_function();
  return s;
}

// the largest magnitude of a row whose `units` units sit in neighbouring lanes
std::string row_max_function(int64_t units) {
  return cat("float rlx_row_max(float m) {\n  for (uint o = 1u; o < ", units, "u; o <<= 1) m = max(m, subgroupShuffleXor(m, o));\n  return m;\n}\n");
}

void subgroup_extensions(Shader& sh) {
  sh.extension("GL_EXT_shader_explicit_arithmetic_types_float16");
  sh.extension("GL_KHR_shader_subgroup_arithmetic");
  sh.extension("GL_KHR_shader_subgroup_shuffle");
}

// Where the staged keys and values lie in scratch (bytes), per (batch, kv head) row blocks.
struct KvLayout {
  int64_t skp = 0, kh_at = 0, vh_at = 0, ks_at = 0, vs_at = 0, bytes = 0;
};
KvLayout kv_layout(const AttentionShape& a) {
  KvLayout l;
  l.skp = round_up(a.Sk, kKeys);
  const int64_t rows = a.B * a.Hk * l.skp;
  l.kh_at = 0;
  l.vh_at = round_up(rows * a.D * 2, 256);
  l.ks_at = l.vh_at + round_up(rows * a.Dv * 2, 256);
  l.vs_at = l.ks_at + round_up(rows * 4, 256);
  l.bytes = l.vs_at + round_up(rows / kKeys * 4, 256);
  return l;
}

// Launch 1: one workgroup of 128 per block of 32 keys of one (batch, kv head).
Launch stage_kv(const AttentionShape& a, const KvLayout& kl, bool bf) {
  const int64_t DU = a.D / 8, VU = a.Dv / 8, T = 128;
  Shader sh;
  subgroup_extensions(sh);
  sh.raw_buffer("k4", "uvec4");
  sh.raw_buffer("v4", "uvec4");
  sh.raw_buffer("kh", "uvec4", Access::write);
  sh.raw_buffer("vh", "uvec4", Access::write);
  sh.raw_buffer("ks", "float", Access::write);
  sh.raw_buffer("vs", "float", Access::write);
  sh.local_size(T);
  const int64_t blocks = kl.skp / kKeys, k_it = (kKeys * DU + T - 1) / T, v_it = (kKeys * VU + T - 1) / T;
  std::string s = word_functions(a, bf, {"k", "v"}) + row_max_function(DU);
  s += "shared float vmax_[4];\n";
  s += cat("void main() {\n", "  uint blk = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;\n", "  uint kb = blk % ", blocks, "u, hk = (blk / ", blocks, "u) % ", a.Hk,
           "u, b = blk / ", blocks * a.Hk, "u, t = gl_LocalInvocationID.x;\n", "  uint row0 = (b * ", a.Hk, "u + hk) * ", kl.skp, "u + kb * ", kKeys, "u;\n",
           "  uint kbase = b * ", a.kst[0], "u + hk * ", a.kst[1], "u, vbase = b * ", a.vst[0], "u + hk * ", a.vst[1], "u;\n");
  // keys: a scale per row
  s += cat("  for (uint it = 0u; it < ", k_it, "u; ++it) {\n", "    uint e = t + ", T, "u * it, rr = e / ", DU, "u, c = e % ", DU, "u, j = kb * ", kKeys, "u + rr;\n",
           "    bool in_block = e < ", kKeys * DU, "u;\n", "    uvec4 u = (in_block && j < ", a.Sk, "u) ? rlx_ld_k(kbase + j * ", a.kst[2], "u + 8u * c) : uvec4(0u);\n",
           "    int sh = rlx_shift(rlx_row_max(rlx_max8(u)));\n", "    if (in_block) {\n", "      kh_[p.o_kh + (row0 + rr) * ", DU, "u + c] = rlx_half8(u, sh);\n",
           "      if (c == 0u) ks_[p.o_ks + row0 + rr] = ldexp(1.0, -sh);\n    }\n  }\n");
  // values: one scale for the block
  s += cat("  uvec4 vr[", v_it, "];\n  float vm = 0.0;\n", "  for (uint it = 0u; it < ", v_it, "u; ++it) {\n", "    uint e = t + ", T, "u * it, rr = e / ", VU,
           "u, c = e % ", VU, "u, j = kb * ", kKeys, "u + rr;\n", "    vr[it] = (e < ", kKeys * VU, "u && j < ", a.Sk, "u) ? rlx_ld_v(vbase + j * ", a.vst[2],
           "u + 8u * c) : uvec4(0u);\n", "    vm = max(vm, rlx_max8(vr[it]));\n  }\n", "  vm = subgroupMax(vm);\n", "  if (t % 32u == 0u) vmax_[t / 32u] = vm;\n",
           "  barrier();\n", "  vm = max(max(vmax_[0], vmax_[1]), max(vmax_[2], vmax_[3]));\n", "  int vsh = rlx_shift(vm);\n", "  for (uint it = 0u; it < ", v_it,
           "u; ++it) {\n", "    uint e = t + ", T, "u * it;\n", "    if (e < ", kKeys * VU, "u) vh_[p.o_vh + row0 * ", VU, "u + e] = rlx_half8(vr[it], vsh);\n  }\n",
           "  if (t == 0u) vs_[p.o_vs + row0 / ", kKeys, "u] = ldexp(1.0, -vsh);\n}\n");
  Launch l;
  l.name = "attention-stage-kv";
  l.source = sh.source(s);
  l.push_bytes = sh.push_bytes();
  l.groups = grid_for(a.B * a.Hk * blocks, 1);
  l.operands = {{Operand::Kind::input, 1, 16},
                {Operand::Kind::input, 2, 16},
                {Operand::Kind::scratch, static_cast<int>(kl.kh_at), 16},
                {Operand::Kind::scratch, static_cast<int>(kl.vh_at), 16},
                {Operand::Kind::scratch, static_cast<int>(kl.ks_at), 4},
                {Operand::Kind::scratch, static_cast<int>(kl.vs_at), 4}};
  return l;
}

}  // namespace

bool attention_coop_fits(const AttentionShape& a, const Features& f) {
  auto half = [](DType d) { return d == DType::f16 || d == DType::bf16; };
  // half operands taken as they are, or f32 ones rounded to the half type of the products
  const bool types = (half(a.d) && (a.md == a.d || a.md == DType::f32)) || (a.d == DType::f32 && half(a.md));
  return f.coopmat && f.subgroup_arithmetic && f.subgroup_shuffle && f.coop_m == 16 && f.coop_k == 16 && (f.coop_n == 16 || f.coop_n == 8) && types &&
         a.D % 16 == 0 && pow2(a.D / 8) && a.D <= 128 && a.Dv % 32 == 0 && a.Dv <= 128 && a.Sq >= 16 && a.B * a.Hk * round_up(a.Sk, kKeys) < (int64_t{1} << 26);
}

std::vector<Launch> attention_coop(const AttentionShape& a, const Features& f, size_t& scratch) {
  // the 16-bit words the products take: the operands' own, or f32 rounded to the products' type
  const DType words = a.d == DType::f32 ? a.md : a.d;
  const bool bf = words == DType::bf16;
  const KvLayout kl = kv_layout(a);
  scratch = static_cast<size_t>(kl.bytes);
  // four subgroups a workgroup: where 16-row blocks are few (a single prompt), the four share
  // one block, each taking every fourth key block; else each has a block of its own
  constexpr int64_t SG = 4, T = 32 * SG;
  const int64_t KS = a.B * a.Hq * ((a.Sq + 15) / 16) >= 1024 ? 1 : 4, RB = SG / KS, BR = 16 * RB;
  const int64_t CN = f.coop_n, DU = a.D / 8, VU = a.Dv / 8;  // 16-byte units of a q/k row, a v row
  const int64_t SK = DU + 1, SS = kKeys / 4 + 1, SP = kKeys / 8 + 1;  // shared strides (units)
  const int64_t OU = a.Dv / 4 + 1;  // a row of outputs (f32) in units, padded
  // q rows and their scales; scores and probabilities; at the end the outputs and (max, sum) of each row
  const int64_t per_sg = std::max({16 * SK + 16, 16 * SS + 16 * SP, 16 * OU + 16});
  Shader sh;
  sh.extension("GL_NV_cooperative_matrix");
  sh.extension("GL_KHR_memory_scope_semantics");
  subgroup_extensions(sh);
  sh.raw_buffer("q4", "uvec4");
  sh.raw_buffer("kh", "uvec4");
  sh.raw_buffer("vh", "uvec4");
  sh.raw_buffer("ks", "float");
  sh.raw_buffer("vs", "float");
  if (a.bias) sh.buffer("m", a.bias_dtype, Access::read);
  sh.buffer("y", a.d, Access::write);
  sh.local_size(static_cast<uint32_t>(T));
  const std::string A = "fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>", B = cat("fcoopmatNV<16, gl_ScopeSubgroup, 16, ", CN, ">"),
                    C = cat("fcoopmatNV<32, gl_ScopeSubgroup, 16, ", CN, ">");
  const std::string ninf = "uintBitsToFloat(0xff800000u)";
  std::string s = a.bounds + word_functions(a, bf, {"q"}) + row_max_function(DU);
  s += cat("shared uvec4 sm_[", SG * per_sg, "];\n");
  const int64_t nqb = (a.Sq + BR - 1) / BR;
  s += "void main() {\n";
  s += cat("  uint blk = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;\n", "  uint qb = blk % ", nqb, "u, h = (blk / ", nqb, "u) % ", a.Hq, "u, b = blk / ",
           nqb * a.Hq, "u;\n", "  uint t = gl_LocalInvocationID.x, sg = t / 32u, lane = t % 32u, r = lane / 2u, hf = lane % 2u, hk = h / ", a.groups, "u;\n",
           "  uint rb = sg / ", KS, "u, part = sg % ", KS, "u, row0 = qb * ", BR, "u + rb * 16u, i = row0 + r;\n",
           "  uint qbase = b * ", a.qst[0], "u + h * ", a.qst[1], "u, kv0 = (b * ", a.Hk, "u + hk) * ", kl.skp, "u;\n", "  uint ps = sg * ", per_sg, "u, pp = ps + ", 16 * SS,
           "u;\n");
  // q: the subgroup's 16 rows staged (scaled per row), kept as fragments
  s += cat("  for (uint it = 0u; it < ", 16 * DU / 32, "u; ++it) {\n", "    uint e = lane + 32u * it, rr = e / ", DU, "u, c = e % ", DU,
           "u, qi = row0 + rr;\n", "    uvec4 u = qi < ", a.Sq, "u ? rlx_ld_q(qbase + qi * ", a.qst[2], "u + 8u * c) : uvec4(0u);\n",
           "    int sh = rlx_shift(rlx_row_max(rlx_max8(u)));\n", "    sm_[ps + rr * ", SK, "u + c] = rlx_half8(u, sh);\n",
           "    if (c == 0u) sm_[ps + ", 16 * SK, "u + rr].x = floatBitsToUint(ldexp(1.0, -sh));\n  }\n");
  s += cat("  subgroupMemoryBarrierShared();\n  subgroupBarrier();\n", "  float q_inv = uintBitsToFloat(sm_[ps + ", 16 * SK, "u + r].x);\n");
  for (int64_t kd = 0; kd < a.D / 16; ++kd) s += cat("  ", A, " fq", kd, ";\n  coopMatLoadNV(fq", kd, ", sm_, ps + ", 2 * kd, "u, ", SK, "u, false);\n");
  s += "  subgroupBarrier();\n";
  s += cat("  float mx = ", ninf, ", l = 0.0, o[", a.Dv / 2, "];\n", "  for (uint x = 0u; x < ", a.Dv / 2, "u; ++x) o[x] = 0.0;\n",
           "  uint lo = rlx_lo(row0), hi = rlx_hi(min(row0 + 15u, ", a.Sq - 1, "u));\n", "  for (uint j0 = (lo / ", kKeys, "u + part) * ", kKeys, "u; j0 < hi; j0 += ", KS * kKeys, "u) {\n");
  // scores: 16 rows × 32 keys, key fragments straight from the staged rows
  for (int64_t n = 0; n < kKeys / CN; ++n) {
    s += cat("    ", C, " s", n, " = ", C, "(0.0);\n");
    for (int64_t kd = 0; kd < a.D / 16; ++kd)
      s += cat("    { ", B, " fk;\n      coopMatLoadNV(fk, kh_, p.o_kh + (kv0 + j0 + ", n * CN, "u) * ", DU, "u + ", 2 * kd, "u, ", DU, "u, true);\n      s", n,
               " = coopMatMulAddNV(fq", kd, ", fk, s", n, "); }\n");
    s += cat("    coopMatStoreNV(s", n, ", sm_, ps + ", n * CN / 4, "u, ", SS, "u, false);\n");
  }
  s += "    subgroupMemoryBarrierShared();\n    subgroupBarrier();\n";
  // the online softmax of each row, two lanes a row
  s += cat("    float sv[16], bm = ", ninf, ";\n", "    for (uint x = 0u; x < 16u; ++x) {\n", "      uint jj = hf * 16u + x, j = j0 + jj;\n", "      float s = ", ninf, ";\n",
           "      if (i < ", a.Sq, "u && j < hi && j >= rlx_lo(i) && j < rlx_hi(i)) {\n", "        s = uintBitsToFloat(sm_[ps + r * ", SS,
           "u + jj / 4u][jj % 4u]) * q_inv * ks_[p.o_ks + kv0 + j];\n", a.finish_score("        "), "      }\n", "      sv[x] = s;\n      bm = max(bm, s);\n    }\n",
           "    bm = max(bm, subgroupShuffleXor(bm, 1u));\n", "    float nm = max(mx, bm), alpha = nm == ", ninf, " ? 1.0 : exp(mx - nm), sum = 0.0;\n",
           "    uint pk[8];\n", "    for (uint x = 0u; x < 16u; x += 2u) {\n", "      float p0 = nm == ", ninf, " ? 0.0 : exp(sv[x] - nm), p1 = nm == ", ninf,
           " ? 0.0 : exp(sv[x + 1u] - nm);\n", "      sum += p0 + p1;\n      pk[x / 2u] = packHalf2x16(vec2(p0, p1));\n    }\n",
           "    sum += subgroupShuffleXor(sum, 1u);\n", "    l = l * alpha + sum;\n    mx = nm;\n", "    for (uint x = 0u; x < ", a.Dv / 2, "u; ++x) o[x] *= alpha;\n",
           "    sm_[pp + r * ", SP, "u + hf * 2u] = uvec4(pk[0], pk[1], pk[2], pk[3]);\n", "    sm_[pp + r * ", SP, "u + hf * 2u + 1u] = uvec4(pk[4], pk[5], pk[6], pk[7]);\n",
           "    subgroupMemoryBarrierShared();\n    subgroupBarrier();\n");
  // probabilities × values, 32 features at a time, value fragments straight from the staged rows
  s += cat("    ", A, " fp0, fp1;\n", "    coopMatLoadNV(fp0, sm_, pp, ", SP, "u, false);\n", "    coopMatLoadNV(fp1, sm_, pp + 2u, ", SP, "u, false);\n",
           "    float v_inv = vs_[p.o_vs + (kv0 + j0) / ", kKeys, "u];\n");
  for (int64_t c = 0; c < a.Dv / 32; ++c) {
    for (int64_t n = 0; n < 32 / CN; ++n) {
      const int64_t col = c * 32 + n * CN;
      s += cat("    {\n      ", C, " pv = ", C, "(0.0);\n      ", B, " fv;\n", "      coopMatLoadNV(fv, vh_, p.o_vh + (kv0 + j0) * ", VU, "u + ", col / 8, "u, ", VU,
               "u, false);\n", "      pv = coopMatMulAddNV(fp0, fv, pv);\n", "      coopMatLoadNV(fv, vh_, p.o_vh + (kv0 + j0 + 16u) * ", VU, "u + ", col / 8, "u, ", VU,
               "u, false);\n", "      pv = coopMatMulAddNV(fp1, fv, pv);\n", "      coopMatStoreNV(pv, sm_, ps + ", n * CN / 4, "u, ", SS, "u, false);\n    }\n");
    }
    s += cat("    subgroupMemoryBarrierShared();\n    subgroupBarrier();\n", "    for (uint x = 0u; x < 16u; ++x) {\n      uint cc = hf * 16u + x;\n", "      o[", c * 16,
             "u + x] += uintBitsToFloat(sm_[ps + r * ", SS, "u + cc / 4u][cc % 4u]) * v_inv;\n    }\n", "    subgroupBarrier();\n");
  }
  s += "  }\n";
  // the four subgroups' shares of each row combined: outputs weighted by exp(own max − max)
  s += cat("  for (uint x = 0u; x < ", a.Dv / 2, "u; ++x) {\n", "    uint cc = (x / 16u) * 32u + hf * 16u + x % 16u;\n", "    sm_[ps + r * ", OU,
           "u + cc / 4u][cc % 4u] = floatBitsToUint(o[x]);\n  }\n", "  if (hf == 0u) sm_[ps + ", 16 * OU, "u + r] = uvec4(floatBitsToUint(mx), floatBitsToUint(l), 0u, 0u);\n",
           "  barrier();\n", "  for (uint e = t; e < ", RB * 16 * a.Dv, "u; e += ", T, "u) {\n", "    uint eb = e / ", 16 * a.Dv, "u, rr = (e / ", a.Dv, "u) % 16u, cc = e % ", a.Dv,
           "u, ii = qb * ", BR, "u + eb * 16u + rr;\n", "    float m_all = ", ninf, ";\n", "    for (uint g = eb * ", KS, "u; g < eb * ", KS, "u + ", KS,
           "u; ++g) m_all = max(m_all, uintBitsToFloat(sm_[g * ", per_sg, "u + ", 16 * OU, "u + rr].x));\n", "    float num = 0.0, den = 0.0;\n", "    for (uint g = eb * ", KS,
           "u; g < eb * ", KS, "u + ", KS, "u; ++g) {\n", "      uvec4 ml = sm_[g * ", per_sg, "u + ", 16 * OU, "u + rr];\n",
           "      float mg = uintBitsToFloat(ml.x), w = mg == ", ninf, " ? 0.0 : exp(mg - m_all);\n", "      den += uintBitsToFloat(ml.y) * w;\n",
           "      num += uintBitsToFloat(sm_[g * ", per_sg, "u + rr * ", OU, "u + cc / 4u][cc % 4u]) * w;\n    }\n", "    if (ii < ", a.Sq, "u) y_wf(b * ", a.ost[0],
           "u + h * ", a.ost[1], "u + ii * ", a.ost[2], "u + cc, num / den);\n  }\n}\n");
  Launch l;
  l.name = "attention-coopmat";
  l.source = sh.source(s);
  l.push_bytes = sh.push_bytes();
  l.groups = grid_for(a.B * a.Hq * nqb, 1);
  l.operands = {{Operand::Kind::input, 0, 16},
                {Operand::Kind::scratch, static_cast<int>(kl.kh_at), 16},
                {Operand::Kind::scratch, static_cast<int>(kl.vh_at), 16},
                {Operand::Kind::scratch, static_cast<int>(kl.ks_at), 4},
                {Operand::Kind::scratch, static_cast<int>(kl.vs_at), 4}};
  if (a.bias) l.operands.push_back({Operand::Kind::input, 3});
  l.operands.push_back({Operand::Kind::output, 0});
  return {stage_kv(a, kl, bf), l};
}

}  // namespace rlx::backends::vulkan
