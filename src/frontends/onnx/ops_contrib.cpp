// com.microsoft contrib operators that exporters and ONNX Runtime's optimizers commonly emit:
// FusedMatMul, LayerNormalization, SimplifiedLayerNormalization, SkipLayerNormalization,
// SkipSimplifiedLayerNormalization, Gelu, FastGelu, BiasGelu, QuickGelu, BiasAdd, Attention,
// EmbedLayerNormalization.
#include <cmath>

#include "frontends/onnx/ops_util.h"
#include "rlx/error.h"

namespace rlx::frontends::onnx {

namespace {

std::vector<ValueId> one(ValueId v) { return {v}; }

ValueId swap_last2(FoldingBuilder& b, ValueId x) {
  int64_t r = static_cast<int64_t>(b.rank(x));
  if (r < 2) return x;
  Ints p = iota_ints(r);
  std::swap(p[static_cast<size_t>(r - 1)], p[static_cast<size_t>(r - 2)]);
  return b.transpose(x, p);
}

std::vector<ValueId> fused_matmul(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  if (c.attr_i("transBatchA", 0) || c.attr_i("transBatchB", 0)) c.fail("transBatchA/transBatchB");
  ValueId a = c.in(0), w = c.in(1);
  if (c.attr_i("transA", 0)) a = swap_last2(b, a);
  if (c.attr_i("transB", 0)) w = swap_last2(b, w);
  ValueId y = b.emit1(Op::matmul, {a, w});
  double alpha = c.attr_f("alpha", 1.0f);
  if (alpha != 1.0) y = b.mul(y, like(b, y, alpha));
  return one(y);
}

ValueId norm(FoldingBuilder& b, ValueId x, ValueId gamma, ValueId beta, double eps, bool simplified) {
  int64_t r = static_cast<int64_t>(b.rank(x));
  if (simplified) return b.emit1(Op::rms_norm, {x, gamma}, Attrs{{"axis", r - 1}, {"eps", eps}});
  std::vector<ValueId> in = {x, gamma};
  if (beta != kNoValue) in.push_back(beta);
  return b.emit1(Op::layer_norm, in, Attrs{{"axis", r - 1}, {"eps", eps}});
}

std::vector<ValueId> layer_norm(NodeCtx& c, bool simplified) {
  ValueId x = c.in(0);
  int64_t axis = c.axis(c.attr_i("axis", -1), c.rank(x));
  if (axis != c.rank(x) - 1) c.fail("normalization over more than the last axis");
  if (c.wants(1) || c.wants(2)) c.fail("the mean/inv_std_var outputs");
  return one(norm(c.b, x, c.in(1), c.has(2) && !simplified ? c.in(2) : kNoValue, c.attr_f("epsilon", 1e-5f), simplified));
}
std::vector<ValueId> ms_layer_norm(NodeCtx& c) { return layer_norm(c, false); }
std::vector<ValueId> ms_simplified_layer_norm(NodeCtx& c) { return layer_norm(c, true); }

// SkipLayerNormalization(input, skip, gamma, beta?, bias?): LN(input + skip + bias); the
// optional 4th output is the sum.
std::vector<ValueId> skip_layer_norm(NodeCtx& c, bool simplified) {
  FoldingBuilder& b = c.b;
  ValueId s = b.add(c.in(0), c.in(1));
  size_t bias_at = simplified ? 3 : 4;
  if (c.has(bias_at)) s = b.add(s, c.in(bias_at));
  if (c.wants(1) || c.wants(2)) c.fail("the mean/inv_std_var outputs");
  ValueId y = norm(b, s, c.in(2), !simplified && c.has(3) ? c.in(3) : kNoValue, c.attr_f("epsilon", 1e-12f), simplified);
  std::vector<ValueId> out = {y};
  size_t sum_at = 3;
  if (c.wants(sum_at)) {
    out.resize(sum_at + 1, kNoValue);
    out[sum_at] = s;
  }
  return out;
}
std::vector<ValueId> skip_ln(NodeCtx& c) { return skip_layer_norm(c, false); }
std::vector<ValueId> skip_simplified_ln(NodeCtx& c) { return skip_layer_norm(c, true); }

std::vector<ValueId> gelu(NodeCtx& c) { return one(c.b.emit1(Op::gelu, {c.in(0)})); }

std::vector<ValueId> fast_gelu(NodeCtx& c) {
  ValueId x = c.in(0);
  if (c.has(1)) x = c.b.add(x, c.in(1));
  return one(c.b.emit1(Op::gelu_tanh, {x}));
}

std::vector<ValueId> bias_gelu(NodeCtx& c) { return one(c.b.emit1(Op::gelu, {c.b.add(c.in(0), c.in(1))})); }

std::vector<ValueId> quick_gelu(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0);
  return one(b.mul(x, b.unary(Op::sigmoid, b.mul(x, like(b, x, c.attr_f("alpha", 1.702f))))));
}

std::vector<ValueId> bias_add(NodeCtx& c) { return one(c.b.add(c.b.add(c.in(0), c.in(1)), c.in(2))); }

// Attention(input [B,S,D], weights [D, 3H], bias [3H], mask_index?, past?, relative_position_bias?):
// one QKV projection, num_heads heads, scaled dot products with the mask turned into an additive
// bias of mask_filter_value, softmax, context [B,S,H]. Masks: none, key lengths [B], raw 0/1
// masks [B,S] or [B,S,S]; unidirectional adds the causal mask.
std::vector<ValueId> attention(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0), w = c.in(1);
  c.require_rank(x, 3, 3, "the input");
  c.require_rank(w, 2, 2, "the weights");
  if (c.has(4)) c.fail("past state (use the model without KV cache)");
  if (c.wants(1)) c.fail("the present output");
  int64_t heads = c.attr_i("num_heads", 0);
  Shape xs = c.shape(x), ws = c.shape(w);
  Ints qkv = c.attr_ints("qkv_hidden_sizes");
  if (!ws[1].is_static()) c.fail("symbolic weight dims");
  int64_t total = ws[1].value();
  if (qkv.empty()) qkv = {total / 3, total / 3, total / 3};
  if (qkv.size() != 3 || qkv[0] + qkv[1] + qkv[2] != total || heads <= 0 || qkv[0] % heads || qkv[2] % heads || qkv[0] != qkv[1])
    c.invalid("num_heads and qkv_hidden_sizes do not fit the weights");
  int64_t dk = qkv[0] / heads, dv = qkv[2] / heads;
  Dim B = xs[0], S = xs[1];
  ValueId p = b.dot_general(x, w, {{}, {}}, {{2}, {0}});  // [B, S, 3H]
  if (c.has(2)) p = b.add(p, c.in(2));
  auto head_split = [&](int64_t from, int64_t size, int64_t d) {
    ValueId t = b.slice_axis(p, 2, Dim(from), Dim(from + size));
    return b.transpose(b.reshape(t, {B, S, Dim(heads), Dim(d)}), {0, 2, 1, 3});  // [B, N, S, d]
  };
  ValueId q = head_split(0, qkv[0], dk), k = head_split(qkv[0], qkv[1], dk), v = head_split(qkv[0] + qkv[1], qkv[2], dv);
  double scale = c.attr_f("scale", 0.0f);
  if (scale == 0) scale = 1.0 / std::sqrt(static_cast<double>(dk));
  DType d = c.dtype(x);
  ValueId scores = b.mul(b.dot_general(q, k, {{0, 1}, {0, 1}}, {{3}, {3}}), b.scalar(d, scale));  // [B, N, S, S]
  double filter = c.attr_f("mask_filter_value", -10000.0f);
  if (c.has(3)) {
    ValueId m = c.in(3);
    ValueId keep;
    int64_t mr = c.rank(m);
    if (mr == 1) {  // key lengths (right padding)
      if (c.shape(m)[0] != B) c.fail("a 1-D mask_index other than key lengths [batch]");
      keep = b.binary(Op::lt, b.iota({B, Dim(1), Dim(1), S}, DType::i64, 3), b.reshape(b.cast(m, DType::i64), {B, Dim(1), Dim(1), Dim(1)}));
    } else if (mr == 2) {
      keep = b.binary(Op::ne, b.reshape(m, {B, Dim(1), Dim(1), S}), b.scalar(c.dtype(m), 0));
    } else if (mr == 3) {
      keep = b.binary(Op::ne, insert_axes(b, m, {1}), b.scalar(c.dtype(m), 0));
    } else {
      c.fail(cat("a rank-", mr, " mask_index"));
    }
    scores = b.add(scores, b.select(keep, b.scalar(d, 0.0), b.scalar(d, filter)));
  }
  if (c.attr_i("unidirectional", 0)) {
    ValueId causal = b.binary(Op::le, b.iota({S, S}, DType::i64, 1), b.iota({S, S}, DType::i64, 0));
    scores = b.add(scores, b.select(causal, b.scalar(d, 0.0), b.scalar(d, filter)));
  }
  if (c.has(5)) scores = b.add(scores, c.in(5));
  ValueId probs = b.emit1(Op::softmax, {scores}, Attrs{{"axis", int64_t{-1}}});
  ValueId ctx = b.dot_general(probs, v, {{0, 1}, {0, 1}}, {{3}, {2}});  // [B, N, S, dv]
  return one(b.reshape(b.transpose(ctx, {0, 2, 1, 3}), {B, S, Dim(heads * dv)}));
}

