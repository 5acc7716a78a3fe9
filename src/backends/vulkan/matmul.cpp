// dot_general with any batch and contracting dims: each operand's batch, free and contracting
// dims collapse to one index each (addressed through offset functions printed per shape), the
// output is [batch, lhs free, rhs free] as the op defines it. Two schedules, shared with the
// packed-weight products (quant.cpp) through MatmulProblem's loaders:
//  - rows: few lhs rows (decode's matrix-vector products) — 32 lanes per column read its
//    contracting run once for every row, then a tree in shared memory; 8 columns a workgroup;
//  - tiles: 128×128 (or 64×64) output tiles per workgroup, 8- (16-) deep slices of both operands
//    staged in shared memory (loaded along whichever dim is contiguous), an 8×8 (4×4) block per
//    invocation.
// Floats accumulate in f32, integers in wrapping 64-bit.
#include "backends/vulkan/context.h"
#include "backends/vulkan/kernels.h"
#include "backends/vulkan/shader.h"
#include "backends/vulkan/target.h"
#include "codegen/index_map.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::backends::vulkan {

namespace {

bool contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// dot_general's operands as a MatmulProblem over buffers a and b.
MatmulProblem problem(const ir::Node& node, const NodeTypes& t) {
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
  MatmulProblem p;
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
  // plain matrices (one dim per group) for the tensor cores' direct loads
  if (t.in[0].dtype == DType::f16 && t.in[1].dtype == DType::f16 && kshape.size() == 1 && mshape.size() == 1 && nshape.size() == 1 && bshape.size() <= 1 &&
      aks[0] == 1 && (bks[0] == 1 || bns[0] == 1)) {
    p.a_ld = ams[0];
    p.a_batch = bshape.empty() ? 0 : abs_[0];
    p.b_batch = bshape.empty() ? 0 : bbs[0];
    p.b_k_major = bks[0] == 1;
    p.b_ld = p.b_k_major ? bns[0] : bks[0];
  }
  p.floating = is_float_class(t.in[0].dtype);
  const std::string T = p.floating ? "float" : "int64_t", c = p.floating ? "f" : "i";
  p.functions = offset_function("a_b", bshape, abs_) + offset_function("a_m", mshape, ams) + offset_function("a_k", kshape, aks) +
                offset_function("b_b", bshape, bbs) + offset_function("b_n", nshape, bns) + offset_function("b_k", kshape, bks) +
                cat(T, " rlx_a(uint bz, uint m, uint k) { return a_", c, "(a_b(bz) + a_m(m) + a_k(k)); }\n", T,
                    " rlx_b(uint bz, uint n, uint k) { return b_", c, "(b_b(bz) + b_n(n) + b_k(k)); }\n");
  return p;
}

}  // namespace

bool claims_matmul(ir::Op op, const NodeTypes& t, const ir::Attrs& a, const Features& f) {
  if (op != ir::Op::dot_general || t.in.size() != 2 || t.out.size() != 1 || a.has("compute")) return false;
  for (const ir::Type& x : t.in)
    if (!indexable(x) || !storable(x.dtype, f) || x.dtype == DType::boolean) return false;
  if (!indexable(t.out[0]) || !storable(t.out[0].dtype, f)) return false;
  return true;
}

