// Packed GGUF weights: dequantize, and dequant_matmul reading the packed rows in place. Blocks
// are decoded per element — q8_0, q4_0, q4_k, q6_k and the f16/bf16 passthroughs — with the
// arithmetic of util/gguf_blocks.h (the same products in the same order), so a packed weight
// reads the same on every device; the products are the matmul schedules (MatmulProblem) with
// the decoder as the weight's loader, and for f16/bf16 rows in decode a schedule of 16-byte
// loads (8 weights a lane).
#include "backends/vulkan/context.h"
#include "backends/vulkan/kernels.h"
#include "backends/vulkan/shader.h"
#include "backends/vulkan/target.h"
#include "codegen/dialect_glsl.h"
#include "codegen/scalar.h"
#include "rlx/error.h"
#include "util/quant_blocks.h"
#include "util/strings.h"

namespace rlx::backends::vulkan {

namespace {

constexpr uint32_t kThreads = 256;

// GLSL for block type `type` over the u8 buffer `w`: float rlx_dq(uint row, uint k).
std::string decoder(const std::string& type) {
  std::string s =
      "uint rlx_byte(uint at) { return uint(w_ld(at)); }\n"
      "uint rlx_u16(uint at) { return rlx_byte(at) | (rlx_byte(at + 1u) << 8); }\n"
      "float rlx_h(uint at) { return rlx_h2f(rlx_u16(at)); }\n"
      "int rlx_s8(uint v) { return int(v) - int((v & 128u) << 1); }\n";
  if (type == "f16") return s + "float rlx_dq(uint row, uint k) { return rlx_h(row + 2u * k); }\n";
  if (type == "bf16") return s + "float rlx_dq(uint row, uint k) { return rlx_bf2f(rlx_u16(row + 2u * k)); }\n";
  if (type == "q8_0")
    return s + "float rlx_dq(uint row, uint k) {\n  uint b = row + (k / 32u) * 34u;\n  return float(rlx_s8(rlx_byte(b + 2u + k % 32u))) * rlx_h(b);\n}\n";
  if (type == "q4_0")
    return s + "float rlx_dq(uint row, uint k) {\n  uint b = row + (k / 32u) * 18u, j = k % 32u, q = rlx_byte(b + 2u + j % 16u);\n"
               "  return float(int(j < 16u ? (q & 15u) : (q >> 4)) - 8) * rlx_h(b);\n}\n";
  if (type == "q4_k")
    return s + R"(float rlx_dq(uint row, uint k) {
  uint b = row + (k / 256u) * 144u, j = k % 256u, chunk = j / 64u, hi = (j % 64u) / 32u, l = j % 32u, is = 2u * chunk + hi;
  uint sc, mn;
  if (is < 4u) { sc = rlx_byte(b + 4u + is) & 63u; mn = rlx_byte(b + 8u + is) & 63u; }
  else {
    sc = (rlx_byte(b + 8u + is) & 15u) | ((rlx_byte(b + is) >> 6) << 4);
    mn = (rlx_byte(b + 8u + is) >> 4) | ((rlx_byte(b + 4u + is) >> 6) << 4);
  }
  uint q = rlx_byte(b + 16u + 32u * chunk + l);
  float d1 = rlx_h(b) * float(sc), m1 = rlx_h(b + 2u) * float(mn);
  return d1 * float(hi == 0u ? (q & 15u) : (q >> 4)) - m1;
}
)";
  if (type == "q6_k")
    return s + R"(float rlx_dq(uint row, uint k) {
  uint b = row + (k / 256u) * 210u, j = k % 256u, n = j / 128u, r = j % 128u, quarter = r / 32u, l = r % 32u;
  uint ql = b + 64u * n, qh = b + 128u + 32u * n, sc = b + 192u + 8u * n + l / 16u + 2u * quarter;
  uint low = (quarter & 1u) == 0u ? rlx_byte(ql + l) : rlx_byte(ql + l + 32u);
  low = quarter < 2u ? (low & 15u) : (low >> 4);
  int q = int(low | (((rlx_byte(qh + l) >> (2u * quarter)) & 3u) << 4)) - 32;
  return rlx_h(b + 208u) * float(rlx_s8(rlx_byte(sc))) * float(q);
}
)";
  throw Error(ErrorKind::internal, cat("vulkan: no decoder for ", type));
}

