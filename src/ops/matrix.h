// Matrix building blocks over the last two axes (leading axes batch): the vocabulary the linear
// algebra gradients and decompositions are written in.
#pragma once
#include "ops/builder.h"

namespace rlx::ops::matrix {

// Xᵀ of every matrix in the batch.
ValueId transpose(Builder& b, ValueId x);
// X · Y per batch item: [.., m, k] · [.., k, n] → [.., m, n].
ValueId matmul(Builder& b, ValueId x, ValueId y);
// X with the entries j − i > k (band(x, k, true)) or j − i < k (band(x, k, false)) set to zero:
// numpy's tril(x, k) and triu(x, k).
ValueId tril(Builder& b, ValueId x, int64_t k = 0);
ValueId triu(Builder& b, ValueId x, int64_t k = 0);
// X's diagonal kept, the rest zero.
ValueId diagonal_only(Builder& b, ValueId x);
// diag(v) per batch item: [.., n] → [.., n, n].
ValueId diag_embed(Builder& b, ValueId v);
// v[.., n] as a row [.., 1, n] (axis −2 inserted) or a column [.., n, 1] (axis −1).
ValueId as_row(Builder& b, ValueId v);
ValueId as_column(Builder& b, ValueId v);
// 1 / (v[j] − v[i]) off the diagonal and 0 on it, per batch item: [.., n] → [.., n, n] (the
// coupling of eigen- and singular-vector gradients).
ValueId inverse_gaps(Builder& b, ValueId v);
// The identity of x's matrix shape and dtype, batched as x.
ValueId identity_like(Builder& b, ValueId x);
// The cotangent, or zeros of the value's type where none reaches it.
ValueId or_zeros(Builder& b, ValueId cot, ValueId like);

}  // namespace rlx::ops::matrix
