#include "passes/precision.h"

#include <cmath>

#include "ops/builder.h"
#include "ops/weight_grid.h"
#include "passes/rewrite.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::passes {

Precision precision_from_name(const std::string& name) {
  if (name == "f32" || name.empty()) return Precision::f32;
  if (name == "bf16") return Precision::bf16;
  if (name == "f16") return Precision::f16;
  if (name == "amp") return Precision::amp;
  if (name == "amp-f16") return Precision::amp_f16;
  if (name == "int8") return Precision::int8;
  if (name == "int4") return Precision::int4;
  throw Error(ErrorKind::invalid_argument, cat("unknown precision '", name, "' (choose f32, bf16, f16, amp, amp-f16, int8 or int4)"));
}

const char* precision_name(Precision p) {
  switch (p) {
    case Precision::f32: return "f32";
    case Precision::bf16: return "bf16";
    case Precision::f16: return "f16";
    case Precision::amp: return "amp";
    case Precision::amp_f16: return "amp-f16";
    case Precision::int8: return "int8";
    case Precision::int4: return "int4";
  }
  return "?";
}

namespace {

// The constant weight of x[..., k] · W as [n, k] rows (a linear's, or a dot_general's contracted
// on one axis with no batch); nullopt for any other product.
std::optional<Tensor> constant_weight_rows(RewriteBuilder& b, Op op, const std::vector<ValueId>& in, const Attrs& attrs) {
  const bool linear = op == Op::linear;
  if ((op != Op::dot_general && !linear) || b.dtype(in[0]) != DType::f32 || attrs.has("out") || attrs.has("compute")) return std::nullopt;
  const ir::Node* w = b.graph().producer(in[1]);
  if (!w || w->op != Op::constant) return std::nullopt;
  const int64_t r = static_cast<int64_t>(b.rank(in[0]));
  Tensor wt = w->attrs.tensor("value");
  if (wt.dtype() != DType::f32 || wt.rank() != 2) return std::nullopt;
  if (!linear) {
    const ir::Intss& batch = attrs.intss("batch");
    const ir::Intss& contract = attrs.intss("contract");
    if (!batch[0].empty() || contract[0] != ir::Ints{r - 1} || contract[1].size() != 1) return std::nullopt;
    if (contract[1][0] == 0) wt = wt.transpose({1, 0});
  }
  return wt.contiguous();
}

// x[..., k] · W with W a constant f32 — [n, k] contracted on its dim 1 (a linear's weight) or
// [k, n] on dim 0 — becomes an integer product: W per output channel to int8 (symmetric, once,
// now), each row of x to int8 by its own max|x| as it is read, i8 · i8 summed in i32, and
// the sums scaled back by both scales. The rule runs after legalization, when linears are
// dot_generals; other products stay as they are.
Rule int8_matmul_rule() {
  return {"int8-matmul", [](RewriteBuilder& b, Op op, const std::vector<ValueId>& in, const Attrs& attrs) -> std::optional<std::vector<ValueId>> {
    // a device that runs hir.linear itself (the reference) still has it here
    const bool linear = op == Op::linear;
    auto rows = constant_weight_rows(b, op, in, attrs);
    if (!rows) return std::nullopt;
    const int64_t r = static_cast<int64_t>(b.rank(in[0]));
    const Tensor& wt = *rows;
    const int64_t n = wt.shape()[0], k = wt.shape()[1];
    if (n == 0 || k < 16) return std::nullopt;  // too small to gain anything
    const float* p = wt.data_as<float>();
    std::vector<double> codes(static_cast<size_t>(n * k)), scales(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j) {
      double amax = 0;
      for (int64_t i = 0; i < k; ++i) amax = std::max(amax, std::fabs(static_cast<double>(p[j * k + i])));
      double sc = amax > 0 ? amax / 127 : 1;
      scales[static_cast<size_t>(j)] = sc;
      for (int64_t i = 0; i < k; ++i) codes[static_cast<size_t>(j * k + i)] = std::nearbyint(p[j * k + i] / sc);
    }
    ValueId x = in[0];
    // per row: s = max|x| / 127 (a row of zeros: 1, any scale represents it); the q, k
    // and v products, which read the same x, share one quantize_rows after CSE
    std::vector<ValueId> qs = b.emit(Op::quantize_rows, {x}, Attrs{});
    ValueId q = qs[0], sx = qs[1];
    ValueId acc = b.emit_plain(Op::dot_general, {q, b.constant(Tensor::from_f64(DType::i8, {n, k}, codes))},
                               Attrs{{"contract", ir::Intss{{r - 1}, {1}}}, {"out", DType::i32}})[0];
    ValueId sw = b.constant(Tensor::from_f64(DType::f32, {n}, scales));
    // (acc · s_w) · s_x: both products over acc's shape, one fused region with what follows
    ValueId y = b.mul(b.mul(b.cast(acc, DType::f32), sw), sx);
    if (linear && in.size() > 2) y = b.add(y, in[2]);
    return std::vector<ValueId>{y};
  }};
}

// Weight-only int4: W on ops/weight_grid.h's int4 grid in groups of 32 (f16 scales), which is
// ggml's Q4_0, kept as those blocks and multiplied by dequant_matmul with f32 activations; x is
// padded with zeros where k is not whole blocks.
Rule int4_matmul_rule() {
  return {"int4-weights", [](RewriteBuilder& b, Op op, const std::vector<ValueId>& in, const Attrs& attrs) -> std::optional<std::vector<ValueId>> {
    auto wt = constant_weight_rows(b, op, in, attrs);
    if (!wt || wt->shape()[0] == 0 || wt->shape()[1] < 32) return std::nullopt;  // below one block: nothing to gain
    const ops::WeightGrid grid = ops::WeightGrid::parse("int4/g32");
    const ops::GridBlocks blocks = ops::packed_grid_blocks(ops::weight_grid_codes(*wt, grid), grid.bits);
    ValueId y = ops::packed_grid_product(b, in[0], b.constant(blocks.bytes), blocks, wt->shape()[0]);
    if (op == Op::linear && in.size() > 2) y = b.add(y, in[2]);
    return std::vector<ValueId>{y};
  }};
}

}  // namespace

