#include "backends/reference/kernels.h"

namespace rlx::backends::reference {

std::vector<int64_t> strides_of(const std::vector<int64_t>& shape) {
  std::vector<int64_t> st(shape.size());
  int64_t s = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    st[i] = s;
    s *= shape[i];
  }
  return st;
}

void unravel(int64_t i, const std::vector<int64_t>& shape, std::vector<int64_t>& coord) {
  coord.resize(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    coord[d] = shape[d] ? i % shape[d] : 0;
    i = shape[d] ? i / shape[d] : 0;
  }
}

std::vector<int64_t> broadcast_index(const std::vector<int64_t>& out_shape, const std::vector<int64_t>& in_shape) {
  int64_t n = 1;
  for (int64_t d : out_shape) n *= d;
  std::vector<int64_t> in_st = strides_of(in_shape);
  size_t off = out_shape.size() - in_shape.size();
  std::vector<int64_t> out(static_cast<size_t>(n)), coord;
  for (int64_t i = 0; i < n; ++i) {
    unravel(i, out_shape, coord);
    int64_t idx = 0;
    for (size_t d = 0; d < in_shape.size(); ++d)
      if (in_shape[d] != 1) idx += coord[off + d] * in_st[d];
    out[static_cast<size_t>(i)] = idx;
  }
  return out;
}

int64_t norm_axis(int64_t axis, size_t rank) { return axis < 0 ? axis + static_cast<int64_t>(rank) : axis; }

}  // namespace rlx::backends::reference
