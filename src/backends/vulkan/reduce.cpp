// Reductions over any set of axes (sum, prod, max, min, argmax, argmin): the kept dims and the
// reduced dims each collapse to as few as the strides allow; a workgroup of 256 folds one output
// when the reduced extent is long (strided lanes, then a tree in shared memory), one invocation
// folds one output when it is short. What folds is reduce.h's rule: the kind's scalar op from
// its identity, and for the extremum kinds a NaN wins and equals keep the lowest index.
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
constexpr int64_t kParallelFrom = 64;  // reduced extents from here get a workgroup per output

}  // namespace

bool claims_reduce(ir::Op op, const NodeTypes& t, const ir::Attrs& a, const Features& f) {
  if (op != ir::Op::reduce || t.in.size() != 1 || t.out.size() != 1) return false;
  if (!indexable(t.in[0]) || !indexable(t.out[0]) || !storable(t.in[0].dtype, f) || !storable(t.out[0].dtype, f)) return false;
  if (t.in[0].dtype == DType::boolean) return false;
  const std::string& k = a.s("kind");
  // extrema of nothing have no value
  return !(k != "sum" && k != "prod" && shape_is_static(t.in[0].shape) && shape_numel(t.in[0].shape).value() == 0);
}

std::vector<Launch> reduce_launches(const ir::Node& n, const NodeTypes& t) {
  const std::vector<int64_t> is = dims(t.in[0]), ic = contiguous_strides(is);
  std::vector<bool> reduced(is.size(), false);
  for (int64_t ax : n.attrs.ints("axes")) reduced[static_cast<size_t>(codegen::normalize_axis(ax, is.size()))] = true;
  std::vector<int64_t> kshape, kstr, rshape, rstr;
  for (size_t d = 0; d < is.size(); ++d) (reduced[d] ? rshape : kshape).push_back(is[d]), (reduced[d] ? rstr : kstr).push_back(ic[d]);
  codegen::collapse_dims(kshape, {&kstr});
  codegen::collapse_dims(rshape, {&rstr});
  int64_t outs = 1, count = 1;
  for (int64_t d : kshape) outs *= d;
  for (int64_t d : rshape) count *= d;

  const std::string& kind = n.attrs.s("kind");
  const bool arg = kind == "argmax" || kind == "argmin";
  const bool fl = is_float_class(t.in[0].dtype);
  const codegen::ValueClass cls = fl ? codegen::ValueClass::floating : codegen::ValueClass::integer;
  const std::string T = fl ? "float" : "int64_t", c = fl ? "f" : "i";
  std::string ident;
  codegen::Reduction r = codegen::Reduction::sum;
  if (kind == "sum") ident = fl ? "0.0" : "0l";
  else if (kind == "prod") ident = fl ? "1.0" : "1l", r = codegen::Reduction::prod;
  else if (kind == "max" || kind == "argmax") ident = fl ? "uintBitsToFloat(0xff800000u)" : "(-9223372036854775807l - 1l)", r = codegen::Reduction::max;
  else ident = fl ? "uintBitsToFloat(0x7f800000u)" : "9223372036854775807l", r = codegen::Reduction::min;

  Shader sh;
  sh.buffer("x", t.in[0].dtype, Access::read);
  sh.buffer("y", t.out[0].dtype, Access::write);
  sh.push("n");
  std::string fns = offset_function("rlx_kept", kshape, kstr) + offset_function("rlx_reduced", rshape, rstr);
  // merge(a, ia, b, ib) → a, ia: the fold of two partial results (ia, ib only for the arg kinds)
  if (arg) {
    fns += cat("bool rlx_wins(", T, " v, int j, ", T, " c, int at) {\n  if (at < 0) return true;\n");
    if (fl) fns += "  bool vn = isnan(v), cn = isnan(c);\n  if (vn || cn) return vn && (!cn || j < at);\n";
    fns += cat("  if (v == c) return j < at;\n  return ", kind == "argmax" ? "v > c" : "v < c", ";\n}\n");
    fns += cat("void rlx_merge(inout ", T, " a, inout int ia, ", T, " b, int ib) { if (rlx_wins(b, ib, a, ia)) { a = b; ia = ib; } }\n");
  } else {
    fns += cat("void rlx_merge(inout ", T, " a, inout int ia, ", T, " b, int ib) { a = ",
               codegen::print_scalar(codegen::glsl(), cls, codegen::fold_op(r), {"a", "b"}), "; }\n");
  }
  const std::string store = arg ? "y_wi(o, int64_t(at));" : cat("y_w", c, "(o, acc);");
  Launch l;
  l.name = cat("reduce-", kind);
  l.operands = {{Operand::Kind::input, 0}, {Operand::Kind::output, 0}};
  l.words = {static_cast<uint32_t>(outs)};
  if (count >= kParallelFrom) {
    sh.local_size(kThreads);
    l.source = sh.source(cat(fns, "shared ", T, " s_v[", kThreads, "];\nshared int s_j[", kThreads, "];\n", "void main() {\n",
                             "  uint o = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;\n  if (o >= p.n) return;\n",
                             "  uint base = rlx_kept(o);\n", "  uint t = gl_LocalInvocationID.x;\n  ", T, " acc = ", ident, ";\n  int at = -1;\n",
                             "  for (uint r = t; r < ", count, "u; r += ", kThreads, "u) {\n", "    rlx_merge(acc, at, x_", c, "(base + rlx_reduced(r)), int(r));\n  }\n", "  s_v[t] = acc; s_j[t] = at;\n  barrier();\n", "  for (uint s = ", kThreads / 2,
                             "u; s > 0u; s >>= 1) {\n", "    if (t < s) { ", T, " a = s_v[t]; int ia = s_j[t]; rlx_merge(a, ia, s_v[t + s], s_j[t + s]); s_v[t] = a; s_j[t] = ia; }\n",
                             "    barrier();\n  }\n", "  if (t == 0u) { acc = s_v[0]; at = s_j[0]; ", store, " }\n}\n"));
    l.groups = grid_for(outs, 1);
  } else {
    sh.local_size(kThreads);
    l.source = sh.source(cat(fns, "void main() {\n  uint o = rlx_flat();\n  if (o >= p.n) return;\n", "  uint base = rlx_kept(o);\n", "  ", T,
                             " acc = ", ident, ";\n  int at = -1;\n", "  for (uint r = 0u; r < ", count, "u; ++r) {\n", 
                             "    rlx_merge(acc, at, x_", c, "(base + rlx_reduced(r)), int(r));\n  }\n  ", store, "\n}\n"));
    l.groups = grid_for(outs, kThreads);
  }
  l.push_bytes = sh.push_bytes();
  return {l};
}

}  // namespace rlx::backends::vulkan
