// Reductions over any set of axes (sum, prod, max, min, argmax, argmin), and fused_reduce (the
// value reduced is a region body — region.cpp's printing — evaluated as it is read): the kept
// dims and the reduced dims each collapse to as few as the strides allow; 1, 32 or 256 lanes
// fold one output (by the reduced extent), strided, then a tree in shared memory. What folds is
// reduce.h's rule: the kind's scalar op from its identity, and for the extremum kinds a NaN
// wins and equals keep the lowest index.
#include <limits>

#include "backends/vulkan/context.h"
#include "backends/vulkan/kernels.h"
#include "backends/vulkan/shader.h"
#include "codegen/dialect_glsl.h"
#include "codegen/index_map.h"
#include "codegen/reduce.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::backends::vulkan {

namespace {

constexpr uint32_t kThreads = 256;

}  // namespace

bool claims_reduce(ir::Op op, const NodeTypes& t, const ir::Attrs& a, const Features& f) {
  if (op == ir::Op::fused_reduce) {
    if (t.out.size() != 1 || !indexable(t.out[0]) || !storable(t.out[0].dtype, f)) return false;
    for (const ir::Type& x : t.in)
      if (!indexable(x) || !storable(x.dtype, f)) return false;
    auto body = printable_body(a.s("prologue"), t.in);
    return body && body->outputs().size() == 1;
  }
  if (op != ir::Op::reduce || t.in.size() != 1 || t.out.size() != 1) return false;
  if (!indexable(t.in[0]) || !indexable(t.out[0]) || !storable(t.in[0].dtype, f) || !storable(t.out[0].dtype, f)) return false;
  if (t.in[0].dtype == DType::boolean) return false;
  const std::string& k = a.s("kind");
  // extrema of nothing have no value
  return !(k != "sum" && k != "prod" && shape_is_static(t.in[0].shape) && shape_numel(t.in[0].shape).value() == 0);
}

