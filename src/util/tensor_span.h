// The one rule every reader of shapes shares: a tensor's contiguous strides multiply its nonzero
// dims even when a zero dim leaves no elements, so the product of those dims must fit int64 for
// the shape to be laid out at all ([0, 2^40, 2^40] holds nothing and still cannot be).
#pragma once
#include <cstdint>

namespace rlx {

// Multiplies dim d into `span` (the product of the nonzero dims so far); false, leaving `span`
// as it was, when d or the product would pass INT64_MAX.
inline bool extend_span(uint64_t& span, uint64_t d) {
  constexpr uint64_t kMax = static_cast<uint64_t>(INT64_MAX);
  if (d > kMax || (d != 0 && span > kMax / d)) return false;
  if (d != 0) span *= d;
  return true;
}

}  // namespace rlx
