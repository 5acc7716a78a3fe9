// Data movement: reshape (where the memory plan could not make it a view), transpose,
// broadcast, slice, concat, pad (every mode), gather and scatter. All but the last two are
// one strided copy — an iteration space with a base and strides on each side — printed per
// shape; gather and scatter read indices and report the first out-of-range one through the
// error word (the reference's rule: every index in [0, n)).
#include "backends/vulkan/context.h"
#include "backends/vulkan/kernels.h"
#include "backends/vulkan/shader.h"
#include "codegen/index_map.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::backends::vulkan {

namespace {

constexpr uint32_t kThreads = 256;

// out[out_base + Σ c·out_strides] = in[in_base + Σ c·in_strides] over `shape`.
Launch strided_copy(const std::string& name, DType t, std::vector<int64_t> shape, std::vector<int64_t> in_strides, int64_t in_base,
                    std::vector<int64_t> out_strides, int64_t out_base, Operand from) {
  codegen::collapse_dims(shape, {&in_strides, &out_strides});
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  Shader sh;
  sh.buffer("x", t, Access::read);
  sh.buffer("y", t, Access::write);
  sh.push("n");
  sh.local_size(kThreads);
  Launch l;
  l.name = name;
  l.source = sh.source(cat("void main() {\n  uint i = rlx_flat();\n  if (i >= p.n) return;\n", index_code(shape, {{"x", in_strides}, {"y", out_strides}}),
                           "  y_st(", out_base, "u + y_at, x_ld(", in_base, "u + x_at));\n}\n"));
  l.operands = {from, {Operand::Kind::output, 0}};
  l.words = {static_cast<uint32_t>(n)};
  l.push_bytes = sh.push_bytes();
  l.groups = grid_for(n, kThreads);
  return l;
}

// Every element of the output set to `value` (pad's border).
Launch fill(DType t, int64_t n, double value) {
  Shader sh;
  sh.buffer("y", t, Access::write);
  sh.push("n");
  sh.local_size(kThreads);
  Launch l;
  l.name = "fill";
  std::string v = is_float_class(t) ? cat("y_wf(i, ", f32_bits(static_cast<float>(value)), ")")
                                    : cat("y_wi(i, ", static_cast<int64_t>(value), "l)");
  l.source = sh.source(cat("void main() {\n  uint i = rlx_flat();\n  if (i >= p.n) return;\n  ", v, ";\n}\n"));
  l.operands = {{Operand::Kind::output, 0}};
  l.words = {static_cast<uint32_t>(n)};
  l.push_bytes = sh.push_bytes();
  l.groups = grid_for(n, kThreads);
  return l;
}

struct AxisSplit {
  int64_t outer = 1, n = 1, inner = 1;
};
AxisSplit split(const std::vector<int64_t>& shape, int64_t axis) {
  AxisSplit s;
  for (int64_t d = 0; d < axis; ++d) s.outer *= shape[static_cast<size_t>(d)];
  s.n = shape[static_cast<size_t>(axis)];
  for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) s.inner *= shape[d];
  return s;
}

// Every output element finds its source as the reference does (interior steps, then the mode's
// rule outside: the value, the nearest edge, or the reflection without repeating the edge).
Launch pad_general(const ir::Node& n, const NodeTypes& t) {
  const std::vector<int64_t> xs = dims(t.in[0]), ys = dims(t.out[0]), xst = contiguous_strides(xs);
  const auto& lo = n.attrs.ints("lo");
  std::vector<int64_t> interior(xs.size(), 0);
  if (n.attrs.has("interior")) interior = n.attrs.ints("interior");
  const std::string& mode = n.attrs.s("mode");
  const DType dt = t.out[0].dtype;
  const int64_t total = shape_numel(t.out[0].shape).value();
  Shader sh;
  sh.buffer("x", dt, Access::read);
  sh.buffer("y", dt, Access::write);
  sh.push("n");
  sh.local_size(kThreads);
  std::string body = "void main() {\n  uint i = rlx_flat();\n  if (i >= p.n) return;\n  uint r = i, src = 0u;\n  bool inside = true;\n";
  for (size_t d = ys.size(); d-- > 0;) {
    body += cat("  { int c = int(r % ", ys[d], "u); r /= ", ys[d], "u;\n    int q = c - ", lo[d], ";\n");
    if (interior[d] > 0) body += cat("    if (q >= 0) { if (q % ", interior[d] + 1, " != 0) inside = false; q /= ", interior[d] + 1, "; }\n");
    body += cat("    if (q < 0 || q >= ", xs[d], ") {\n");
    if (mode == "constant") body += "      inside = false;\n";
    else if (mode == "edge") body += cat("      q = q < 0 ? 0 : ", xs[d] - 1, ";\n");
    else body += cat("      q = q < 0 ? -q : ", 2 * (xs[d] - 1), " - q;\n");
    body += cat("    }\n    src += uint(clamp(q, 0, ", std::max<int64_t>(xs[d] - 1, 0), ")) * ", xst[d], "u; }\n");
  }
  const double value = n.attrs.f("value");
  const std::string fill = is_float_class(dt) ? cat("y_wf(i, ", f32_bits(static_cast<float>(value)), ")")
                                              : cat("y_wi(i, ", static_cast<int64_t>(value), "l)");
  body += cat("  if (inside) y_st(i, x_ld(src));\n  else ", fill, ";\n}\n");
  Launch l;
  l.name = cat("pad-", mode);
  l.source = sh.source(body);
  l.operands = {{Operand::Kind::input, 0}, {Operand::Kind::output, 0}};
  l.words = {static_cast<uint32_t>(total)};
  l.push_bytes = sh.push_bytes();
  l.groups = grid_for(total, kThreads);
  return l;
}

