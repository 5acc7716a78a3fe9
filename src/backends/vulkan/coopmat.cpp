// Tensor-core products through cooperative matrices (VK_NV_cooperative_matrix, as NVIDIA's
// driver offers them; glslang here predates the KHR extension's GLSL): f16 operands, f32
// accumulation. A workgroup of four 32-wide subgroups computes a 64×64 tile: 32-deep slices of
// both operands are staged in shared memory as f16 (through the problem's loaders, so any
// layout or packed f16 weight works), each subgroup multiplies its 32×32 quadrant fragment by
// fragment, and the accumulators go out through shared memory to the typed store (ragged edges
// and the output dtype's rounding).
#include "backends/vulkan/context.h"
#include "backends/vulkan/kernels.h"
#include "backends/vulkan/shader.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::backends::vulkan {

namespace {

// What both tensor-core schedules print alike: the extensions, four 32-wide subgroups, the
// fragment types and each subgroup's 32×32 quadrant of accumulators (declared, multiplied,
// stored to the shared tile Cs with row stride `sc`).
struct Fragments {
  std::string A, B, C, decl, mul, store;
  uint32_t fm = 0, fn = 0;
};
Fragments fragments(Shader& sh, const Features& f, int sc, const std::string& indent) {
  const uint32_t CM = f.coop_m, CN = f.coop_n, CK = f.coop_k;
  sh.extension("GL_NV_cooperative_matrix");
  sh.extension("GL_KHR_memory_scope_semantics");
  sh.extension("GL_EXT_shader_explicit_arithmetic_types_float16");
  sh.local_size(128);
  Fragments g;
  g.A = cat("fcoopmatNV<16, gl_ScopeSubgroup, ", CM, ", ", CK, ">");
  g.B = cat("fcoopmatNV<16, gl_ScopeSubgroup, ", CK, ", ", CN, ">");
  g.C = cat("fcoopmatNV<32, gl_ScopeSubgroup, ", CM, ", ", CN, ">");
  g.fm = 32 / CM, g.fn = 32 / CN;
  for (uint32_t i = 0; i < g.fm; ++i)
    for (uint32_t j = 0; j < g.fn; ++j) {
      g.decl += cat("  ", g.C, " acc", i, "_", j, " = ", g.C, "(0.0);\n");
      g.mul += cat(indent, "acc", i, "_", j, " = coopMatMulAddNV(a", i, ", b", j, ", acc", i, "_", j, ");\n");
      g.store += cat("  coopMatStoreNV(acc", i, "_", j, ", Cs, (sm + ", i * CM, "u) * ", sc, "u + sn + ", j * CN, "u, ", sc, "u, false);\n");
    }
  return g;
}

}  // namespace

bool coopmat_fits(const MatmulProblem& p, DType a, DType b, const Features& f) {
  return f.coopmat && a == DType::f16 && b == DType::f16 && p.m >= 64 && p.n >= 64 && p.batch <= 65535;
}

Launch matmul_coop(Shader sh, const MatmulProblem& p, const Features& f) {
  const uint32_t CM = f.coop_m, CN = f.coop_n, CK = f.coop_k;
  constexpr int SA = 40, SB = 72, SC = 68;  // shared strides (elements), multiples of 16 bytes
  const Fragments g = fragments(sh, f, SC, "      ");
  std::string loads;
  for (uint32_t i = 0; i < g.fm; ++i) loads += cat("      ", g.A, " a", i, ";\n      coopMatLoadNV(a", i, ", As, (sm + ", i * CM, "u) * ", SA, "u + kk, ", SA, "u, false);\n");
  for (uint32_t j = 0; j < g.fn; ++j) loads += cat("      ", g.B, " b", j, ";\n      coopMatLoadNV(b", j, ", Bs, kk * ", SB, "u + sn + ", j * CN, "u, ", SB, "u, false);\n");
  auto split = [](bool k_fast, const char* kname, const char* row) {
    return k_fast ? cat("uint ", kname, " = e % 32u, ", row, " = e / 32u;") : cat("uint ", kname, " = e / 64u, ", row, " = e % 64u;");
  };
  Launch l;
  l.name = "matmul-coopmat";
  l.source = sh.source(p.functions + out_function(p) + cat(
      "shared float16_t As[", 64 * SA, "];\nshared float16_t Bs[", 32 * SB, "];\nshared float Cs[", 64 * SC, "];\n", "void main() {\n",
      "  uint n0 = gl_WorkGroupID.x * 64u, m0 = gl_WorkGroupID.y * 64u, bz = gl_WorkGroupID.z;\n",
      "  uint t = gl_LocalInvocationID.x, sg = t / 32u, sm = (sg / 2u) * 32u, sn = (sg % 2u) * 32u;\n",
      p.prepare ? "  rlx_prepare(m0, 64u, t, 128u);\n  barrier();\n" : "", g.decl, "  for (uint k0 = 0u; k0 < ", p.k,
      "u; k0 += 32u) {\n", "    for (uint e = t; e < 2048u; e += 128u) {\n      ", split(p.a_k_contiguous, "ka", "mm"), "\n      uint m = m0 + mm, k = k0 + ka;\n",
      "      As[mm * ", SA, "u + ka] = float16_t((m < ", p.m, "u && k < ", p.k, "u) ? rlx_a(bz, m, k) : 0.0);\n      ", split(p.b_k_contiguous, "kb", "nn"),
      "\n      uint n = n0 + nn;\n      k = k0 + kb;\n", "      Bs[kb * ", SB, "u + nn] = float16_t((n < ", p.n, "u && k < ", p.k, "u) ? rlx_b(bz, n, k) : 0.0);\n",
      "    }\n    barrier();\n", "    for (uint kk = 0u; kk < 32u; kk += ", CK, "u) {\n", loads, g.mul, "    }\n    barrier();\n  }\n", g.store, "  barrier();\n",
      p.paired ? cat("  for (uint e = t; e < 2048u; e += 128u) {\n", "    uint mm = e / 32u, nn = (e % 32u) * 2u, m = m0 + mm, n = n0 + nn;\n", "    if (m < ", p.m,
                     "u && n < ", p.n, "u) rlx_out(bz, m, n / 2u, Cs[mm * ", SC, "u + nn], Cs[mm * ", SC, "u + nn + 1u]);\n  }\n}\n")
               : cat("  for (uint e = t; e < 4096u; e += 128u) {\n", "    uint mm = e / 64u, nn = e % 64u, m = m0 + mm, n = n0 + nn;\n", "    if (m < ", p.m,
                     "u && n < ", p.n, "u) rlx_out(bz, m, n, Cs[mm * ", SC, "u + nn], 0.0);\n  }\n}\n")));
  l.groups = {static_cast<uint32_t>((p.n + 63) / 64), static_cast<uint32_t>((p.m + 63) / 64), static_cast<uint32_t>(p.batch)};
  l.push_bytes = sh.push_bytes();
  return l;
}

}  // namespace rlx::backends::vulkan
