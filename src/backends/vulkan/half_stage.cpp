// An operand of a tensor-core product staged as f16 rows: for each row r of each batch, the
// values v(bz, r, k) times a power of two that brings the row's largest magnitude into
// [2^14, 2^15) — bf16 (8 significant bits) then lands in f16 (11) exactly, whatever its
// exponent, and an f16 product of two staged rows divided by both scales is the product of the
// originals — rounded to f16 (nearest even) into zero-padded rows of `cols` halves, with the
// scale's inverse beside. A workgroup of 256 a row (a prefill's activations are a few hundred
// rows): a pass for the largest magnitude, a pass to convert.
#include <algorithm>

#include "backends/vulkan/context.h"
#include "backends/vulkan/kernels.h"
#include "backends/vulkan/shader.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::backends::vulkan {

std::string half_shift_function() {
  return "int rlx_shift(float m) {\n  int e = 0;\n  if (m > 0.0 && !isinf(m) && !isnan(m)) { frexp(m, e); return clamp(15 - e, -100, 100); }\n  return 0;\n}\n";
}

Launch half_stage(Shader sh, const HalfStage& s) {
  if (s.cols % 8 || s.rows_padded < s.rows || s.cols < s.k)
    throw Error(ErrorKind::internal, "vulkan: half staging needs padded rows of whole 16-byte units");
  if (s.batch > 65535 || s.rows_padded > int64_t{65535} * 65535)
    throw Error(ErrorKind::unsupported, cat("vulkan: staging ", s.batch, " × ", s.rows, " rows exceeds the grid"));
  sh.extension("GL_KHR_shader_subgroup_arithmetic");
  sh.raw_buffer("h", "uint", Access::write);
  sh.raw_buffer("sc", "float", Access::write);
  sh.local_size(256);
  const std::string v = s.loader;
  Launch l;
  l.name = "stage-f16";
  l.source = sh.source(s.functions + half_shift_function() + cat(
      "shared float rlx_part[8];\n", "void main() {\n", "  uint t = gl_LocalInvocationID.x, r = gl_WorkGroupID.y * 65535u + gl_WorkGroupID.x, bz = gl_WorkGroupID.z;\n",
      "  if (r >= ", s.rows_padded, "u) return;  // the whole workgroup\n",
      s.prepare ? "  rlx_prepare(r, 1u, t, 256u);\n  barrier();\n" : "", "  bool live = r < ", s.rows, "u;\n", "  float amax = 0.0;\n",
      "  if (live) for (uint k = t; k < ", s.k, "u; k += 256u) amax = max(amax, abs(", v, "(bz, r, k)));\n", "  amax = subgroupMax(amax);\n",
      "  if (t % 32u == 0u) rlx_part[t / 32u] = amax;\n", "  barrier();\n", "  for (uint g = 0u; g < 8u; ++g) amax = max(amax, rlx_part[g]);\n", "  int sh = rlx_shift(amax);\n",
      "  if (t == 0u) sc_[p.o_sc + bz * ", s.rows_padded, "u + r] = ldexp(1.0, -sh);\n", "  uint at = p.o_h + (bz * ", s.rows_padded, "u + r) * ", s.cols / 2, "u;\n",
      "  for (uint q = t; q < ", s.cols / 2, "u; q += 256u) {\n", "    uint k = 2u * q;\n", "    float v0 = (live && k < ", s.k, "u) ? ldexp(", v, "(bz, r, k), sh) : 0.0;\n",
      "    float v1 = (live && k + 1u < ", s.k, "u) ? ldexp(", v, "(bz, r, k + 1u), sh) : 0.0;\n", "    h_[at + q] = rlx_f2h(v0) | (rlx_f2h(v1) << 16);\n", "  }\n}\n"));
  l.groups = {static_cast<uint32_t>(std::min<int64_t>(s.rows_padded, 65535)), static_cast<uint32_t>((s.rows_padded + 65534) / 65535), static_cast<uint32_t>(s.batch)};
  l.push_bytes = sh.push_bytes();
  return l;
}

}  // namespace rlx::backends::vulkan