namespace {

int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

// The tensor-core tiles of q over operands `h` (bound as `operands`, declared in `sh` after the
// output y) — split over the contraction where few tiles would leave the GPU idle, the partial
// sums then merged (in scratch from `scratch` on, which grows by what they need).
std::vector<Launch> coop_tiles(Shader sh, const MatmulProblem& q, const Features& f, HalfOperands h, std::vector<Operand> operands, DType od, size_t& scratch) {
  h.split = coop_split(q);
  Launch l = matmul_coop_tiles(sh, q, f, h);
  if (h.split == 1) {
    l.operands = operands;
    return {l};
  }
  const int64_t part_at = round_up(static_cast<int64_t>(scratch), 256);
  scratch = static_cast<size_t>(part_at + h.split * q.batch * q.m * q.n * 4);
  operands.push_back({Operand::Kind::scratch, static_cast<int>(part_at), 4});
  l.operands = operands;
  Shader sm;
  sm.buffer("y", od, Access::write);
  std::vector<Operand> mo = {{Operand::Kind::output, 0}};
  if (h.scaled) {
    sm.raw_buffer("sa", "float");
    sm.raw_buffer("sb", "float");
    mo.push_back(operands[3]), mo.push_back(operands[4]);
  }
  Launch merge = matmul_coop_merge(sm, q, h);
  mo.push_back({Operand::Kind::scratch, static_cast<int>(part_at), 4});
  merge.operands = mo;
  return {l, merge};
}

// A large product of 16-bit floats on tensor cores. Plain f16 matrices are read in place
// (with the loader-staged 64×64 schedule for operands that start mid-unit); anything else —
// bf16, strided views — is first staged as scaled f16 rows in scratch (half_stage).
std::vector<Launch> coop_launches(const MatmulProblem& p, const NodeTypes& t, const Features& f, size_t& scratch) {
  const DType ad = t.in[0].dtype, bd = t.in[1].dtype, od = t.out[0].dtype;
  MatmulProblem q = p;
  q.functions.clear();  // the tiles read the halves, not the loaders
  if (ad == DType::f16 && bd == DType::f16 && p.a_ld > 0 && p.b_ld > 0 && p.a_ld % 8 == 0 && p.b_ld % 8 == 0 && p.a_batch % 8 == 0 && p.b_batch % 8 == 0 &&
      p.k % 8 == 0) {
    Shader sh;
    sh.raw_buffer("a16", "uvec4");
    sh.raw_buffer("b16", "uvec4");
    sh.buffer("y", od, Access::write);
    HalfOperands h;
    h.a_ld = p.a_ld, h.a_batch = p.a_batch, h.b_ld = p.b_ld, h.b_batch = p.b_batch, h.b_k_major = p.b_k_major;
    std::vector<Launch> ls = coop_tiles(sh, q, f, h, {{Operand::Kind::input, 0, 16}, {Operand::Kind::input, 1, 16}, {Operand::Kind::output, 0}}, od, scratch);
    Shader sf;
    sf.buffer("a", ad, Access::read);
    sf.buffer("b", bd, Access::read);
    sf.buffer("y", od, Access::write);
    Launch fallback = matmul_coop(sf, p, f);
    fallback.operands = {{Operand::Kind::input, 0}, {Operand::Kind::input, 1}, {Operand::Kind::output, 0}};
    ls.front().unaligned = std::make_shared<std::vector<Launch>>(std::vector<Launch>{fallback});
    return ls;
  }
  const int64_t mp = round_up(p.m, coop_tile_m(p)), np = round_up(p.n, coop_tile_n(p)), kp = round_up(p.k, 32);
  // a's rows, then b's, each followed by its scales; a constant b (a weight) is staged once,
  // into the node's persistent region, instead of on every run
  const bool b_once = t.constant(1);
  const int64_t a_bytes = round_up(p.batch * mp * kp * 2, 256), b_bytes = round_up(p.batch * np * kp * 2, 256);
  const int64_t a_at = 0, sa_at = a_bytes, b_at = b_once ? 0 : round_up(sa_at + p.batch * mp * 4, 256), sb_at = b_at + b_bytes;
  scratch = static_cast<size_t>(b_once ? sa_at + p.batch * mp * 4 : sb_at + p.batch * np * 4);
  const Operand::Kind b_kind = b_once ? Operand::Kind::persistent : Operand::Kind::scratch;
  auto stage = [&](const char* loader, int64_t rows, int64_t padded, Operand::Kind kind, int64_t h_at, int64_t s_at) {
    Shader sh;
    sh.buffer("a", ad, Access::read);
    sh.buffer("b", bd, Access::read);
    HalfStage s;
    s.batch = p.batch, s.rows = rows, s.rows_padded = padded, s.k = p.k, s.cols = kp, s.functions = p.functions, s.loader = loader;
    Launch l = half_stage(sh, s);
    l.operands = {{Operand::Kind::input, 0}, {Operand::Kind::input, 1}, {kind, static_cast<int>(h_at), 4}, {kind, static_cast<int>(s_at), 4}};
    return l;
  };
  Shader sh;
  sh.raw_buffer("a16", "uvec4");
  sh.raw_buffer("b16", "uvec4");
  sh.buffer("y", od, Access::write);
  sh.raw_buffer("sa", "float");
  sh.raw_buffer("sb", "float");
  q.k = kp;  // the staged rows are zero-padded to whole 32-deep slices
  HalfOperands h;
  h.a_ld = kp, h.a_batch = mp * kp, h.b_ld = kp, h.b_batch = np * kp, h.b_k_major = true;
  h.scaled = true, h.scale_rows_a = mp, h.scale_rows_b = np;
  std::vector<Launch> ls = coop_tiles(sh, q, f, h,
                                      {{Operand::Kind::scratch, static_cast<int>(a_at), 16}, {b_kind, static_cast<int>(b_at), 16}, {Operand::Kind::output, 0},
                                       {Operand::Kind::scratch, static_cast<int>(sa_at), 4}, {b_kind, static_cast<int>(sb_at), 4}},
                                      od, scratch);
  Launch sb = stage("rlx_b", p.n, np, b_kind, b_at, sb_at);
  if (b_once) sb.once = true, sb.persistent_bytes = static_cast<uint64_t>(sb_at + p.batch * np * 4);
  ls.insert(ls.begin(), {stage("rlx_a", p.m, mp, Operand::Kind::scratch, a_at, sa_at), sb});
  return ls;
}

bool half_float(DType d) { return d == DType::f16 || d == DType::bf16; }

}  // namespace