namespace {

// The kept and reduced dims of `full` (axes reduced), and each operand's strides over both
// groups, collapsed.
struct Split {
  std::vector<int64_t> kshape, rshape;
  std::vector<std::vector<int64_t>> kst, rst;  // per operand
  int64_t outs = 1, count = 1;
};

Split split_axes(const std::vector<int64_t>& full, const std::vector<int64_t>& axes, const std::vector<std::vector<int64_t>>& strides) {
  std::vector<bool> reduced(full.size(), false);
  for (int64_t ax : axes) reduced[static_cast<size_t>(codegen::normalize_axis(ax, full.size()))] = true;
  Split s;
  s.kst.resize(strides.size());
  s.rst.resize(strides.size());
  for (size_t d = 0; d < full.size(); ++d) {
    (reduced[d] ? s.rshape : s.kshape).push_back(full[d]);
    for (size_t k = 0; k < strides.size(); ++k) (reduced[d] ? s.rst[k] : s.kst[k]).push_back(strides[k][d]);
  }
  std::vector<std::vector<int64_t>*> ks, rs;
  for (size_t k = 0; k < strides.size(); ++k) ks.push_back(&s.kst[k]), rs.push_back(&s.rst[k]);
  codegen::collapse_dims(s.kshape, ks);
  codegen::collapse_dims(s.rshape, rs);
  for (int64_t d : s.kshape) s.outs *= d;
  for (int64_t d : s.rshape) s.count *= d;
  return s;
}

// The kernel around `value` (GLSL defining T rlx_value(uint o, uint r)) for `kind`.
// `split` > 1: pass 1 of a split reduction — chunk g of output o reduced into scratch (sv_, si_
// at [o · split + g]); pass 2 (`merge`) folds those partials with their indices.
enum class Pass : uint8_t { whole, chunks, merge };
Launch reduce_kernel(Shader sh, const std::string& value, const std::string& kind, bool fl, int64_t outs, int64_t count, Pass pass = Pass::whole,
                     int64_t split = 1) {
  const bool arg = kind == "argmax" || kind == "argmin";
  const codegen::ValueClass cls = fl ? codegen::ValueClass::floating : codegen::ValueClass::integer;
  const std::string T = fl ? "float" : "int64_t", c = fl ? "f" : "i";
  std::string ident;
  codegen::Reduction r = codegen::Reduction::sum;
  if (kind == "sum") ident = fl ? "0.0" : "0l";
  else if (kind == "prod") ident = fl ? "1.0" : "1l", r = codegen::Reduction::prod;
  else if (kind == "max" || kind == "argmax") ident = fl ? "uintBitsToFloat(0xff800000u)" : "(-9223372036854775807l - 1l)", r = codegen::Reduction::max;
  else ident = fl ? "uintBitsToFloat(0x7f800000u)" : "9223372036854775807l", r = codegen::Reduction::min;
  std::string fns = value;
  // merge(a, ia, b, ib): the fold of two partial results into a and ia (ia, ib only for the arg
  // kinds) — a macro, not a function of inout parameters, which the C-like flavours lack
  if (arg) {
    fns += cat("bool rlx_wins(", T, " v, int j, ", T, " c, int at) {\n  if (at < 0) return true;\n");
    if (fl) fns += "  bool vn = isnan(v), cn = isnan(c);\n  if (vn || cn) return vn && (!cn || j < at);\n";
    fns += cat("  if (v == c) return j < at;\n  return ", kind == "argmax" ? "v > c" : "v < c", ";\n}\n");
    fns += cat("#define rlx_merge(a, ia, b, ib) { ", T, " rlx_mb = (b); int rlx_mi = (ib); if (rlx_wins(rlx_mb, rlx_mi, a, ia)) { a = rlx_mb; ia = rlx_mi; } }\n");
  } else {
    fns += cat("#define rlx_merge(a, ia, b, ib) { ", T, " rlx_mb = (b); a = ", codegen::print_scalar(kernel_dialect(), cls, codegen::fold_op(r), {"a", "rlx_mb"}), "; }\n");
  }
  std::string store = arg ? "y_wi(o, int64_t(at));" : cat("y_w", c, "(o, acc);");
  // lanes per output: one for short reductions, a subgroup's worth for rows, the workgroup for long ones
  const int64_t lanes = pass != Pass::whole ? 256 : count < 32 ? 1 : count <= 8192 ? 32 : 256;
  const int64_t per_group = 256 / lanes;
  const int64_t len = (count + split - 1) / split;  // pass 1: each chunk's extent
  std::string range = cat("uint r = lane; r < ", count, "u; r += ", lanes, "u");
  std::string fetch = "rlx_value(o, r), int(r)";
  std::string o_of = cat("(gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * ", per_group, "u + t / ", lanes, "u");
  if (pass == Pass::chunks) {
    sh.raw_buffer("sv", T, Access::write);
    sh.raw_buffer("si", "int", Access::write);
    o_of = "gl_WorkGroupID.y";
    range = cat("uint r = gl_WorkGroupID.x * ", len, "u + lane; r < min(", count, "u, (gl_WorkGroupID.x + 1u) * ", len, "u); r += 256u");
    store = cat("sv_[p.o_sv + o * ", split, "u + gl_WorkGroupID.x] = acc; si_[p.o_si + o * ", split, "u + gl_WorkGroupID.x] = at;");
  } else if (pass == Pass::merge) {
    sh.raw_buffer("sv", T);
    sh.raw_buffer("si", "int");
    range = cat("uint r = lane; r < ", split, "u; r += 256u");
    fetch = cat("sv_[p.o_sv + o * ", split, "u + r], si_[p.o_si + o * ", split, "u + r]");
  }
  sh.push("n");
  sh.local_size(256);
  Launch l;
  l.name = cat("reduce-", kind);
  std::string body = cat(fns, "shared ", T, " s_v[256];\nshared int s_j[256];\n", "void main() {\n",
                         "  uint t = gl_LocalInvocationID.x, lane = t % ", lanes, "u;\n",
                         "  uint o = ", o_of, ";\n", "  ", T, " acc = ", ident, ";\n  int at = -1;\n", "  if (o < p.n)\n", "    for (", range,
                         ") rlx_merge(acc, at, ", fetch, ");\n");
  if (lanes > 1)
    body += cat("  s_v[t] = acc; s_j[t] = at;\n  barrier();\n", "  for (uint s = ", lanes / 2, "u; s > 0u; s >>= 1) {\n",
                "    if (lane < s) { ", T, " a = s_v[t]; int ia = s_j[t]; rlx_merge(a, ia, s_v[t + s], s_j[t + s]); s_v[t] = a; s_j[t] = ia; }\n",
                "    barrier();\n  }\n", "  acc = s_v[t]; at = s_j[t];\n");
  body += cat("  if (lane == 0u && o < p.n) { ", store, " }\n}\n");
  l.source = sh.source(body);
  l.words = {static_cast<uint32_t>(outs)};
  l.push_bytes = sh.push_bytes();
  l.groups = pass == Pass::chunks ? std::array<uint32_t, 3>{static_cast<uint32_t>(split), static_cast<uint32_t>(outs), 1}
                                  : grid_for(outs, static_cast<uint32_t>(per_group));
  return l;
}

}  // namespace

