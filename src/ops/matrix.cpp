#include "ops/matrix.h"

#include "ops/vjp_util.h"

namespace rlx::ops::matrix {

namespace {

// j − i over the matrix axes of x, as i64 [m, n] (broadcast against the batch).
ValueId column_minus_row(Builder& b, ValueId x) {
  Shape s = b.shape(x);
  Shape mn = {s[s.size() - 2], s[s.size() - 1]};
  return b.sub(b.iota(mn, DType::i64, 1), b.iota(mn, DType::i64, 0));
}

}  // namespace

ValueId transpose(Builder& b, ValueId x) {
  Ints perm;
  int64_t r = static_cast<int64_t>(b.rank(x));
  for (int64_t i = 0; i < r - 2; ++i) perm.push_back(i);
  perm.push_back(r - 1);
  perm.push_back(r - 2);
  return b.transpose(x, perm);
}

ValueId matmul(Builder& b, ValueId x, ValueId y) {
  int64_t r = static_cast<int64_t>(b.rank(x));
  Ints batch;
  for (int64_t i = 0; i < r - 2; ++i) batch.push_back(i);
  return b.dot_general(x, y, {batch, batch}, {{r - 1}, {r - 2}});
}

ValueId tril(Builder& b, ValueId x, int64_t k) {
  ValueId keep = b.binary(Op::le, column_minus_row(b, x), b.scalar(DType::i64, static_cast<double>(k)));
  return b.select(keep, x, b.scalar_like(x, 0));
}

ValueId triu(Builder& b, ValueId x, int64_t k) {
  ValueId keep = b.binary(Op::ge, column_minus_row(b, x), b.scalar(DType::i64, static_cast<double>(k)));
  return b.select(keep, x, b.scalar_like(x, 0));
}

ValueId diagonal_only(Builder& b, ValueId x) {
  ValueId on = b.binary(Op::eq, column_minus_row(b, x), b.scalar(DType::i64, 0));
  return b.select(on, x, b.scalar_like(x, 0));
}

ValueId as_row(Builder& b, ValueId v) {
  Shape s = b.shape(v);
  s.insert(s.end() - 1, Dim(1));
  return b.reshape(v, s);
}

ValueId as_column(Builder& b, ValueId v) {
  Shape s = b.shape(v);
  s.push_back(Dim(1));
  return b.reshape(v, s);
}

ValueId diag_embed(Builder& b, ValueId v) {
  Shape s = b.shape(v);
  s.push_back(s.back());
  return diagonal_only(b, b.broadcast(as_row(b, v), s));
}

ValueId inverse_gaps(Builder& b, ValueId v) {
  ValueId gaps = b.sub(as_row(b, v), as_column(b, v));  // [i][j] = v[j] − v[i]
  ValueId on = b.binary(Op::eq, column_minus_row(b, gaps), b.scalar(DType::i64, 0));
  return b.select(on, b.scalar_like(v, 0), b.unary(Op::reciprocal, b.select(on, b.scalar_like(v, 1), gaps)));
}

ValueId identity_like(Builder& b, ValueId x) {
  ValueId on = b.binary(Op::eq, column_minus_row(b, x), b.scalar(DType::i64, 0));
  return b.broadcast(b.cast(on, b.dtype(x)), b.shape(x));
}

ValueId or_zeros(Builder& b, ValueId cot, ValueId like) { return cot == ir::kNoValue ? zeros_like(b, like) : cot; }

}  // namespace rlx::ops::matrix