std::vector<Launch> matmul_launches(const ir::Node& n, const NodeTypes& t, size_t& scratch) {
  MatmulProblem p = problem(n, t);
  if (p.batch * p.m * p.n == 0) return {};
  if (p.k == 0) throw Error(ErrorKind::unsupported, "vulkan: dot_general with an empty contraction");
  const Features& f = current_target().features;
  if (half_float(t.in[0].dtype) && half_float(t.in[1].dtype) && coop_tiles_fit(p, f)) return coop_launches(p, t, f, scratch);
  Shader sh;
  sh.buffer("a", t.in[0].dtype, Access::read);
  sh.buffer("b", t.in[1].dtype, Access::read);
  sh.buffer("y", t.out[0].dtype, Access::write);
  Launch l = coopmat_fits(p, t.in[0].dtype, t.in[1].dtype, f) ? matmul_coop(sh, p, f) : p.m <= kMatmulRowsMax ? matmul_rows(sh, p) : matmul_tiles(sh, p);
  l.operands = {{Operand::Kind::input, 0}, {Operand::Kind::input, 1}, {Operand::Kind::output, 0}};
  return {l};
}

std::string out_function(const MatmulProblem& p) {
  if (p.out) return {};
  const std::string T = p.floating ? "float" : "int64_t";
  return cat("void rlx_out(uint bz, uint m, uint c, ", T, " v0, ", T, " v1) { y_w", p.floating ? "f" : "i", "((bz * ", p.m, "u + m) * ", p.n, "u + c, v0); }\n");
}

