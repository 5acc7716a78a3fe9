#include "passes/rewrites.h"

#include "ops/rules.h"
#include "rlx/error.h"

namespace rlx::passes {

namespace {

// Promotion keeps results exact or better: f16/bf16 compute in f32 and round once; small
// integers compute in i32 and wrap back, which is the same modular arithmetic.
std::optional<DType> promoted(DType d) {
  switch (d) {
    case DType::f16:
    case DType::bf16: return DType::f32;
    case DType::i8:
    case DType::u8:
    case DType::i16: return DType::i32;
    default: return std::nullopt;
  }
}

bool promotable_op(Op op) {
  // Casts and constants are the tools of promotion; pow is not modular over integers.
  return op != Op::cast && op != Op::constant && op != Op::pow;
}

Attrs promote_attrs(Op op, const Attrs& a) {
  Attrs out = a;
  for (const char* key : {"dtype", "out"}) {
    const ir::AttrValue* v = a.find(key);
    if (!v) continue;
    if (auto p = promoted(std::get<DType>(*v))) out.set(key, *p);
  }
  (void)op;
  return out;
}

std::vector<Type> promote_types(const std::vector<Type>& in) {
  std::vector<Type> out = in;
  for (auto& t : out)
    if (auto p = promoted(t.dtype)) t.dtype = *p;
  return out;
}

bool promote_applies(const KernelClaims& device, Op op, const std::vector<Type>& in, const std::vector<Type>& out, const Attrs& attrs) {
  if (!promotable_op(op)) return false;
  std::vector<Type> pin = promote_types(in);
  Attrs pattrs = promote_attrs(op, attrs);
  if (pin == in && pattrs == attrs) return false;
  std::vector<Type> pout;
  try {
    pout = ops::infer_types(op, pin, pattrs);
  } catch (const Error&) {
    return false;
  }
  if (pout.size() != out.size()) return false;
  if (!device.claims(op, pin, pout, pattrs)) return false;
  // Casting back must be native too, or the rewrite only moves the problem.
  for (size_t i = 0; i < in.size(); ++i)
    if (pin[i].dtype != in[i].dtype && !device.claims(Op::cast, {in[i]}, {pin[i]}, Attrs{{"to", pin[i].dtype}})) return false;
  for (size_t i = 0; i < out.size(); ++i)
    if (pout[i].dtype != out[i].dtype && !device.claims(Op::cast, {pout[i]}, {out[i]}, Attrs{{"to", out[i].dtype}})) return false;
  return true;
}

std::vector<ValueId> promote_apply(RewriteBuilder& b, Op op, const std::vector<ValueId>& in, const Attrs& attrs) {
  std::vector<Type> in_types;
  for (ValueId v : in) in_types.push_back(b.type(v));
  std::vector<Type> out_types = ops::infer_types(op, in_types, attrs);
  std::vector<ValueId> pin;
  for (ValueId v : in) {
    auto p = promoted(b.dtype(v));
    pin.push_back(p ? b.cast(v, *p) : v);
  }
  auto outs = b.emit(op, pin, promote_attrs(op, attrs));
  for (size_t i = 0; i < outs.size(); ++i) outs[i] = b.cast(outs[i], out_types[i].dtype);
  return outs;
}

// dot_general{compute=T} on wider operands → casts to T and dot_general{out=…}: the same
// numbers for a device that has no kernel rounding inside.
Attrs without_compute(const Attrs& a, DType out) {
  Attrs b = a;
  b.erase("compute");
  b.set("out", out);
  return b;
}

bool compute_applies(const KernelClaims& device, Op op, const std::vector<Type>& in, const std::vector<Type>& out, const Attrs& attrs) {
  if (op != Op::dot_general || !attrs.has("compute")) return false;
  DType c = attrs.dtype("compute");
  std::vector<Type> cin = in;
  for (auto& t : cin) t.dtype = c;
  if (!device.claims(op, cin, out, without_compute(attrs, out[0].dtype))) return false;
  for (const auto& t : in)
    if (t.dtype != c && !device.claims(Op::cast, {t}, {Type{c, t.shape}}, Attrs{{"to", c}})) return false;
  return true;
}

std::vector<ValueId> compute_apply(RewriteBuilder& b, Op op, const std::vector<ValueId>& in, const Attrs& attrs) {
  DType c = attrs.dtype("compute");
  std::vector<Type> in_types = {b.type(in[0]), b.type(in[1])};
  DType out = ops::infer_types(op, in_types, attrs)[0].dtype;
  return b.emit(op, {b.cast(in[0], c), b.cast(in[1], c)}, without_compute(attrs, out));
}

}  // namespace

const std::vector<Rewrite>& registered_rewrites() {
  static const std::vector<Rewrite> r = {
      {"promote (f16/bf16→f32, i8/u8/i16→i32) with casts", promote_applies, promote_apply},
      {"compute=T as casts to T", compute_applies, compute_apply},
  };
  return r;
}

}  // namespace rlx::passes
