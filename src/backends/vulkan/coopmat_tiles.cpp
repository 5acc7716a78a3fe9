// The tensor-core GEMM for large products: plain f16 operand matrices read 16 bytes (8 halves)
// a load, 32-deep slices staged in shared memory with two buffers (the next slice's loads are
// in flight while the current one multiplies: one barrier a slice), each 32-wide subgroup
// multiplying its part of the workgroup's tile through cooperative-matrix fragments with f32
// accumulation. The accumulators leave one fragment row at a time through a small per-subgroup
// shared region to the problem's rlx_out — divided by the operands' row scales when they were
// staged by half_stage (bf16 as f16 with a power-of-two scale per row: exact).
#include "backends/vulkan/context.h"
#include "backends/vulkan/kernels.h"
#include "backends/vulkan/shader.h"
#include "rlx/error.h"
#include "util/flags.h"
#include "util/strings.h"

namespace rlx::backends::vulkan {

namespace {

// A tile shape and its subgroup grid: sgm × sgn subgroups, each (bm / sgm) × (bn / sgn).
struct TileShape {
  int64_t bm, bn, sgm, sgn;
  int64_t threads() const { return 32 * sgm * sgn; }
};

// The largest tile that still gives a large GPU most of a workgroup per SM (an H200 has 132),
// unless RLX_VULKAN_COOP_TILE names one
TileShape tile_shape(const MatmulProblem& p) {
  const std::string& forced = flags().RLX_VULKAN_COOP_TILE;
  if (forced == "128x128") return {128, 128, 2, 4};
  if (forced == "128x128w4") return {128, 128, 2, 2};  // four subgroups of 64×64
  if (forced == "128x64") return {128, 64, 4, 2};
  if (forced == "64x128") return {64, 128, 2, 4};
  if (forced == "64x64") return {64, 64, 2, 2};
  if (forced != "auto") throw Error(ErrorKind::invalid_argument, cat("RLX_VULKAN_COOP_TILE=", forced, ": choose auto, 128x128, 128x128w4, 128x64, 64x128 or 64x64"));
  auto count = [&](int64_t bm, int64_t bn) { return ((p.m + bm - 1) / bm) * ((p.n + bn - 1) / bn) * p.batch; };
  // (on the H200, MiniLM's 4096×384 products ran faster as 96 tiles of 128×128 than as 384 of
  // 64×64: the bigger tile reads each operand half as often)
  if (count(128, 128) >= 96) return {128, 128, 2, 4};
  if (count(64, 128) >= 96) return {64, 128, 2, 4};
  return {64, 64, 2, 2};
}

// The result of row m, column n, as the product defines it (unscaled back where staged).
std::string scaled_function(const HalfOperands& h) {
  if (!h.scaled) return "float rlx_scaled(uint bz, uint m, uint n, float v) { return v; }\n";
  return cat("float rlx_scaled(uint bz, uint m, uint n, float v) { return v * sa_[p.o_sa + bz * ", h.scale_rows_a, "u + m] * sb_[p.o_sb + bz * ", h.scale_rows_b,
             "u + n]; }\n");
}

}  // namespace

int64_t coop_split(const MatmulProblem& p) {
  // too few tiles to fill the GPU and a long contraction: each tile's slices over several
  // workgroups (at least 32 slices each), about 264 workgroups in all. On the H200 the merge
  // (a launch) cost more than splitting saved below 64 slices (Qwen3's 512-row prefill).
  const TileShape s = tile_shape(p);
  const int64_t tiles = ((p.m + s.bm - 1) / s.bm) * ((p.n + s.bn - 1) / s.bn) * p.batch, slices = (p.k + 31) / 32;
  if (tiles >= 132 || slices < 64) return 1;
  return std::max<int64_t>(1, std::min((264 + tiles - 1) / tiles, slices / 32));
}

Launch matmul_coop_merge(Shader sh, const MatmulProblem& p, const HalfOperands& h) {
  sh.raw_buffer("part", "float");
  sh.push("n");
  sh.local_size(256);
  const int64_t outs = p.batch * p.m * (p.paired ? p.n / 2 : p.n), plane = p.batch * p.m * p.n;
  const std::string sum = cat("float rlx_sum(uint at) {\n  float v = 0.0;\n  for (uint s = 0u; s < ", h.split, "u; ++s) v += part_[p.o_part + s * ", plane,
                              "u + at];\n  return v;\n}\n");
  std::string body = p.paired ? cat("  uint c = i % ", p.n / 2, "u, m = (i / ", p.n / 2, "u) % ", p.m, "u, bz = i / ", p.m * p.n / 2, "u, at = (bz * ", p.m, "u + m) * ", p.n,
                                    "u + 2u * c;\n", "  rlx_out(bz, m, c, rlx_scaled(bz, m, 2u * c, rlx_sum(at)), rlx_scaled(bz, m, 2u * c + 1u, rlx_sum(at + 1u)));\n")
                              : cat("  uint n = i % ", p.n, "u, m = (i / ", p.n, "u) % ", p.m, "u, bz = i / ", p.m * p.n, "u;\n",
                                    "  rlx_out(bz, m, n, rlx_scaled(bz, m, n, rlx_sum(i)), 0.0);\n");
  Launch l;
  l.name = "matmul-coopmat-merge";
  l.source = sh.source(p.functions + out_function(p) + scaled_function(h) + sum + cat("void main() {\n  uint i = rlx_flat();\n  if (i >= p.n) return;\n", body, "}\n"));
  l.words = {static_cast<uint32_t>(outs)};
  l.push_bytes = sh.push_bytes();
  l.groups = grid_for(outs, 256);
  return l;
}

int64_t coop_tile_m(const MatmulProblem& p) { return tile_shape(p).bm; }
int64_t coop_tile_n(const MatmulProblem& p) { return tile_shape(p).bn; }

bool coop_tiles_fit(const MatmulProblem& p, const Features& f) {
  return f.coopmat && f.subgroup_arithmetic && f.coop_k % 8 == 0 && f.coop_n % 8 == 0 && 32 % f.coop_k == 0 && 32 % f.coop_m == 0 && 16 % f.coop_n == 0 &&
         p.m >= 64 && p.n >= 64 && p.k >= 32 && p.batch <= 65535 && !p.prepare;
}

Launch matmul_coop_tiles(Shader sh, const MatmulProblem& p, const Features& f, const HalfOperands& h) {
  if (h.a_ld % 8 || h.b_ld % 8 || h.a_batch % 8 || h.b_batch % 8 || p.k % 8)
    throw Error(ErrorKind::internal, "vulkan: tensor-core tiles need operand rows of whole 16-byte units");
  const TileShape s = tile_shape(p);
  const int64_t CM = f.coop_m, CN = f.coop_n, CK = f.coop_k;
  const int64_t wm = s.bm / s.sgm, wn = s.bn / s.sgn, fm = wm / CM, fn = wn / CN, T = s.threads();
  // shared strides in uvec4 units: a row of 32 halves is 4 units, padded to 5 (ldmatrix rows
  // then fall in different banks); [k][n] slices of b are bn / 8 units, padded by one
  const int64_t SA = 5, SBN = s.bn / 8 + 1;
  const int64_t a_units = s.bm * SA, b_units = h.b_k_major ? s.bn * SA : 32 * SBN;
  const int64_t a_vec = s.bm * 4 / T, b_vec = s.bn * 4 / T;  // 16-byte loads a thread per slice
  const int64_t SC = wn / 4 + 1, c_units = CM * SC;             // the epilogue's rows (floats, as uvec4)
  const int64_t smem = std::max(2 * (a_units + b_units), s.sgm * s.sgn * c_units);
  if (smem * 16 > f.max_shared_bytes && f.max_shared_bytes)
    throw Error(ErrorKind::internal, cat("vulkan: tensor-core tiles need ", smem * 16, " bytes of shared memory"));
  sh.extension("GL_NV_cooperative_matrix");
  sh.extension("GL_KHR_memory_scope_semantics");
  sh.extension("GL_EXT_shader_explicit_arithmetic_types_float16");
  sh.extension("GL_KHR_shader_subgroup_basic");
  sh.local_size(static_cast<uint32_t>(T));
  const std::string A = cat("fcoopmatNV<16, gl_ScopeSubgroup, ", CM, ", ", CK, ">"), B = cat("fcoopmatNV<16, gl_ScopeSubgroup, ", CK, ", ", CN, ">"),
                    C = cat("fcoopmatNV<32, gl_ScopeSubgroup, ", CM, ", ", CN, ">");
  const std::string a_off = cat(2 * b_units, "u + buf * ", a_units, "u"), b_off = cat("buf * ", b_units, "u");
  std::string s_;  // the body
  s_ += cat("shared uvec4 sm_[", smem, "];\n");
  // one slice's global loads into registers: a row by row (k contiguous), b as it is laid out
  s_ += cat("uvec4 ra[", a_vec, "], rb[", b_vec, "];\n");
  s_ += cat("void load(uint bz, uint m0, uint n0, uint k0, uint t) {\n", "  for (uint i = 0u; i < ", a_vec, "u; ++i) {\n", "    uint e = t + i * ", T,
            "u, r = e / 4u, c = e % 4u, m = m0 + r, k = k0 + 8u * c;\n", "    ra[i] = (m < ", p.m, "u && k < ", p.k, "u) ? a16_[p.o_a16 + (bz * ", h.a_batch, "u + m * ",
            h.a_ld, "u + k) / 8u] : uvec4(0u);\n  }\n", "  for (uint i = 0u; i < ", b_vec, "u; ++i) {\n", "    uint e = t + i * ", T, "u;\n");
  if (h.b_k_major)
    s_ += cat("    uint r = e / 4u, c = e % 4u, n = n0 + r, k = k0 + 8u * c;\n", "    rb[i] = (n < ", p.n, "u && k < ", p.k, "u) ? b16_[p.o_b16 + (bz * ", h.b_batch,
              "u + n * ", h.b_ld, "u + k) / 8u] : uvec4(0u);\n  }\n}\n");
  else
    s_ += cat("    uint r = e / ", s.bn / 8, "u, c = e % ", s.bn / 8, "u, n = n0 + 8u * c, k = k0 + r;\n", "    rb[i] = (n < ", p.n, "u && k < ", p.k, "u) ? b16_[p.o_b16 + (bz * ",
              h.b_batch, "u + k * ", h.b_ld, "u + n) / 8u] : uvec4(0u);\n  }\n}\n");
  s_ += cat("void store(uint buf, uint t) {\n", "  for (uint i = 0u; i < ", a_vec, "u; ++i) { uint e = t + i * ", T, "u; sm_[", a_off, " + (e / 4u) * ", SA,
            "u + e % 4u] = ra[i]; }\n", "  for (uint i = 0u; i < ", b_vec, "u; ++i) { uint e = t + i * ", T, "u; sm_[", b_off, " + ",
            h.b_k_major ? cat("(e / 4u) * ", SA, "u + e % 4u") : cat("(e / ", s.bn / 8, "u) * ", SBN, "u + e % ", s.bn / 8, "u"), "] = rb[i]; }\n}\n");
  s_ += scaled_function(h);
  // split: this workgroup's share of the slices, its partial sums to part_ (merged by
  // matmul_coop_merge)
  const int64_t slices = (p.k + 31) / 32, per = (slices + h.split - 1) / h.split;
  if (h.split > 1) sh.raw_buffer("part", "float", Access::write);
  s_ += "void main() {\n";
  s_ += cat("  uint n0 = gl_WorkGroupID.x * ", s.bn, "u, m0 = gl_WorkGroupID.y * ", s.bm, "u, bz = gl_WorkGroupID.z % ", p.batch, "u, ks = gl_WorkGroupID.z / ", p.batch, "u;\n",
            "  uint s0 = ks * ", per, "u, s1 = min(s0 + ", per, "u, ", slices, "u);\n",
            "  uint t = gl_LocalInvocationID.x, sg = t / 32u, lane = t % 32u;\n", "  uint wm = (sg / ", s.sgn, "u) * ", wm, "u, wn = (sg % ", s.sgn, "u) * ", wn, "u;\n");
  for (int64_t i = 0; i < fm; ++i)
    for (int64_t j = 0; j < fn; ++j) s_ += cat("  ", C, " acc", i, "_", j, " = ", C, "(0.0);\n");
  s_ += cat("  load(bz, m0, n0, s0 * 32u, t);\n  store(0u, t);\n  barrier();\n", "  for (uint s = s0; s < s1; ++s) {\n", "    uint buf = (s - s0) & 1u;\n",
            "    if (s + 1u < s1) load(bz, m0, n0, (s + 1u) * 32u, t);\n", "    for (uint kk = 0u; kk < 32u; kk += ", CK, "u) {\n");
  for (int64_t i = 0; i < fm; ++i)
    s_ += cat("      ", A, " a", i, ";\n      coopMatLoadNV(a", i, ", sm_, ", a_off, " + (wm + ", i * CM, "u) * ", SA, "u + kk / 8u, ", SA, "u, false);\n");
  for (int64_t j = 0; j < fn; ++j)
    s_ += h.b_k_major ? cat("      ", B, " b", j, ";\n      coopMatLoadNV(b", j, ", sm_, ", b_off, " + (wn + ", j * CN, "u) * ", SA, "u + kk / 8u, ", SA, "u, true);\n")
                      : cat("      ", B, " b", j, ";\n      coopMatLoadNV(b", j, ", sm_, ", b_off, " + kk * ", SBN, "u + (wn + ", j * CN, "u) / 8u, ", SBN, "u, false);\n");
  for (int64_t i = 0; i < fm; ++i)
    for (int64_t j = 0; j < fn; ++j) s_ += cat("      acc", i, "_", j, " = coopMatMulAddNV(a", i, ", b", j, ", acc", i, "_", j, ");\n");
  s_ += cat("    }\n", "    if (s + 1u < s1) store(buf ^ 1u, t);\n    barrier();\n  }\n");
  // epilogue: each fragment row of the subgroup's accumulators through its shared rows
  s_ += cat("  uint cs = sg * ", c_units, "u;\n");
  for (int64_t i = 0; i < fm; ++i) {
    for (int64_t j = 0; j < fn; ++j) s_ += cat("  coopMatStoreNV(acc", i, "_", j, ", sm_, cs + ", j * CN / 4, "u, ", SC, "u, false);\n");
    s_ += "  subgroupMemoryBarrierShared();\n  subgroupBarrier();\n";
    const std::string at = "uintBitsToFloat(sm_[cs + r * " + std::to_string(SC) + "u + c / 4u][c % 4u])";
    if (h.split > 1)
      s_ += cat("  for (uint e = lane; e < ", CM * wn, "u; e += 32u) {\n", "    uint r = e / ", wn, "u, c = e % ", wn, "u, m = m0 + wm + ", i * CM, "u + r, n = n0 + wn + c;\n",
                "    if (m < ", p.m, "u && n < ", p.n, "u) part_[p.o_part + ((ks * ", p.batch, "u + bz) * ", p.m, "u + m) * ", p.n, "u + n] = ", at, ";\n  }\n");
    else if (p.paired)
      s_ += cat("  for (uint e = lane; e < ", CM * wn / 2, "u; e += 32u) {\n", "    uint r = e / ", wn / 2, "u, c = 2u * (e % ", wn / 2, "u), m = m0 + wm + ", i * CM,
                "u + r, n = n0 + wn + c;\n", "    if (m < ", p.m, "u && n < ", p.n, "u) {\n", "      float v0 = ", at, ";\n      c += 1u;\n      float v1 = ", at, ";\n",
                "      rlx_out(bz, m, n / 2u, rlx_scaled(bz, m, n, v0), rlx_scaled(bz, m, n + 1u, v1));\n    }\n  }\n");
    else
      s_ += cat("  for (uint e = lane; e < ", CM * wn, "u; e += 32u) {\n", "    uint r = e / ", wn, "u, c = e % ", wn, "u, m = m0 + wm + ", i * CM, "u + r, n = n0 + wn + c;\n",
                "    if (m < ", p.m, "u && n < ", p.n, "u) rlx_out(bz, m, n, rlx_scaled(bz, m, n, ", at, "), 0.0);\n  }\n");
    s_ += "  subgroupBarrier();\n";
  }
  s_ += "}\n";
  Launch l;
  l.name = cat("matmul-coopmat", s.bm, "x", s.bn, h.scaled ? "-staged" : "", h.split > 1 ? cat("-split", h.split) : std::string());
  l.source = sh.source(p.functions + out_function(p) + s_);
  l.groups = {static_cast<uint32_t>((p.n + s.bn - 1) / s.bn), static_cast<uint32_t>((p.m + s.bm - 1) / s.bm), static_cast<uint32_t>(p.batch * h.split)};
  l.push_bytes = sh.push_bytes();
  return l;
}

}  // namespace rlx::backends::vulkan