RowsParts rows_parts(Shader& sh, const MatmulProblem& p) {
  const bool fl = p.floating;
  const std::string T = fl ? "float" : "int64_t", zero = fl ? "0.0" : "0l";
  const Features& f = current_target().features;
  RowsParts r;
  // the lhs rows staged in shared memory once per workgroup (every column reads them)
  const bool sub = fl && f.subgroup_arithmetic && f.subgroup_size == 32;
  const int64_t sums = p.m * 8 * (fl ? 4 : 8) + (sub ? 0 : p.m * 256 * (fl ? 4 : 8));  // s_sum, s_acc below
  const int64_t budget = std::min<int64_t>(32768, (f.max_shared_bytes ? f.max_shared_bytes : 32768) - sums);
  const bool stage = p.m * p.k * (fl ? 4 : 8) <= budget;
  r.decls = stage ? cat("shared ", T, " xs_[", p.m * p.k, "];\n") : std::string();
  r.stage = stage ? cat("  for (uint e = t; e < ", p.m * p.k, "u; e += 256u) xs_[e] = rlx_a(bz, e / ", p.k, "u, e % ", p.k, "u);\n  barrier();\n") : std::string();
  r.x = [stage, k = p.k](const std::string& row, const std::string& col) {
    return stage ? cat("xs_[", row, " * ", k, "u + ", col, "]") : cat("rlx_a(bz, ", row, ", ", col, ")");
  };
  // each column's 32 lanes summed: one subgroup operation where subgroups are 32 wide, else a
  // tree in shared memory; then the sums of the workgroup's 8 columns meet in s_sum
  if (sub) sh.extension("GL_KHR_shader_subgroup_arithmetic");
  r.decls += cat("shared ", T, " s_sum[", p.m, "][8];\n");
  if (!sub) r.decls += cat("shared ", T, " s_acc[", p.m, "][256];\n");
  std::string reduce;
  if (sub) {
    reduce = cat("  for (uint r = 0u; r < ", p.m, "u; ++r) { ", T, " v = subgroupAdd(acc[r]); if (lane == 0u) s_sum[r][t / 32u] = v; }\n  barrier();\n");
  } else {
    reduce = cat("  for (uint r = 0u; r < ", p.m, "u; ++r) s_acc[r][t] = acc[r];\n  barrier();\n", "  for (uint s = 16u; s > 0u; s >>= 1) {\n    if (lane < s)\n",
                 "      for (uint r = 0u; r < ", p.m, "u; ++r) s_acc[r][t] += s_acc[r][t + s];\n    barrier();\n  }\n", "  if (lane == 0u) for (uint r = 0u; r < ", p.m,
                 "u; ++r) s_sum[r][t / 32u] = s_acc[r][t];\n  barrier();\n");
  }
  r.finish = reduce + (p.paired ? cat("  if (lane == 0u && col % 2u == 0u && col < ", p.n, "u)\n    for (uint r = 0u; r < ", p.m,
                                      "u; ++r) rlx_out(bz, r, col / 2u, s_sum[r][t / 32u], s_sum[r][t / 32u + 1u]);\n")
                                : cat("  if (lane == 0u && col < ", p.n, "u)\n    for (uint r = 0u; r < ", p.m, "u; ++r) rlx_out(bz, r, col, s_sum[r][t / 32u], ", zero,
                                      ");\n"));
  r.begin = cat("  uint t = gl_LocalInvocationID.x, lane = t % 32u, col = gl_WorkGroupID.x * 8u + t / 32u, bz = gl_WorkGroupID.y;\n",
                p.prepare ? cat("  rlx_prepare(0u, ", p.m, "u, t, 256u);\n  barrier();\n") : std::string(), r.stage, "  ", T, " acc[", p.m, "];\n",
                "  for (uint r = 0u; r < ", p.m, "u; ++r) acc[r] = ", zero, ";\n");
  return r;
}

Launch matmul_rows(Shader sh, const MatmulProblem& p) {
  const std::string T = p.floating ? "float" : "int64_t";
  const int64_t groups = (p.n + 7) / 8;
  if (p.batch > 65535 || groups > 65535)
    throw Error(ErrorKind::unsupported, cat("vulkan: a product of ", p.batch, " batches × ", p.n, " columns exceeds the grid"));
  sh.local_size(256);
  RowsParts r = rows_parts(sh, p);
  Launch l;
  l.name = "matmul-rows";
  l.source = sh.source(p.functions + out_function(p) + r.decls +
                       cat("void main() {\n", r.begin, "  if (col < ", p.n, "u)\n", "    for (uint k = lane; k < ", p.k, "u; k += 32u) {\n", "      ", T,
                           " w = rlx_b(bz, col, k);\n", "      for (uint r = 0u; r < ", p.m, "u; ++r) acc[r] += ", r.x("r", "k"), " * w;\n    }\n", r.finish, "}\n"));
  l.groups = {static_cast<uint32_t>(groups), static_cast<uint32_t>(p.batch), 1};
  l.push_bytes = sh.push_bytes();
  return l;
}

