// The elementwise ops as the op table lists them, for backends that instantiate one kernel per
// op at compile time: for_each_scalar_op<N>(f) calls f(std::integral_constant<Op, op>{}) for
// every elementwise op of arity N (cast aside: its rules are a conversion, not arithmetic).
// Adding an op to ops.def and its arithmetic to scalar.h is all a device built on this needs.
#pragma once
#include <type_traits>

#include "codegen/scalar.h"

namespace rlx::codegen {

template <int N, class F>
void for_each_scalar_op(F&& f) {
  using ir::kBroadcast;
  using ir::kCommutative;
  using ir::kElementwise;
  using ir::kView;
  using ir::kCollective;
#define RLX_OP(name, level, min_in, max_in, outs, attrs, traits)                                         \
  if constexpr (((traits) & kElementwise) != 0 && (max_in) == N && Op::name != Op::cast) { \
    f(std::integral_constant<Op, Op::name>{});                                                          \
  }
#include "ir/ops.def"
#undef RLX_OP
}

}  // namespace rlx::codegen
