// What a reduction computes, written once beside scalar.h: each kind folds its elements with the
// scalar op of its kind from that op's identity, and the extremum kinds follow one order —
// a NaN wins over every number (the first NaN, for the arg kinds), and among equals the lowest
// index is kept. Schedules (which lanes fold what, how partial results merge, the accumulator's
// width) stay the devices' own; the reference backend keeps its independent copy.
#pragma once
#include <cstdint>

#include "codegen/scalar.h"

namespace rlx::codegen {

enum class Reduction : uint8_t { sum, prod, max, min };

// The scalar op that folds two partial results of a kind: add, mul, max (NaN wins), min.
RLX_HD_CONSTEXPR Op fold_op(Reduction r) {
  return r == Reduction::sum ? Op::add : r == Reduction::prod ? Op::mul : r == Reduction::max ? Op::max : Op::min;
}

// Does value v at index j win over the kept value c at index `at` (at < 0: nothing kept yet)?
// The order of max/min and argmax/argmin, for either class (integers are never NaN); works for
// any j, at (merging partial results too).
RLX_EXEC_CHECK_DISABLE
template <class M>
RLX_HD bool wins(const M& m, bool is_max, typename M::V v, int64_t j, typename M::V c, int64_t at) {
  if (at < 0) return true;
  bool vn = m.nan(v), cn = m.nan(c);
  if (vn || cn) return vn && (!cn || j < at);
  if (v == c) return j < at;
  return is_max ? v > c : v < c;
}

}  // namespace rlx::codegen