Launch matmul_tiles(Shader sh, const MatmulProblem& p) {
  const std::string T = p.floating ? "float" : "int64_t", c = p.floating ? "f" : "i", zero = p.floating ? "0.0" : "0l";
  if (p.batch > 65535) throw Error(ErrorKind::unsupported, cat("vulkan: a product of ", p.batch, " batches exceeds the grid"));
  // 16×16 invocations, each a micro×micro block of the tile: 128×128 tiles 8 deep for large
  // products, 64×64 tiles 16 deep otherwise (each stage 1024 elements of each operand).
  // 128×128 tiles only where they still give a large GPU a few hundred workgroups (on an H200,
  // 64×64 tiles ran the Qwen3 prefill and MLP products faster: fewer, bigger tiles left SMs idle)
  const int64_t big = ((p.m + 127) / 128) * ((p.n + 127) / 128) * p.batch;
  // and 32×32 tiles where 64×64 ones would leave most of it idle (the MLP's products of 128 columns)
  const int64_t mid = ((p.m + 63) / 64) * ((p.n + 63) / 64) * p.batch;
  const int64_t micro = big >= 512 ? 8 : mid >= 128 ? 4 : 2, tile = 16 * micro, depth = 1024 / tile;
  sh.local_size(256);
  // a tile element e of tile×depth: along k first when k is the contiguous dim
  auto split = [&](bool k_fast, const char* kname, const char* row) {
    return k_fast ? cat("uint ", kname, " = e % ", depth, "u, ", row, " = e / ", depth, "u;") : cat("uint ", kname, " = e / ", tile, "u, ", row, " = e % ", tile, "u;");
  };
  Launch l;
  l.name = cat("matmul-tiles", tile);
  l.source = sh.source(p.functions + out_function(p) + cat(
      "shared ", T, " As[", depth, "][", tile + 4, "];\nshared ", T, " Bs[", depth, "][", tile + 4, "];\n", "void main() {\n",
      "  uint n0 = gl_WorkGroupID.x * ", tile, "u, m0 = gl_WorkGroupID.y * ", tile, "u, bz = gl_WorkGroupID.z;\n",
      "  uint t = gl_LocalInvocationID.x, tx = t % 16u, ty = t / 16u;\n",
      p.prepare ? cat("  rlx_prepare(m0, ", tile, "u, t, 256u);\n  barrier();\n") : std::string(), "  ", T, " acc[", micro, "][", micro, "];\n",
      "  for (uint i = 0u; i < ", micro, "u; ++i) for (uint j = 0u; j < ", micro, "u; ++j) acc[i][j] = ", zero, ";\n",
      "  for (uint k0 = 0u; k0 < ", p.k, "u; k0 += ", depth, "u) {\n", "    for (uint e = t; e < 1024u; e += 256u) {\n      ", split(p.a_k_contiguous, "ka", "mm"),
      "\n      uint m = m0 + mm, k = k0 + ka;\n", "      As[ka][mm] = (m < ", p.m, "u && k < ", p.k, "u) ? rlx_a(bz, m, k) : ", zero, ";\n      ",
      split(p.b_k_contiguous, "kb", "nn"), "\n      uint n = n0 + nn;\n      k = k0 + kb;\n", "      Bs[kb][nn] = (n < ", p.n, "u && k < ", p.k, "u) ? rlx_b(bz, n, k) : ",
      zero, ";\n    }\n    barrier();\n", "    for (uint kk = 0u; kk < ", depth, "u; ++kk) {\n", "      ", T, " av[", micro, "], bv[", micro, "];\n",
      "      for (uint i = 0u; i < ", micro, "u; ++i) { av[i] = As[kk][ty * ", micro, "u + i]; bv[i] = Bs[kk][tx * ", micro, "u + i]; }\n",
      "      for (uint i = 0u; i < ", micro, "u; ++i) for (uint j = 0u; j < ", micro, "u; ++j) acc[i][j] += av[i] * bv[j];\n", "    }\n    barrier();\n  }\n",
      "  for (uint i = 0u; i < ", micro, "u; ++i) for (uint j = 0u; j < ", micro, "u; j += ", p.paired ? 2 : 1, "u) {\n", "    uint m = m0 + ty * ", micro,
      "u + i, n = n0 + tx * ", micro, "u + j;\n", "    if (m < ", p.m, "u && n < ", p.n, "u) ",
      p.paired ? "rlx_out(bz, m, n / 2u, acc[i][j], acc[i][j + 1u]);\n  }\n}\n" : cat("rlx_out(bz, m, n, acc[i][j], ", zero, ");\n  }\n}\n")));
  l.groups = {static_cast<uint32_t>((p.n + tile - 1) / tile), static_cast<uint32_t>((p.m + tile - 1) / tile), static_cast<uint32_t>(p.batch)};
  l.push_bytes = sh.push_bytes();
  return l;
}

}  // namespace rlx::backends::vulkan
