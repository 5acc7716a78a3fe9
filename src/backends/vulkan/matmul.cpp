// dot_general with any batch and contracting dims: each operand's batch, free and contracting
// dims collapse to one index each (addressed through offset functions printed per shape), the
// output is [batch, lhs free, rhs free] as the op defines it. Two schedules:
//  - rows: few lhs rows (decode's matrix-vector products) — a workgroup per (batch, column)
//    reads the column's contracting run once for every row, lanes strided over it, then a tree;
//  - tiles: 64×64 output tiles per workgroup, 16-deep slices of both operands staged in shared
//    memory (loaded along whichever of the two dims is contiguous), a 4×4 block per invocation.
// Floats accumulate in f32, integers in wrapping 64-bit.
#include "backends/vulkan/context.h"
#include "backends/vulkan/kernels.h"
#include "backends/vulkan/shader.h"
#include "codegen/index_map.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::backends::vulkan {

namespace {

constexpr int64_t kRowsMax = 8;  // lhs rows from which the tiled schedule takes over

bool contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

struct Problem {
  int64_t batch = 1, m = 1, n = 1, k = 1;
  std::string functions;  // a_b a_m a_k b_b b_n b_k
  bool a_k_contiguous = false, b_k_contiguous = false;
};

Problem problem(const ir::Node& node, const NodeTypes& t) {
  const std::vector<int64_t> as = dims(t.in[0]), bs = dims(t.in[1]);
  const std::vector<int64_t> ac = contiguous_strides(as), bc = contiguous_strides(bs);
  const ir::Intss& batch = node.attrs.intss("batch");
  const ir::Intss& contract = node.attrs.intss("contract");
  auto norm = [](const std::vector<int64_t>& v, size_t rank) {
    std::vector<int64_t> r;
    for (int64_t x : v) r.push_back(codegen::normalize_axis(x, rank));
    return r;
  };
  const std::vector<int64_t> lb = norm(batch[0], as.size()), rb = norm(batch[1], bs.size());
  const std::vector<int64_t> lc = norm(contract[0], as.size()), rc = norm(contract[1], bs.size());
  std::vector<int64_t> bshape, abs_, bbs, kshape, aks, bks, mshape, ams, nshape, bns;
  for (size_t i = 0; i < lb.size(); ++i) bshape.push_back(as[lb[i]]), abs_.push_back(ac[lb[i]]), bbs.push_back(bc[rb[i]]);
  for (size_t i = 0; i < lc.size(); ++i) kshape.push_back(as[lc[i]]), aks.push_back(ac[lc[i]]), bks.push_back(bc[rc[i]]);
  for (size_t d = 0; d < as.size(); ++d)
    if (!contains(lb, d) && !contains(lc, d)) mshape.push_back(as[d]), ams.push_back(ac[d]);
  for (size_t d = 0; d < bs.size(); ++d)
    if (!contains(rb, d) && !contains(rc, d)) nshape.push_back(bs[d]), bns.push_back(bc[d]);
  Problem p;
  for (int64_t d : bshape) p.batch *= d;
  for (int64_t d : mshape) p.m *= d;
  for (int64_t d : nshape) p.n *= d;
  for (int64_t d : kshape) p.k *= d;
  codegen::collapse_dims(bshape, {&abs_, &bbs});
  codegen::collapse_dims(kshape, {&aks, &bks});
  codegen::collapse_dims(mshape, {&ams});
  codegen::collapse_dims(nshape, {&bns});
  p.a_k_contiguous = kshape.size() == 1 && aks[0] == 1;
  p.b_k_contiguous = kshape.size() == 1 && bks[0] == 1;
  p.functions = offset_function("a_b", bshape, abs_) + offset_function("a_m", mshape, ams) + offset_function("a_k", kshape, aks) +
                offset_function("b_b", bshape, bbs) + offset_function("b_n", nshape, bns) + offset_function("b_k", kshape, bks);
  return p;
}

Shader operands(const NodeTypes& t) {
  Shader sh;
  sh.buffer("a", t.in[0].dtype, Access::read);
  sh.buffer("b", t.in[1].dtype, Access::read);
  sh.buffer("y", t.out[0].dtype, Access::write);
  return sh;
}

Launch rows_launch(const Problem& p, const NodeTypes& t, bool fl) {
  const std::string T = fl ? "float" : "int64_t", c = fl ? "f" : "i", zero = fl ? "0.0" : "0l";
  const int64_t rows = p.m;
  Shader sh = operands(t);
  sh.local_size(256);
  std::string body = p.functions + cat("shared ", T, " s_acc[", rows, "][256];\n", "void main() {\n",
                                       "  uint col = gl_WorkGroupID.x, bz = gl_WorkGroupID.y, t = gl_LocalInvocationID.x;\n",
                                       "  uint ab = a_b(bz), bb = b_b(bz) + b_n(col);\n", "  ", T, " acc[", rows, "];\n",
                                       "  for (uint r = 0u; r < ", rows, "u; ++r) acc[r] = ", zero, ";\n", "  for (uint k = t; k < ", p.k, "u; k += 256u) {\n",
                                       "    ", T, " w = b_", c, "(bb + b_k(k));\n    uint ak = a_k(k);\n",
                                       "    for (uint r = 0u; r < ", rows, "u; ++r) acc[r] += a_", c, "(ab + a_m(r) + ak) * w;\n  }\n",
                                       "  for (uint r = 0u; r < ", rows, "u; ++r) s_acc[r][t] = acc[r];\n  barrier();\n",
                                       "  for (uint s = 128u; s > 0u; s >>= 1) {\n    if (t < s)\n      for (uint r = 0u; r < ", rows,
                                       "u; ++r) s_acc[r][t] += s_acc[r][t + s];\n    barrier();\n  }\n",
                                       "  if (t == 0u)\n    for (uint r = 0u; r < ", rows, "u; ++r) y_w", c, "((bz * ", p.m, "u + r) * ", p.n,
                                       "u + col, s_acc[r][0]);\n}\n");
  Launch l;
  l.name = "matmul-rows";
  l.source = sh.source(body);
  l.groups = {static_cast<uint32_t>(p.n), static_cast<uint32_t>(p.batch), 1};
  l.push_bytes = sh.push_bytes();
  return l;
}

Launch tiles_launch(const Problem& p, const NodeTypes& t, bool fl) {
  const std::string T = fl ? "float" : "int64_t", c = fl ? "f" : "i", zero = fl ? "0.0" : "0l";
  Shader sh = operands(t);
  sh.local_size(256);
  // a tile element e of 64×16: along k first when k is the contiguous dim
  auto split = [](bool k_fast, const char* kname, const char* row) {
    return k_fast ? cat("uint ", kname, " = e % 16u, ", row, " = e / 16u;") : cat("uint ", kname, " = e / 64u, ", row, " = e % 64u;");
  };
  std::string body = p.functions + cat("shared ", T, " As[16][65];\nshared ", T, " Bs[16][65];\n", "void main() {\n",
                                       "  uint n0 = gl_WorkGroupID.x * 64u, m0 = gl_WorkGroupID.y * 64u, bz = gl_WorkGroupID.z;\n",
                                       "  uint t = gl_LocalInvocationID.x, tx = t % 16u, ty = t / 16u;\n", "  uint ab = a_b(bz), bb = b_b(bz);\n", "  ", T,
                                       " acc[4][4];\n", "  for (uint i = 0u; i < 4u; ++i) for (uint j = 0u; j < 4u; ++j) acc[i][j] = ", zero, ";\n",
                                       "  for (uint k0 = 0u; k0 < ", p.k, "u; k0 += 16u) {\n", "    for (uint e = t; e < 1024u; e += 256u) {\n      ",
                                       split(p.a_k_contiguous, "kk", "mm"), "\n      uint m = m0 + mm, k = k0 + kk;\n", "      As[kk][mm] = (m < ", p.m, "u && k < ", p.k,
                                       "u) ? a_", c, "(ab + a_m(m) + a_k(k)) : ", zero, ";\n      ", split(p.b_k_contiguous, "kb", "nn"),
                                       "\n      uint n = n0 + nn;\n      k = k0 + kb;\n", "      Bs[kb][nn] = (n < ", p.n, "u && k < ", p.k, "u) ? b_", c,
                                       "(bb + b_n(n) + b_k(k)) : ", zero, ";\n    }\n    barrier();\n", "    for (uint kk = 0u; kk < 16u; ++kk) {\n", "      ", T,
                                       " av[4], bv[4];\n", "      for (uint i = 0u; i < 4u; ++i) { av[i] = As[kk][ty * 4u + i]; bv[i] = Bs[kk][tx * 4u + i]; }\n",
                                       "      for (uint i = 0u; i < 4u; ++i) for (uint j = 0u; j < 4u; ++j) acc[i][j] += av[i] * bv[j];\n", "    }\n    barrier();\n  }\n",
                                       "  for (uint i = 0u; i < 4u; ++i) for (uint j = 0u; j < 4u; ++j) {\n", "    uint m = m0 + ty * 4u + i, n = n0 + tx * 4u + j;\n",
                                       "    if (m < ", p.m, "u && n < ", p.n, "u) y_w", c, "((bz * ", p.m, "u + m) * ", p.n, "u + n, acc[i][j]);\n  }\n}\n");
  Launch l;
  l.name = "matmul-tiles";
  l.source = sh.source(body);
  l.groups = {static_cast<uint32_t>((p.n + 63) / 64), static_cast<uint32_t>((p.m + 63) / 64), static_cast<uint32_t>(p.batch)};
  l.push_bytes = sh.push_bytes();
  return l;
}

}  // namespace

