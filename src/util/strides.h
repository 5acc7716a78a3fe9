// Row-major element strides of a contiguous tensor (the last dim has stride 1).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace rlx {

inline std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> st(shape.size());
  int64_t s = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    st[i] = s;
    s *= shape[i];
  }
  return st;
}

}  // namespace rlx
