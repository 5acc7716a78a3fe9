// Elementwise kernels — every op of the table's elementwise class, select, cast — and iota: one
// element per invocation, each operand addressed through its broadcast strides over the
// collapsed iteration space. The arithmetic is scalar.h's, printed by the GLSL dialect in the
// operands' compute class (float for f32/f16/bf16, 64-bit wrapping integers otherwise).
#include "backends/vulkan/context.h"
#include "backends/vulkan/kernels.h"
#include "backends/vulkan/shader.h"
#include "codegen/dialect_glsl.h"
#include "codegen/index_map.h"
#include "codegen/scalar.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::backends::vulkan {

namespace {

constexpr uint32_t kThreads = 256;

// The class an op computes in: its value operands' (select's condition aside).
codegen::ValueClass class_of(ir::Op op, const std::vector<ir::Type>& in) {
  const ir::Type& v = op == ir::Op::select ? in[1] : in[0];
  return is_float_class(v.dtype) ? codegen::ValueClass::floating : codegen::ValueClass::integer;
}

}  // namespace

bool broadcasts_to(const Shape& s, const Shape& o) {
  if (s.size() > o.size()) return false;
  for (size_t d = 0; d < s.size(); ++d) {
    const Dim& a = s[s.size() - 1 - d];
    if (a != Dim(1) && a != o[o.size() - 1 - d]) return false;
  }
  return true;
}

bool indexable(const ir::Type& t) { return !shape_is_static(t.shape) || shape_numel(t.shape).value() < (int64_t{1} << 31); }

std::vector<int64_t> dims(const ir::Type& t) {
  std::vector<int64_t> v;
  for (const Dim& d : t.shape) v.push_back(d.value());
  return v;
}

std::array<uint32_t, 3> grid_for(int64_t n, uint32_t per_group) {
  const int64_t groups = std::max<int64_t>(1, (n + per_group - 1) / per_group);
  if (groups <= 65535) return {static_cast<uint32_t>(groups), 1, 1};
  return {65535u, static_cast<uint32_t>((groups + 65534) / 65535), 1};
}

std::string index_code(const std::vector<int64_t>& shape, const std::vector<std::pair<std::string, std::vector<int64_t>>>& operands,
                       const std::string& flat) {
  const std::vector<int64_t> contiguous = contiguous_strides(shape);
  bool all_contiguous = true;
  for (const auto& [name, st] : operands) all_contiguous = all_contiguous && st == contiguous;
  std::string s;
  if (all_contiguous) {
    for (const auto& [name, st] : operands) s += cat("  uint ", name, "_at = ", flat, ";\n");
    return s;
  }
  s += cat("  uint r_ = ", flat, ";\n");
  for (size_t d = shape.size(); d-- > 0;) {
    if (d == 0) s += "  uint c0 = r_;\n";
    else s += cat("  uint c", d, " = r_ % ", shape[d], "u; r_ /= ", shape[d], "u;\n");
  }
  for (const auto& [name, st] : operands) {
    std::string at = "0u";
    for (size_t d = 0; d < shape.size(); ++d)
      if (st[d]) at += cat(" + c", d, " * ", st[d], "u");
    s += cat("  uint ", name, "_at = ", at, ";\n");
  }
  return s;
}

std::string offset_function(const std::string& fn, const std::vector<int64_t>& shape, const std::vector<int64_t>& strides) {
  std::string s = cat("uint ", fn, "(uint q) {\n");
  if (shape.empty()) return s + "  return 0u;\n}\n";
  if (shape.size() == 1) return s + cat("  return q * ", strides[0], "u;\n}\n");
  s += "  uint o = 0u;\n";
  for (size_t d = shape.size(); d-- > 1;) s += cat("  o += (q % ", shape[d], "u) * ", strides[d], "u; q /= ", shape[d], "u;\n");
  return s + cat("  return o + q * ", strides[0], "u;\n}\n");
}

bool claims_elementwise(ir::Op op, const NodeTypes& t, const Features& f) {
  if (op == ir::Op::iota) return t.out.size() == 1 && indexable(t.out[0]) && storable(t.out[0].dtype, f);
  if (!codegen::is_elementwise(op) || t.out.size() != 1 || t.in.empty() || t.in.size() > 3) return false;
  const ir::Type& o = t.out[0];
  if (!indexable(o) || !storable(o.dtype, f)) return false;
  for (const ir::Type& x : t.in)
    if (!indexable(x) || !storable(x.dtype, f) || !broadcasts_to(x.shape, o.shape)) return false;
  if (op == ir::Op::cast) return t.in[0].shape == o.shape;
  return codegen::defines(class_of(op, t.in), op);
}

