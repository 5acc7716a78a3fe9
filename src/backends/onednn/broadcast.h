// Operands broadcast to an output (numpy rules), laid out for a row split: the leading dims in
// which each operand either runs along the output or stays constant become the rows, and a
// share of n rows sees every operand as [n or 1, its remaining dims…].
#pragma once
#include <cstdint>
#include <vector>

#include "backends/onednn/oneapi.h"

namespace rlx::backends::onednn {

class BroadcastLayout {
 public:
  BroadcastLayout(const std::vector<int64_t>& out, const std::vector<std::vector<int64_t>>& operands) : out_(out) {
    size_t r = out.size();
    for (const auto& s : operands) {
      std::vector<int64_t> p(r - std::min(r, s.size()), 1);
      p.insert(p.end(), s.begin(), s.end());
      padded_.push_back(p);
    }
    // the longest prefix over which every operand is either the output's dims or all ones
    size_t k = 0;
    for (; k < r; ++k) {
      bool ok = true;
      for (const auto& p : padded_) {
        bool along = true, ones = true;
        for (size_t d = 0; d <= k; ++d) {
          along = along && p[d] == out[d];
          ones = ones && p[d] == 1;
        }
        ok = ok && (along || ones);
      }
      if (!ok) break;
    }
    lead_ = k;
    for (size_t d = 0; d < k; ++d) rows_ *= out[d];
    for (const auto& p : padded_) {
      bool along = true;
      for (size_t d = 0; d < k; ++d) along = along && p[d] == out[d];
      along_.push_back(along && k > 0);
    }
    merge_inner();
  }
  int64_t rows() const { return rows_; }
  // Elements of the output in one row.
  int64_t row_elems() const { return prod(out_, lead_); }
  // Whether operand i equals the output's shape (no broadcasting at all).
  bool full(size_t i) const { return padded_[i] == out_; }
  // Dims of the output / operand i in a share of n rows.
  std::vector<int64_t> out_dims(int64_t n) const { return dims(out_, n); }
  std::vector<int64_t> operand_dims(size_t i, int64_t n) const { return dims(padded_[i], along_[i] ? n : 1); }
  // Element strides that read operand i as if it had the output's dims (out_dims(n)): zero
  // along its broadcast dims — how oneDNN takes a broadcast operand where it wants full dims.
  std::vector<int64_t> operand_view_strides(size_t i, int64_t n) const {
    std::vector<int64_t> own = operand_dims(i, n), full = out_dims(n), st(own.size(), 0);
    int64_t step = 1;
    for (size_t d = own.size(); d-- > 0;) {
      st[d] = own[d] == 1 && full[d] != 1 ? 0 : step;
      step *= own[d];
    }
    return st;
  }
  // Bytes from one row of operand i to the next (0 where each share reads all of it).
  int64_t operand_row_bytes(size_t i, size_t elem) const { return along_[i] ? prod(padded_[i], lead_) * static_cast<int64_t>(elem) : 0; }
  int64_t out_row_bytes(size_t elem) const { return row_elems() * static_cast<int64_t>(elem); }

 private:
  static int64_t prod(const std::vector<int64_t>& v, size_t from) {
    int64_t p = 1;
    for (size_t d = from; d < v.size(); ++d) p *= v[d];
    return p;
  }
  std::vector<int64_t> dims(const std::vector<int64_t>& v, int64_t n) const {
    std::vector<int64_t> d{n};
    d.insert(d.end(), v.begin() + static_cast<std::ptrdiff_t>(lead_), v.end());
    return d;
  }
  // After the rows, dims of extent 1 go and neighbours every operand treats alike (each runs
  // along both, or is 1 in both) become one: [B,12,128,128] + [B,1,1,128] is [B,1536,128] +
  // [B,1,128], the forms oneDNN's jit kernels recognise as plain broadcasts.
  void merge_inner() {
    std::vector<int64_t> out(out_.begin(), out_.begin() + static_cast<std::ptrdiff_t>(lead_));
    std::vector<std::vector<int64_t>> ops(padded_.size());
    for (size_t i = 0; i < ops.size(); ++i) ops[i].assign(padded_[i].begin(), padded_[i].begin() + static_cast<std::ptrdiff_t>(lead_));
    std::vector<bool> prev;  // the last kept dim's pattern: operand i runs along it
    for (size_t d = lead_; d < out_.size(); ++d) {
      if (out_[d] == 1) continue;
      std::vector<bool> along;
      for (const auto& p : padded_) along.push_back(p[d] != 1);
      if (out.size() > lead_ && along == prev) {
        out.back() *= out_[d];
        for (size_t i = 0; i < ops.size(); ++i) ops[i].back() *= padded_[i][d];
      } else {
        out.push_back(out_[d]);
        for (size_t i = 0; i < ops.size(); ++i) ops[i].push_back(padded_[i][d]);
      }
      prev = along;
    }
    out_ = out;
    padded_ = ops;
  }
  std::vector<int64_t> out_;
  std::vector<std::vector<int64_t>> padded_;
  std::vector<bool> along_;
  size_t lead_ = 0;
  int64_t rows_ = 1;
};

}  // namespace rlx::backends::onednn