// EmbedLayerNormalization: word + position (+ segment) embeddings, LayerNorm; mask_index is the
// per-batch sum of the mask (int32), as ONNX Runtime computes it.
std::vector<ValueId> embed_layer_norm(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId ids = c.in(0), word = c.in(2), pos = c.in(3);
  c.require_rank(ids, 2, 2, "input_ids");
  Shape s = c.shape(ids);
  Dim B = s[0], S = s[1];
  ValueId e = b.gather(word, b.cast(ids, DType::i64), 0);  // [B, S, H]
  ValueId pids = c.has(8) ? b.cast(c.in(8), DType::i64) : b.iota({Dim(1), S}, DType::i64, 1);
  e = b.add(e, b.gather(pos, pids, 0));
  if (c.has(1) && c.has(4)) e = b.add(e, b.gather(c.in(4), b.cast(c.in(1), DType::i64), 0));
  ValueId y = b.emit1(Op::layer_norm, {e, c.in(5), c.in(6)}, Attrs{{"axis", int64_t{-1}}, {"eps", static_cast<double>(c.attr_f("epsilon", 1e-12f))}});
  std::vector<ValueId> out = {y};
  if (c.wants(1)) {
    ValueId mi = c.has(7) ? b.reduce(b.cast(c.in(7), DType::i32), "sum", {1}, false) : b.broadcast(b.cast(dim_value(b, S), DType::i32), {B});
    out.push_back(mi);
  }
  if (c.wants(2)) {
    out.resize(2, kNoValue);
    out.push_back(e);
  }
  return out;
}

}  // namespace

void register_contrib(OpTable& t) {
  t.insert(t.end(), {
                        {"com.microsoft", "FusedMatMul", 1, fused_matmul},
                        {"com.microsoft", "LayerNormalization", 1, ms_layer_norm},
                        {"com.microsoft", "SimplifiedLayerNormalization", 1, ms_simplified_layer_norm},
                        {"", "SimplifiedLayerNormalization", 1, ms_simplified_layer_norm},  // ORT registers it in ai.onnx too
                        {"com.microsoft", "SkipLayerNormalization", 1, skip_ln},
                        {"com.microsoft", "SkipSimplifiedLayerNormalization", 1, skip_simplified_ln},
                        {"com.microsoft", "Gelu", 1, gelu},
                        {"com.microsoft", "FastGelu", 1, fast_gelu},
                        {"com.microsoft", "BiasGelu", 1, bias_gelu},
                        {"com.microsoft", "QuickGelu", 1, quick_gelu},
                        {"com.microsoft", "BiasAdd", 1, bias_add},
                        {"com.microsoft", "Attention", 1, attention},
                        {"com.microsoft", "EmbedLayerNormalization", 1, embed_layer_norm},
                    });
}

}  // namespace rlx::frontends::onnx