// scatter without a reduction, every update at once: each destination row's owner — the last
// update that names it, as the reference's sequential loop leaves it — is found first (an
// atomic maximum over update numbers in scratch), then every update's row is written by its
// owner alone.
std::vector<Launch> scatter_by_owner(std::vector<Launch> ls, const NodeTypes& t, const AxisSplit& s, int64_t k, size_t& scratch) {
  const DType dt = t.out[0].dtype;
  scratch = static_cast<size_t>(s.n) * 4;
  Launch clear;
  {
    Shader sh;
    sh.raw_buffer("own", "uint", Access::write);
    sh.push("n");
    sh.local_size(kThreads);
    clear.name = "scatter-owners-clear";
    clear.source = sh.source("void main() {\n  uint i = rlx_flat();\n  if (i < p.n) own_[p.o_own + i] = 0u;\n}\n");
    clear.operands = {{Operand::Kind::scratch, 0, 4}};
    clear.words = {static_cast<uint32_t>(s.n)};
    clear.push_bytes = sh.push_bytes();
    clear.groups = grid_for(s.n, kThreads);
  }
  Launch owners;
  {
    Shader sh;
    sh.buffer("idx", t.in[1].dtype, Access::read);
    sh.raw_buffer("own", "uint", Access::read_write);
    sh.error_buffer();
    sh.push("n");
    sh.local_size(kThreads);
    owners.name = "scatter-owners";
    owners.source = sh.source(cat("void main() {\n  uint kk = rlx_flat();\n  if (kk >= p.n) return;\n  int64_t j = idx_i(kk);\n", "  if (j < 0l || j >= ", s.n,
                                  "l) { rlx_index_error(j, ", s.n, "l); return; }\n", "  atomicMax(own_[p.o_own + uint(j)], kk + 1u);\n}\n"));
    owners.operands = {{Operand::Kind::input, 1}, {Operand::Kind::scratch, 0, 4}, {Operand::Kind::error, 0}};
    owners.words = {0, static_cast<uint32_t>(k)};
    owners.step_word = 0;
    owners.push_bytes = sh.push_bytes();
    owners.groups = grid_for(k, kThreads);
  }
  Launch write;
  {
    const int64_t total = s.outer * k * s.inner;
    Shader sh;
    sh.buffer("idx", t.in[1].dtype, Access::read);
    sh.buffer("u", dt, Access::read);
    sh.buffer("y", dt, Access::write);
    sh.raw_buffer("own", "uint", Access::read);
    sh.push("n");
    sh.local_size(kThreads);
    write.name = "scatter-rows";
    write.source = sh.source(cat("void main() {\n  uint i = rlx_flat();\n  if (i >= p.n) return;\n", "  uint e = i % ", s.inner, "u, kk = (i / ", s.inner, "u) % ", k,
                                 "u, o = i / ", k * s.inner, "u;\n", "  int64_t j = idx_i(kk);\n", "  if (j < 0l || j >= ", s.n, "l || own_[p.o_own + uint(j)] != kk + 1u) return;\n",
                                 "  y_st((o * ", s.n, "u + uint(j)) * ", s.inner, "u + e, u_ld(i));\n}\n"));
    write.operands = {{Operand::Kind::input, 1}, {Operand::Kind::input, 2}, {Operand::Kind::output, 0}, {Operand::Kind::scratch, 0, 4}};
    write.words = {static_cast<uint32_t>(total)};
    write.push_bytes = sh.push_bytes();
    write.groups = grid_for(total, kThreads);
  }
  ls.push_back(clear), ls.push_back(owners), ls.push_back(write);
  return ls;
}

}  // namespace

