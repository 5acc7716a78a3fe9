// com.microsoft contrib operators that exporters and ONNX Runtime's optimizers commonly emit:
// FusedMatMul, LayerNormalization, SimplifiedLayerNormalization, SkipLayerNormalization,
// SkipSimplifiedLayerNormalization, Gelu, FastGelu, BiasGelu, QuickGelu, BiasAdd.
#include "formats/onnx/ops_util.h"
#include "rlx/error.h"

namespace rlx::formats::onnx {

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
                    });
}

}  // namespace rlx::formats::onnx
