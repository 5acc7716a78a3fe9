#include "models/pooling_graph.h"

namespace rlx::models {

using ir::Op;
using ir::ValueId;

namespace {

// Σ_s x[b, s, :] · w[b, s] / max(Σ_s w[b, s], 1e-9), with w f32[B, S, 1]
ValueId weighted_sum(ops::Builder& b, ValueId x, ValueId w) { return b.reduce(b.mul(x, w), "sum", {1}, false); }
ValueId clamped_count(ops::Builder& b, ValueId w) {
  return b.max(b.reduce(w, "sum", {1}, false), b.scalar(DType::f32, 1e-9));
}

}  // namespace

ValueId emit_pooling(ops::Builder& b, ValueId x, ValueId mask, const PoolingSpec& pooling) {
  Shape xs = b.shape(x);  // [B, S, H]
  const Dim &B = xs[0], &S = xs[1], &H = xs[2];
  ValueId m = b.reshape(b.cast(mask, DType::f32), {B, S, Dim(1)});
  std::vector<ValueId> parts;
  for (PoolingMode mode : pooling.modes) {
    switch (mode) {
      case PoolingMode::cls:
        parts.push_back(b.reshape(b.slice_axis(x, 1, Dim(0), Dim(1)), {B, H}));
        break;
      case PoolingMode::max: {
        // Padding positions become -1e9 before the max, as sentence-transformers does.
        ValueId keep = b.binary(Op::ne, m, b.scalar(DType::f32, 0.0));
        parts.push_back(b.reduce(b.select(keep, x, b.scalar(DType::f32, -1e9)), "max", {1}, false));
        break;
      }
      case PoolingMode::mean:
        parts.push_back(b.div(weighted_sum(b, x, m), clamped_count(b, m)));
        break;
      case PoolingMode::mean_sqrt_len:
        parts.push_back(b.div(weighted_sum(b, x, m), b.unary(Op::sqrt, clamped_count(b, m))));
        break;
      case PoolingMode::weighted_mean: {
        // Token s weighs s + 1.
        ValueId pos = b.add(b.iota({Dim(1), S, Dim(1)}, DType::f32, 1), b.scalar(DType::f32, 1.0));
        ValueId w = b.mul(m, pos);
        parts.push_back(b.div(weighted_sum(b, x, w), clamped_count(b, w)));
        break;
      }
      case PoolingMode::last_token: {
        // The last real token of a right-padded row sits at Σ mask − 1.
        ValueId last = b.sub(b.reduce(mask, "sum", {1}, true), b.scalar(DType::i64, 1.0));  // [B, 1]
        ValueId at = b.binary(Op::eq, b.iota({Dim(1), S}, DType::i64, 1), last);            // [B, S]
        ValueId onehot = b.reshape(b.cast(at, DType::f32), {B, S, Dim(1)});
        parts.push_back(weighted_sum(b, x, b.mul(onehot, m)));
        break;
      }
    }
  }
  ValueId out = parts.size() == 1 ? parts[0] : b.concat(parts, 1);
  if (pooling.normalize) {
    // F.normalize: x / max(‖x‖₂, 1e-12)
    ValueId norm = b.unary(Op::sqrt, b.reduce(b.mul(out, out), "sum", {1}, true));
    out = b.div(out, b.max(norm, b.scalar(DType::f32, 1e-12)));
  }
  return out;
}

}  // namespace rlx::models
