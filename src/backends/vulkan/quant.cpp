// dequantize: GGUF blocks decoded per element — q8_0, q4_0, q4_k, q6_k and the f16/bf16
// passthroughs — with the arithmetic of util/gguf_blocks.h (the same products in the same
// order), so a packed weight reads the same on every device. Each decoder is a GLSL function of
// (the row's first byte, the element's index in the row), which a matmul kernel can call in
// place of a load.
#include "backends/vulkan/context.h"
#include "backends/vulkan/kernels.h"
#include "backends/vulkan/shader.h"
#include "rlx/error.h"
#include "util/quant_blocks.h"
#include "util/strings.h"

namespace rlx::backends::vulkan {

namespace {

constexpr uint32_t kThreads = 256;

// GLSL for block type `type` over the u8 buffer `w`: float rlx_dq(uint row, uint k).
std::string decoder(const std::string& type) {
  std::string s =
      "uint rlx_b(uint at) { return uint(w_[p.o_w + at]); }\n"
      "uint rlx_u16(uint at) { return rlx_b(at) | (rlx_b(at + 1u) << 8); }\n"
      "float rlx_h(uint at) { return rlx_h2f(rlx_u16(at)); }\n"
      "int rlx_s8(uint v) { return int(v) - int((v & 128u) << 1); }\n";
  if (type == "f16") return s + "float rlx_dq(uint row, uint k) { return rlx_h(row + 2u * k); }\n";
  if (type == "bf16") return s + "float rlx_dq(uint row, uint k) { return rlx_bf2f(rlx_u16(row + 2u * k)); }\n";
  if (type == "q8_0")
    return s + "float rlx_dq(uint row, uint k) {\n  uint b = row + (k / 32u) * 34u;\n  return float(rlx_s8(rlx_b(b + 2u + k % 32u))) * rlx_h(b);\n}\n";
  if (type == "q4_0")
    return s + "float rlx_dq(uint row, uint k) {\n  uint b = row + (k / 32u) * 18u, j = k % 32u, q = rlx_b(b + 2u + j % 16u);\n"
               "  return float(int(j < 16u ? (q & 15u) : (q >> 4)) - 8) * rlx_h(b);\n}\n";
  if (type == "q4_k")
    return s + R"(float rlx_dq(uint row, uint k) {
  uint b = row + (k / 256u) * 144u, j = k % 256u, chunk = j / 64u, hi = (j % 64u) / 32u, l = j % 32u, is = 2u * chunk + hi;
  uint sc, mn;
  if (is < 4u) { sc = rlx_b(b + 4u + is) & 63u; mn = rlx_b(b + 8u + is) & 63u; }
  else {
    sc = (rlx_b(b + 8u + is) & 15u) | ((rlx_b(b + is) >> 6) << 4);
    mn = (rlx_b(b + 8u + is) >> 4) | ((rlx_b(b + 4u + is) >> 6) << 4);
  }
  uint q = rlx_b(b + 16u + 32u * chunk + l);
  float d1 = rlx_h(b) * float(sc), m1 = rlx_h(b + 2u) * float(mn);
  return d1 * float(hi == 0u ? (q & 15u) : (q >> 4)) - m1;
}
)";
  if (type == "q6_k")
    return s + R"(float rlx_dq(uint row, uint k) {
  uint b = row + (k / 256u) * 210u, j = k % 256u, n = j / 128u, r = j % 128u, quarter = r / 32u, l = r % 32u;
  uint ql = b + 64u * n, qh = b + 128u + 32u * n, sc = b + 192u + 8u * n + l / 16u + 2u * quarter;
  uint low = (quarter & 1u) == 0u ? rlx_b(ql + l) : rlx_b(ql + l + 32u);
  low = quarter < 2u ? (low & 15u) : (low >> 4);
  int q = int(low | (((rlx_b(qh + l) >> (2u * quarter)) & 3u) << 4)) - 32;
  return rlx_h(b + 208u) * float(rlx_s8(rlx_b(sc))) * float(q);
}
)";
  throw Error(ErrorKind::internal, cat("vulkan: no decoder for ", type));
}

bool decodable(const std::string& type) {
  return type == "f16" || type == "bf16" || type == "q8_0" || type == "q4_0" || type == "q4_k" || type == "q6_k";
}

}  // namespace

bool claims_quant(ir::Op op, const NodeTypes& t, const ir::Attrs& a, const Features& f) {
  if (op != ir::Op::dequantize || t.in.size() != 1 || t.out.size() != 1) return false;
  return decodable(a.s("type")) && indexable(t.in[0]) && indexable(t.out[0]) && storable(DType::u8, f) && storable(t.out[0].dtype, f);
}

std::vector<Launch> quant_launches(const ir::Node& n, const NodeTypes& t) {
  const std::string& type = n.attrs.s("type");
  const std::vector<int64_t> shape = dims(t.out[0]);
  const int64_t k = shape.back(), total = shape_numel(t.out[0].shape).value();
  const quant::BlockType bt = *quant::block_type_from_name(type);
  const int64_t row_bytes = *quant::row_bytes(bt, k);
  Shader sh;
  sh.buffer("w", DType::u8, Access::read);
  sh.buffer("y", t.out[0].dtype, Access::write);
  sh.push("n");
  sh.local_size(kThreads);
  Launch l;
  l.name = cat("dequantize-", type);
  l.source = sh.source(decoder(type) + cat("void main() {\n  uint i = rlx_flat();\n  if (i >= p.n) return;\n  y_wf(i, rlx_dq((i / ", k, "u) * ", row_bytes,
                                             "u, i % ", k, "u));\n}\n"));
  l.operands = {{Operand::Kind::input, 0}, {Operand::Kind::output, 0}};
  l.words = {static_cast<uint32_t>(total)};
  l.push_bytes = sh.push_bytes();
  l.groups = grid_for(total, kThreads);
  return {l};
}

}  // namespace rlx::backends::vulkan
