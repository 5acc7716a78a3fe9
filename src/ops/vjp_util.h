// Helpers shared by the reverse-mode rules.
#pragma once
#include "ops/builder.h"
#include "ops/rules.h"

namespace rlx::ops {

// Sums a gradient of a broadcast result back to the shape of the operand it came from.
ValueId unbroadcast(Builder& b, ValueId grad, const Shape& target);
// Zeros with the shape and dtype of `like`.
ValueId zeros_like(Builder& b, ValueId like);
// Inverse of a permutation.
Ints invert_perm(const Ints& perm);

}  // namespace rlx::ops