bool decodable(const std::string& type) {
  return type == "f16" || type == "bf16" || type == "q8_0" || type == "q4_0" || type == "q4_k" || type == "q6_k";
}

// x's dtype rounds each decoded weight (the decomposition casts w to x's type first).
std::string rounding(DType x) { return cat("float rlx_round(float w) { return ", round_to(x, "w"), "; }\n"); }

// Decode's product over f16/bf16 rows: 32 lanes a column, each reading 8 weights at a time.
Launch half_rows(Shader sh, const MatmulProblem& p, const std::string& type) {
  const int64_t groups = (p.n + 7) / 8, units = p.k / 8;
  if (groups > 65535) throw Error(ErrorKind::unsupported, cat("vulkan: ", p.n, " columns exceed the grid"));
  const std::string unpack = type == "bf16" ? "w[2 * q] = rlx_round(uintBitsToFloat(u << 16)); w[2 * q + 1] = rlx_round(uintBitsToFloat(u & 0xffff0000u));"
                                            : "vec2 h = unpackHalf2x16(u); w[2 * q] = rlx_round(h.x); w[2 * q + 1] = rlx_round(h.y);";
  sh.local_size(256);
  RowsParts r = rows_parts(sh, p);
  Launch l;
  l.name = cat("dequant-matmul-rows-", type);
  l.source = sh.source(p.functions + r.decls +
                       cat("void main() {\n", r.begin, "  if (col < ", p.n, "u)\n", "    for (uint c = lane; c < ", units, "u; c += 32u) {\n",
                           "      uvec4 v = w4_[p.o_w4 + rlx_row(col) * ", units, "u + c];\n", "      float w[8];\n",
                           "      for (uint q = 0u; q < 4u; ++q) { uint u = v[q]; ", unpack, " }\n", "      for (uint r = 0u; r < ", p.m, "u; ++r)\n",
                           "        for (uint j = 0u; j < 8u; ++j) acc[r] += ", r.x("r", "8u * c + j"), " * w[j];\n    }\n", r.finish, "}\n"));
  l.groups = {static_cast<uint32_t>(groups), 1, 1};
  l.push_bytes = sh.push_bytes();
  return l;
}

bool claims_dequant_matmul(const NodeTypes& t, const ir::Attrs& a, const Features& f) {
  // the product and its fused forms — the RMS norm of x before it (norm_eps), silu(gate) · up
  // (glu), an addend after it; activations rounded to q8 blocks (act=q8) decompose
  if ((a.has("act") && a.s("act") == "q8") || t.out.size() != 1) return false;
  if (!decodable(a.s("type")) || !is_float_class(t.in[0].dtype) || !storable(t.in[0].dtype, f) || !storable(t.out[0].dtype, f)) return false;
  for (const ir::Type& x : t.in)
    if (!indexable(x) || !storable(x.dtype, f)) return false;
  return indexable(t.out[0]);
}