// The kernel over operands broadcasting to `out` in `cls`, stored as the given dtypes.
std::string broadcast_index_code(const std::vector<ir::Type>& in, const ir::Type& out) {
  const std::vector<int64_t> out_shape = dims(out);
  std::vector<int64_t> shape = out_shape;
  std::vector<std::vector<int64_t>> strides;
  for (const ir::Type& x : in) strides.push_back(codegen::broadcast_strides(out_shape, dims(x)));
  std::vector<int64_t> out_strides = contiguous_strides(out_shape);
  std::vector<std::vector<int64_t>*> ptrs{&out_strides};
  for (auto& st : strides) ptrs.push_back(&st);
  codegen::collapse_dims(shape, ptrs);
  std::vector<std::pair<std::string, std::vector<int64_t>>> ops;
  for (size_t k = 0; k < in.size(); ++k) ops.push_back({cat("x", k), strides[k]});
  return index_code(shape, ops);
}

static std::string elementwise_source(ir::Op op, const std::vector<ir::Type>& in, const ir::Type& out) {
  Shader sh;
  for (size_t k = 0; k < in.size(); ++k) sh.buffer(cat("x", k), in[k].dtype, Access::read);
  sh.buffer("y", out.dtype, Access::write);
  sh.push("n");
  sh.local_size(kThreads);
  std::string body = "void main() {\n  uint i = rlx_flat();\n  if (i >= p.n) return;\n" + broadcast_index_code(in, out);
  if (op == ir::Op::cast) {
    // float sources convert through float (saturating into integers), the rest through int64
    body += is_float_class(in[0].dtype) ? "  y_wf(i, x0_f(x0_at));\n" : "  y_wi(i, x0_i(x0_at));\n";
    return sh.source(body + "}\n");
  }
  const codegen::ValueClass cls = class_of(op, in);
  const bool fl = cls == codegen::ValueClass::floating;
  std::vector<std::string> operands;
  for (size_t k = 0; k < in.size(); ++k) {
    body += cat("  ", fl ? "float" : "int64_t", " v", k, " = x", k, fl ? "_f(" : "_i(", "x", k, "_at);\n");
    operands.push_back(cat("v", k));
  }
  body += cat("  y_w", fl ? "f" : "i", "(i, ", codegen::print_scalar(kernel_dialect(), cls, op, operands), ");\n}\n");
  return sh.source(body);
}

std::vector<Launch> elementwise_launches(const ir::Node& n, const NodeTypes& t) {
  Launch l;
  const int64_t count = shape_numel(t.out[0].shape).value();
  if (n.op == ir::Op::iota) {
    // the coordinate along `axis` of each element
    std::vector<int64_t> shape = dims(t.out[0]);
    int64_t axis = codegen::normalize_axis(n.attrs.i("axis"), shape.size());
    int64_t inner = 1;
    for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
    Shader sh;
    sh.buffer("y", t.out[0].dtype, Access::write);
    sh.push("n");
    sh.local_size(kThreads);
    l.name = "iota";
    l.source = sh.source(cat("void main() {\n  uint i = rlx_flat();\n  if (i >= p.n) return;\n  y_wi(i, int64_t((i / ", inner, "u) % ",
                             shape[static_cast<size_t>(axis)], "u));\n}\n"));
    l.operands = {{Operand::Kind::output, 0}};
    l.push_bytes = sh.push_bytes();
  } else {
    l.name = ir::op_keyword(n.op);
    l.source = elementwise_source(n.op, t.in, t.out[0]);
    for (size_t k = 0; k < t.in.size(); ++k) l.operands.push_back({Operand::Kind::input, static_cast<int>(k)});
    l.operands.push_back({Operand::Kind::output, 0});
    l.push_bytes = pushed_bytes(t.in.size() + 2);
  }
  l.words = {static_cast<uint32_t>(count)};
  l.groups = grid_for(count, kThreads);
  return {l};
}

std::string elementwise_shader(ir::Op op, const std::vector<std::vector<int64_t>>& in_shapes, const std::vector<int64_t>& out_shape) {
  auto type = [](const std::vector<int64_t>& s) {
    Shape sh;
    for (int64_t d : s) sh.push_back(Dim(d));
    return ir::Type{DType::f32, sh};
  };
  std::vector<ir::Type> in;
  for (const auto& s : in_shapes) in.push_back(type(s));
  return elementwise_source(op, in, type(out_shape));
}

}  // namespace rlx::backends::vulkan
