#include "ops/vjp_util.h"

namespace rlx::ops {

ValueId unbroadcast(Builder& b, ValueId grad, const Shape& target) {
  Shape gs = b.shape(grad);
  if (gs == target) return grad;
  size_t lead = gs.size() - target.size();
  Ints axes;
  for (size_t i = 0; i < gs.size(); ++i)
    if (i < lead || (target[i - lead] == Dim(1) && gs[i] != Dim(1))) axes.push_back(static_cast<int64_t>(i));
  ValueId r = axes.empty() ? grad : b.reduce(grad, "sum", axes, true);
  return b.reshape(r, target);
}

ValueId zeros_like(Builder& b, ValueId like) { return b.broadcast(b.scalar_like(like, 0.0), b.shape(like)); }

ValueId conj_if_complex(Builder& b, ValueId v) { return is_complex(b.dtype(v)) ? b.unary(Op::conj, v) : v; }

Ints invert_perm(const Ints& perm) {
  Ints inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inv[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  return inv;
}

}  // namespace rlx::ops
