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

}  // namespace rlx::ops