std::vector<Launch> dequant_matmul_launches(const ir::Node& node, const NodeTypes& t) {
  const std::string& type = node.attrs.s("type");
  const int64_t n = node.attrs.i("n"), k = node.attrs.i("k");
  const int64_t rows = shape_numel(t.in[0].shape).value() / k;
  if (rows == 0) return {};
  const int64_t row_bytes = *quant::row_bytes(*quant::block_type_from_name(type), k);
  const bool glu = node.attrs.has("glu"), normed = node.attrs.has("norm_eps"), addend = t.in.size() == 3 && !normed;
  const DType xd = t.in[0].dtype, od = t.out[0].dtype;
  MatmulProblem p;
  p.m = rows, p.n = glu ? 2 * n : n, p.k = k;
  p.a_k_contiguous = p.b_k_contiguous = true;
  p.prepare = normed, p.out = true, p.paired = glu;
  Shader sh;
  sh.buffer("x", xd, Access::read);
  std::vector<Operand> operands = {{Operand::Kind::input, 0}};
  const bool half_path = (type == "bf16" || type == "f16") && k % 8 == 0 && rows <= kMatmulRowsMax;
  if (half_path) {
    sh.raw_buffer("w4", "uvec4");
    operands.push_back({Operand::Kind::input, 1, 16});
  } else {
    sh.buffer("w", DType::u8, Access::read);
    operands.push_back({Operand::Kind::input, 1});
  }
  if (t.in.size() == 3) {
    sh.buffer("e", t.in[2].dtype, Access::read);  // the norm's weight, or the addend
    operands.push_back({Operand::Kind::input, 2});
  }
  sh.buffer("y", od, Access::write);
  operands.push_back({Operand::Kind::output, 0});
  // x as the product reads it: RMS-normalized by rows (rms_norm's decomposition, rounded to
  // x's dtype) when norm_eps is set
  std::string f = rounding(xd);
  if (normed) {
    f += cat("shared float s_inv[128];\nshared float s_part[256];\nuint rlx_m0 = 0u;\n",
             "void rlx_prepare(uint m0, uint rows, uint t, uint threads) {\n  rlx_m0 = m0;\n", "  uint parts = threads / rows, r = t % rows, part = t / rows;\n",
             "  float ss = 0.0;\n  if (part < parts && m0 + r < ", rows, "u)\n    for (uint k = part; k < ", k, "u; k += parts) { float v = x_f((m0 + r) * ", k,
             "u + k); ss += v * v; }\n", "  s_part[t] = ss;\n  barrier();\n", "  if (t < rows) {\n    float s = 0.0;\n",
             "    for (uint q = 0u; q < parts; ++q) s += s_part[q * rows + t];\n", "    s_inv[t] = rlx_rsqrt(s * ", codegen::glsl().literal(1.0 / static_cast<double>(k), codegen::ValueClass::floating),
             " + ", codegen::glsl().literal(static_cast<float>(node.attrs.f("norm_eps")), codegen::ValueClass::floating), ");\n  }\n}\n",
             "float rlx_a(uint bz, uint m, uint k) { return ", round_to(xd, cat("(x_f(m * ", k, "u + k) * s_inv[m - rlx_m0]) * e_f(k)")), "; }\n");
  } else {
    f += cat("float rlx_a(uint bz, uint m, uint k) { return x_f(m * ", k, "u + k); }\n");
  }
  // which packed row a product column reads: glu interleaves gate row c/2 and up row n + c/2
  f += glu ? cat("uint rlx_row(uint c) { return (c % 2u) == 0u ? c / 2u : ", n, "u + c / 2u; }\n") : "uint rlx_row(uint c) { return c; }\n";
  // the result as the decomposition stores it: rounded to out's dtype, then silu(gate) · up and
  // the addend, each rounded again
  std::string v = round_to(od, "v0");
  if (glu) {
    const std::string silu = codegen::print_scalar(codegen::glsl(), codegen::ValueClass::floating, ir::Op::silu, {"g"});
    f += cat("float rlx_glu(float g, float u) { return ", round_to(od, cat(round_to(od, silu), " * u")), "; }\n");
    v = cat("rlx_glu(", round_to(od, "v0"), ", ", round_to(od, "v1"), ")");
  }
  if (addend) v = round_to(od, cat(v, " + e_f(at)"));
  f += cat("void rlx_out(uint bz, uint m, uint c, float v0, float v1) {\n  uint at = m * ", n, "u + c;\n  y_wf(at, ", v, ");\n}\n");
  Launch l;
  if (half_path) {
    p.functions = f;
    l = half_rows(sh, p, type);
  } else {
    p.functions = f + decoder(type) + cat("float rlx_b(uint bz, uint c, uint k) { return rlx_round(rlx_dq(rlx_row(c) * ", row_bytes, "u, k)); }\n");
    const Features& feat = current_target().features;
    l = type == "f16" && coopmat_fits(p, xd, DType::f16, feat) ? matmul_coop(sh, p, feat) : rows <= kMatmulRowsMax ? matmul_rows(sh, p) : matmul_tiles(sh, p);
    l.name = cat("dequant-", l.name, "-", type);
  }
  if (glu) l.name += "-glu";
  if (normed) l.name += "-norm";
  l.operands = operands;
  return {l};
}

}  // namespace

bool claims_quant(ir::Op op, const NodeTypes& t, const ir::Attrs& a, const Features& f) {
  if (op == ir::Op::dequant_matmul) return claims_dequant_matmul(t, a, f);
  if (op != ir::Op::dequantize || t.in.size() != 1 || t.out.size() != 1) return false;
  return decodable(a.s("type")) && indexable(t.in[0]) && indexable(t.out[0]) && storable(DType::u8, f) && storable(t.out[0].dtype, f);
}

std::vector<Launch> quant_launches(const ir::Node& n, const NodeTypes& t) {
  if (n.op == ir::Op::dequant_matmul) return dequant_matmul_launches(n, t);
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
