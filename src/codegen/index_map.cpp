#include "codegen/index_map.h"

namespace rlx::codegen {

std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& out, const std::vector<int64_t>& in) {
  std::vector<int64_t> cs = contiguous_strides(in), st(out.size(), 0);
  size_t off = out.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d) st[off + d] = in[d] == 1 ? 0 : cs[d];
  return st;
}

void collapse_dims(std::vector<int64_t>& shape, const std::vector<std::vector<int64_t>*>& strides) {
  std::vector<int64_t> s;
  std::vector<std::vector<int64_t>> st(strides.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    bool merge = !s.empty();
    for (size_t k = 0; k < strides.size() && merge; ++k) merge = st[k].back() == (*strides[k])[d] * shape[d];
    if (merge) {
      s.back() *= shape[d];
      for (size_t k = 0; k < strides.size(); ++k) st[k].back() = (*strides[k])[d];
    } else {
      s.push_back(shape[d]);
      for (size_t k = 0; k < strides.size(); ++k) st[k].push_back((*strides[k])[d]);
    }
  }
  shape = s;
  for (size_t k = 0; k < strides.size(); ++k) *strides[k] = st[k];
}

}  // namespace rlx::codegen
