// Complex numbers: building them from parts and taking them apart, with gradients. A complex
// tensor's gradient is ∂L/∂re + i·∂L/∂im (PyTorch's and JAX's convention for a real loss), so a
// holomorphic f passes ḡ·conj(f′(z)) back — vjp_elementwise.cpp conjugates for those.
#include "ops/builder.h"
#include "ops/infer_util.h"
#include "ops/rules.h"
#include "ops/vjp_util.h"

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

// g / d, and 0 where d = 0 (z = 0, where angle's and |z|'s gradients are undefined).
ValueId divide_where_nonzero(Builder& b, ValueId g, ValueId d) {
  ValueId zero = b.scalar_like(d, 0);
  ValueId at_zero = b.binary(Op::eq, d, zero);
  return b.select(at_zero, zero, b.div(g, b.select(at_zero, b.scalar_like(d, 1), d)));
}

// angle = atan2(im, re): ∂/∂re = −im/|z|², ∂/∂im = re/|z|².
V vjp_angle(Builder& b, const VjpArgs& a) {
  ValueId z = a.in[0];
  ValueId re = b.unary(Op::real, z), im = b.unary(Op::imag, z);
  ValueId s = divide_where_nonzero(b, a.cot[0], b.add(b.mul(re, re), b.mul(im, im)));
  return {complex_of(b, b.mul(b.unary(Op::neg, im), s), b.mul(re, s))};
}

}  // namespace

// |z|'s gradient, for vjp_elementwise: ḡ·z/|z|.
ValueId complex_abs_vjp(Builder& b, ValueId z, ValueId magnitude, ValueId g) {
  ValueId s = divide_where_nonzero(b, g, magnitude);
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