Launch copy_launch(DType t, int64_t n, Operand from) {
  Launch l = strided_copy("copy", t, {n}, {1}, 0, {1}, 0, from);
  l.skip_when_in_place = true;
  return l;
}

bool claims_movement(ir::Op op, const NodeTypes& t, const ir::Attrs& a, const Features& f) {
  using ir::Op;
  if (op != Op::reshape && op != Op::transpose && op != Op::broadcast && op != Op::slice && op != Op::concat && op != Op::pad && op != Op::gather &&
      op != Op::scatter)
    return false;
  if (t.out.size() != 1 || !indexable(t.out[0]) || !storable(t.out[0].dtype, f)) return false;
  for (const ir::Type& x : t.in)
    if (!indexable(x) || !storable(x.dtype, f)) return false;
  if (op == Op::pad && a.has("interior"))
    for (int64_t v : a.ints("interior"))
      if (v < 0) return false;
  if (op == Op::gather || op == Op::scatter) {
    DTypeClass c = dtype_class(t.in[1].dtype);
    if (c != DTypeClass::signed_int && c != DTypeClass::unsigned_int) return false;
    if (op == Op::scatter && a.s("reduce") != "none" && t.out[0].dtype == DType::boolean) return false;
  }
  return true;
}

std::vector<Launch> movement_launches(const ir::Node& n, const NodeTypes& t, size_t& scratch) {
  using ir::Op;
  const ir::Type& out = t.out[0];
  const DType dt = out.dtype;
  const std::vector<int64_t> os = dims(out), oc = contiguous_strides(os);
  const Operand in0{Operand::Kind::input, 0};
  switch (n.op) {
    case Op::reshape: return {strided_copy("reshape", dt, {shape_numel(out.shape).value()}, {1}, 0, {1}, 0, in0)};
    case Op::transpose: {
      const std::vector<int64_t> is = dims(t.in[0]), ic = contiguous_strides(is);
      const std::vector<int64_t>& perm = n.attrs.ints("perm");
      std::vector<int64_t> st;
      for (int64_t p : perm) st.push_back(ic[static_cast<size_t>(p)]);
      return {strided_copy("transpose", dt, os, st, 0, oc, 0, in0)};
    }
    case Op::broadcast: return {strided_copy("broadcast", dt, os, codegen::broadcast_strides(os, dims(t.in[0])), 0, oc, 0, in0)};
    case Op::slice: {
      const std::vector<int64_t> ic = contiguous_strides(dims(t.in[0]));
      const auto& start = n.attrs.dims("start");
      const auto& stride = n.attrs.ints("stride");
      std::vector<int64_t> st;
      int64_t base = 0;
      for (size_t d = 0; d < os.size(); ++d) {
        base += start[d].value() * ic[d];
        st.push_back(ic[d] * (d < stride.size() ? stride[d] : 1));
      }
      return {strided_copy("slice", dt, os, st, base, oc, 0, in0)};
    }
    case Op::concat: {
      const int64_t axis = codegen::normalize_axis(n.attrs.i("axis"), os.size());
      std::vector<Launch> ls;
      int64_t at = 0;
      for (size_t k = 0; k < t.in.size(); ++k) {
        const std::vector<int64_t> is = dims(t.in[k]);
        if (shape_numel(t.in[k].shape).value() > 0)
          ls.push_back(strided_copy("concat", dt, is, contiguous_strides(is), 0, oc, at * oc[static_cast<size_t>(axis)], {Operand::Kind::input, static_cast<int>(k)}));
        at += is[static_cast<size_t>(axis)];
      }
      return ls;
    }
    case Op::pad: {
      const auto& lo = n.attrs.ints("lo");
      const std::string& mode = n.attrs.s("mode");
      bool simple = mode == "constant";
      for (size_t d = 0; d < lo.size(); ++d) simple = simple && lo[d] >= 0 && n.attrs.ints("hi")[d] >= 0;
      if (!simple) return {pad_general(n, t)};
      std::vector<int64_t> interior(os.size(), 0);
      if (n.attrs.has("interior")) interior = n.attrs.ints("interior");
      std::vector<int64_t> st;
      int64_t base = 0;
      for (size_t d = 0; d < os.size(); ++d) {
        base += lo[d] * oc[d];
        st.push_back(oc[d] * (interior[d] + 1));
      }
      const std::vector<int64_t> is = dims(t.in[0]);
      std::vector<Launch> ls = {fill(dt, shape_numel(out.shape).value(), n.attrs.f("value"))};
      if (shape_numel(t.in[0].shape).value() > 0) ls.push_back(strided_copy("pad", dt, is, contiguous_strides(is), 0, st, base, in0));
      return ls;
    }
    case Op::gather: {
      const std::vector<int64_t> ds = dims(t.in[0]);
      const int64_t axis = codegen::normalize_axis(n.attrs.i("axis"), ds.size());
      const AxisSplit s = split(ds, axis);
      const int64_t k = shape_numel(t.in[1].shape).value(), total = shape_numel(out.shape).value();
      Shader sh;
      sh.buffer("x", dt, Access::read);
      sh.buffer("idx", t.in[1].dtype, Access::read);
      sh.buffer("y", dt, Access::write);
      sh.error_buffer();
      sh.push("n");
      sh.local_size(kThreads);
      Launch l;
      l.name = "gather";
      l.source = sh.source(cat("void main() {\n  uint i = rlx_flat();\n  if (i >= p.n) return;\n", "  uint e = i % ", s.inner, "u, r = i / ", s.inner,
                               "u, kk = r % ", k, "u, o = r / ", k, "u;\n", "  int64_t j = idx_i(kk);\n", "  if (j < 0l || j >= ", s.n,
                               "l) { rlx_index_error(j, ", s.n, "l); return; }\n", "  y_st(i, x_ld((o * ", s.n, "u + uint(j)) * ", s.inner,
                               "u + e));\n}\n"));
      l.operands = {in0, {Operand::Kind::input, 1}, {Operand::Kind::output, 0}, {Operand::Kind::error, 0}};
      l.words = {0, static_cast<uint32_t>(total)};
      l.step_word = 0;
      l.push_bytes = sh.push_bytes();
      l.groups = grid_for(total, kThreads);
      return {l};
    }
    case Op::scatter: {
      // y = data, then each (outer, inner) position applies its updates in index order (so a
      // repeated index ends as the reference's sequential loop leaves it)
      const std::vector<int64_t> ds = dims(t.in[0]);
      const int64_t axis = codegen::normalize_axis(n.attrs.i("axis"), ds.size());
      const AxisSplit s = split(ds, axis);
      const int64_t k = shape_numel(t.in[1].shape).value(), lanes = s.outer * s.inner;
      std::vector<Launch> ls = {copy_launch(dt, shape_numel(out.shape).value(), in0)};
      if (k == 0 || lanes == 0) return ls;
      const std::string& red = n.attrs.s("reduce");
      const bool fl = is_float_class(dt);
      Shader sh;
      sh.buffer("idx", t.in[1].dtype, Access::read);
      sh.buffer("u", dt, Access::read);
      sh.buffer("y", dt, Access::read_write);
      sh.error_buffer();
      sh.push("n");
      sh.local_size(kThreads);
      std::string apply;
      const std::string c = fl ? "f" : "i";
      if (red == "none") apply = "y_st(d, u_ld(g));";
      else if (red == "add") apply = fl ? "y_wf(d, y_f(d) + u_f(g));" : "y_wi(d, y_i(d) + u_i(g));";
      else  // std::max/min's order: the kept value unless the update compares strictly past it
        apply = cat(fl ? "float" : "int64_t", " cur = y_", c, "(d), v = u_", c, "(g); y_w", c, "(d, ", red == "max" ? "cur < v" : "v < cur", " ? v : cur);");
      if (red == "none" && s.n * 4 <= (int64_t{1} << 30)) return scatter_by_owner(ls, t, s, k, scratch);
      Launch l;
      l.name = "scatter";
      l.source = sh.source(cat("void main() {\n  uint i = rlx_flat();\n  if (i >= p.n) return;\n", "  uint e = i % ", s.inner, "u, o = i / ", s.inner, "u;\n",
                               "  for (uint kk = 0u; kk < ", k, "u; ++kk) {\n", "    int64_t j = idx_i(kk);\n", "    if (j < 0l || j >= ", s.n,
                               "l) { rlx_index_error(j, ", s.n, "l); return; }\n", "    uint d = (o * ", s.n, "u + uint(j)) * ", s.inner, "u + e, g = (o * ", k,
                               "u + kk) * ", s.inner, "u + e;\n    ", apply, "\n  }\n}\n"));
      l.operands = {{Operand::Kind::input, 1}, {Operand::Kind::input, 2}, {Operand::Kind::output, 0}, {Operand::Kind::error, 0}};
      l.words = {0, static_cast<uint32_t>(lanes)};
      l.step_word = 0;
      l.push_bytes = sh.push_bytes();
      l.groups = grid_for(lanes, kThreads);
      ls.push_back(l);
      return ls;
    }
    default: throw Error(ErrorKind::internal, cat("vulkan: no movement kernel for ", ir::op_keyword(n.op)));
  }
}

}  // namespace rlx::backends::vulkan
