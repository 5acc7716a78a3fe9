// Helpers shared by the reverse-mode rules.
#pragma once
#include "ops/builder.h"
#include "ops/rules.h"

namespace rlx::ops {

// Sums a gradient of a broadcast result back to the shape of the operand it came from.
ValueId unbroadcast(Builder& b, ValueId grad, const Shape& target);
// Zeros with the shape and dtype of `like`.
ValueId zeros_like(Builder& b, ValueId like);
// conj(v) for a complex value, v itself otherwise: a holomorphic f passes ḡ·conj(f′(z)) back
// (complex.cpp's convention), and real values are their own conjugates.
ValueId conj_if_complex(Builder& b, ValueId v);
// Inverse of a permutation.
Ints invert_perm(const Ints& perm);

// The reverse mode of op's decomposition: emits the decomposition of `op` on `in`, then walks
// it back from `cot` (one cotangent per output; kNoValue for none) with each emitted op's own
// gradient rule. Returns one gradient per input, zeros where none flows. A gradient op whose
// meaning is "the derivative of that decomposition" (splat_project_grad) decomposes to this, so
// a device's hand-derived kernel is checked against autodiff of the definition itself.
std::vector<ValueId> vjp_of_decomposition(Builder& b, Op op, const std::vector<ValueId>& in, const std::vector<ValueId>& cot, const Attrs& attrs);

}  // namespace rlx::ops