std::vector<Launch> reduce_launches(const ir::Node& n, const NodeTypes& t, size_t& scratch) {
  const std::string& kind = n.attrs.s("kind");
  Shader sh;
  Launch l;
  if (n.op == ir::Op::fused_reduce) {
    auto body = printable_body(n.attrs.s("prologue"), t.in);
    if (!body) throw Error(ErrorKind::internal, "vulkan: a prologue it claimed does not print");
    // the prologue's iteration space: its inputs broadcast together
    std::vector<int64_t> full;
    for (const ir::Type& x : t.in) {
      std::vector<int64_t> s = dims(x);
      if (s.size() > full.size()) full.insert(full.begin(), s.size() - full.size(), 1);
      for (size_t d = 0; d < s.size(); ++d) {
        int64_t& f = full[full.size() - s.size() + d];
        if (s[d] != 1) f = s[d];
      }
    }
    std::vector<std::vector<int64_t>> strides;
    for (const ir::Type& x : t.in) strides.push_back(codegen::broadcast_strides(full, dims(x)));
    Split s = split_axes(full, n.attrs.ints("axes"), strides);
    std::string value, loads;
    std::vector<std::string> in;
    for (size_t k = 0; k < t.in.size(); ++k) {
      sh.buffer(cat("x", k), t.in[k].dtype, Access::read);
      value += offset_function(cat("rlx_kept", k), s.kshape, s.kst[k]) + offset_function(cat("rlx_reduced", k), s.rshape, s.rst[k]);
      in.push_back(cat("x", k, "_f(rlx_kept", k, "(o) + rlx_reduced", k, "(r))"));
      l.operands.push_back({Operand::Kind::input, static_cast<int>(k)});
    }
    sh.buffer("y", t.out[0].dtype, Access::write);
    l.operands.push_back({Operand::Kind::output, 0});
    value += cat("float rlx_value(uint o, uint r) {\n", body_code(*body, in), "  return r", body->outputs()[0], ";\n}\n");
    Launch k = reduce_kernel(sh, value, kind, true, s.outs, s.count);
    k.name = cat("fused-", k.name);
    k.operands = l.operands;
    return {k};
  }
  const std::vector<int64_t> is = dims(t.in[0]);
  Split s = split_axes(is, n.attrs.ints("axes"), {contiguous_strides(is)});
  const bool fl = is_float_class(t.in[0].dtype);
  sh.buffer("x", t.in[0].dtype, Access::read);
  sh.buffer("y", t.out[0].dtype, Access::write);
  const std::string value = offset_function("rlx_kept", s.kshape, s.kst[0]) + offset_function("rlx_reduced", s.rshape, s.rst[0]) +
                            cat(fl ? "float" : "int64_t", " rlx_value(uint o, uint r) { return x_", fl ? "f" : "i", "(rlx_kept(o) + rlx_reduced(r)); }\n");
  // few outputs over a long extent (an argmax over a vocabulary): chunks in parallel, then a merge
  const int64_t split = s.outs <= 64 && s.count >= 65536 ? std::min<int64_t>(1024, s.count / 8192) : 1;
  if (split > 1) {
    const size_t vbytes = fl ? 4 : 8, at_si = static_cast<size_t>(s.outs * split) * vbytes;
    scratch = at_si + static_cast<size_t>(s.outs * split) * 4;
    Shader sh2 = sh;
    Launch a = reduce_kernel(sh, value, kind, fl, s.outs, s.count, Pass::chunks, split);
    a.operands = {{Operand::Kind::input, 0}, {Operand::Kind::output, 0}, {Operand::Kind::scratch, 0, static_cast<uint32_t>(vbytes)},
                  {Operand::Kind::scratch, static_cast<int>(at_si), 4}};
    a.name += "-chunks";
    Launch b = reduce_kernel(sh2, "", kind, fl, s.outs, s.count, Pass::merge, split);
    b.operands = {{Operand::Kind::input, 0}, {Operand::Kind::output, 0}, {Operand::Kind::scratch, 0, static_cast<uint32_t>(vbytes)},
                  {Operand::Kind::scratch, static_cast<int>(at_si), 4}};
    b.name += "-merge";
    return {a, b};
  }
  l = reduce_kernel(sh, value, kind, fl, s.outs, s.count);
  l.operands = {{Operand::Kind::input, 0}, {Operand::Kind::output, 0}};
  return {l};
}

std::string workgroup_sum(const std::string& v, const std::string& into, int64_t lanes) {
  return cat("  red[t] = ", v, ";\n  barrier();\n", "  for (uint s = ", lanes / 2, "u; s > 0u; s >>= 1) {\n    if (t < s) red[t] += red[t + s];\n    barrier();\n  }\n",
             "  float ", into, " = red[0];\n  barrier();\n");
}

}  // namespace rlx::backends::vulkan