ir::Graph apply_precision(const ir::Graph& g, Precision p) {
  if (p == Precision::f32) return g;
  if (p == Precision::int8) return rewrite(g, {int8_matmul_rule()}, "precision");
  if (p == Precision::int4) return rewrite(g, {int4_matmul_rule()}, "precision");
  // amp keeps f32 master weights and reductions; its matmuls run like bf16's (amp-f16: f16's)
  const bool half = p == Precision::f16 || p == Precision::amp_f16;
  const DType low = half ? DType::f16 : DType::bf16;
  Rule rule{half ? "f16-matmul" : "bf16-matmul", [low](RewriteBuilder& b, Op op, const std::vector<ValueId>& in, const Attrs& attrs) -> std::optional<std::vector<ValueId>> {
    if (op == Op::attention && b.dtype(in[0]) == DType::f32 && !attrs.has("compute")) {
      Attrs a = attrs;
      a.set("compute", low);
      return b.emit_plain(op, in, a, ir::Path::native);
    }
    if (op != Op::dot_general || b.dtype(in[0]) != DType::f32 || attrs.has("out") || attrs.has("compute")) return std::nullopt;
    // Explicit casts rather than compute=bf16: a cast of an activation fuses into the region
    // that produces it and is shared by every matmul reading it (q, k and v), and casts of
    // weights fold at compile time.
    Attrs a = attrs;
    a.set("out", DType::f32);
    return b.emit_plain(op, {b.cast(in[0], low), b.cast(in[1], low)}, a, ir::Path::native);
  }};
  return rewrite(g, {rule}, "precision");
}

}  // namespace rlx::passes