bool claims_matmul(ir::Op op, const NodeTypes& t, const ir::Attrs& a, const Features& f) {
  if (op != ir::Op::dot_general || t.in.size() != 2 || t.out.size() != 1 || a.has("compute")) return false;
  for (const ir::Type& x : t.in)
    if (!indexable(x) || !storable(x.dtype, f) || x.dtype == DType::boolean) return false;
  if (!indexable(t.out[0]) || !storable(t.out[0].dtype, f)) return false;
  return true;
}

std::vector<Launch> matmul_launches(const ir::Node& n, const NodeTypes& t) {
  Problem p = problem(n, t);
  const bool fl = is_float_class(t.in[0].dtype);
  if (p.batch > 65535 || (p.m <= kRowsMax && p.n > 65535))
    throw Error(ErrorKind::unsupported, cat("vulkan: dot_general of ", p.batch, " batches × ", p.n, " columns exceeds the grid"));
  Launch l = p.m <= kRowsMax ? rows_launch(p, t, fl) : tiles_launch(p, t, fl);
  l.operands = {{Operand::Kind::input, 0}, {Operand::Kind::input, 1}, {Operand::Kind::output, 0}};
  if (p.batch * p.m * p.n == 0) return {};
  if (p.k == 0) throw Error(ErrorKind::unsupported, "vulkan: dot_general with an empty contraction");
  return {l};
}

}  // namespace rlx::backends::vulkan
