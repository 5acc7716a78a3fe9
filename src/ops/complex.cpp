// Complex numbers: building them from parts and taking them apart, with gradients. A complex
// tensor's gradient is ∂L/∂re + i·∂L/∂im (PyTorch's and JAX's convention for a real loss), so a
// holomorphic f passes ḡ·conj(f′(z)) back — vjp_elementwise.cpp conjugates for those.
#include "ops/builder.h"
#include "ops/infer_util.h"
#include "ops/rules.h"

namespace rlx::ops {

namespace {

using V = std::vector<ValueId>;

void require_complex(Op op, const Type& t) {
  if (!is_complex(t.dtype)) type_error(op, cat("takes a complex tensor (c64 or c128), got ", dtype_name(t.dtype)));
}

std::vector<Type> infer_complex(Op op, const std::vector<Type>& in, const Attrs&) {
  require_same_dtype(op, in, 0, 1);
  auto c = complex_dtype_of(in[0].dtype);
  if (!c) type_error(op, cat("the parts must be f32 or f64, got ", dtype_name(in[0].dtype)));
  if (in[0].shape != in[1].shape) type_error(op, cat("the real part ", shape_str(in[0].shape), " and imaginary part ", shape_str(in[1].shape), " differ in shape"));
  return {{*c, in[0].shape}};
}

std::vector<Type> infer_part(Op op, const std::vector<Type>& in, const Attrs&) {
  require_complex(op, in[0]);
  return {{real_part_dtype(in[0].dtype), in[0].shape}};
}

std::vector<Type> infer_conj(Op op, const std::vector<Type>& in, const Attrs&) {
  require_complex(op, in[0]);
  return {in[0]};
}

ValueId complex_of(Builder& b, ValueId re, ValueId im) { return b.emit1(Op::complex, {re, im}); }

V vjp_complex(Builder& b, const VjpArgs& a) { return {b.unary(Op::real, a.cot[0]), b.unary(Op::imag, a.cot[0])}; }
V vjp_real(Builder& b, const VjpArgs& a) { return {complex_of(b, a.cot[0], b.broadcast(b.scalar_like(a.cot[0], 0), b.shape(a.cot[0])))}; }
V vjp_imag(Builder& b, const VjpArgs& a) { return {complex_of(b, b.broadcast(b.scalar_like(a.cot[0], 0), b.shape(a.cot[0])), a.cot[0])}; }
V vjp_conj(Builder& b, const VjpArgs& a) { return {b.unary(Op::conj, a.cot[0])}; }

// angle = atan2(im, re): ∂/∂re = −im/|z|², ∂/∂im = re/|z|²; zero at z = 0, where it is undefined.
V vjp_angle(Builder& b, const VjpArgs& a) {
  ValueId z = a.in[0], g = a.cot[0];
  ValueId re = b.unary(Op::real, z), im = b.unary(Op::imag, z);
  ValueId r2 = b.add(b.mul(re, re), b.mul(im, im));
  ValueId zero = b.scalar_like(r2, 0);
  ValueId s = b.select(b.binary(Op::eq, r2, zero), zero, b.div(g, b.select(b.binary(Op::eq, r2, zero), b.scalar_like(r2, 1), r2)));
  return {complex_of(b, b.mul(b.unary(Op::neg, im), s), b.mul(re, s))};
}

}  // namespace

// |z|'s gradient, for vjp_elementwise: ḡ·z/|z| (zero at z = 0).
ValueId complex_abs_vjp(Builder& b, ValueId z, ValueId magnitude, ValueId g) {
  ValueId zero = b.scalar_like(magnitude, 0);
  ValueId at_zero = b.binary(Op::eq, magnitude, zero);
  ValueId s = b.select(at_zero, zero, b.div(g, b.select(at_zero, b.scalar_like(magnitude, 1), magnitude)));
  return complex_of(b, b.mul(b.unary(Op::real, z), s), b.mul(b.unary(Op::imag, z), s));
}

void register_complex(RuleTable& t) {
  auto set = [&](Op op, InferFn f, VjpFn v) {
    t[static_cast<size_t>(op)].infer = f;
    t[static_cast<size_t>(op)].vjp = v;
  };
  set(Op::complex, infer_complex, vjp_complex);
  set(Op::real, infer_part, vjp_real);
  set(Op::imag, infer_part, vjp_imag);
  set(Op::conj, infer_conj, vjp_conj);
  set(Op::angle, infer_part, vjp_angle);
}

}  // namespace rlx::ops
