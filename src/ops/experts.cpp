// expert_matmul (HIR): a mixture-of-experts layer's products, each token's rows multiplied by
// the weight matrices of the experts it was routed to.
#include "ops/builder.h"
#include "ops/infer_util.h"
#include "ops/q8_rounding.h"
#include "ops/rules.h"
#include "util/quant_blocks.h"

namespace rlx::ops {

namespace {

using ir::Type;

// x[T, k] | x[T, A, k], idx i64[T, A], W f32[E, n, k] | u8[E, n, row bytes] → f32[T, A, n].
std::vector<Type> infer_expert_matmul(Op op, const std::vector<Type>& in, const Attrs& a) {
  const int64_t n = a.i("n"), k = a.i("k");
  if (n <= 0 || k <= 0) type_error(op, cat("n=", n, " and k=", k, " must be positive"));
  require_dtype(op, in[0], in[0].dtype == DType::f32 || in[0].dtype == DType::bf16, "f32 or bf16", "x");
  if (in[0].dtype == DType::bf16 && a.has("act") && a.s("act") == "q8") type_error(op, "act=q8 takes f32 x");
  require_dtype(op, in[1], in[1].dtype == DType::i64, "i64 (expert indices)", "idx");
  const Shape& x = in[0].shape;
  const Shape& idx = in[1].shape;
  const Shape& w = in[2].shape;
  if (idx.size() != 2) type_error(op, cat("idx must be [tokens, experts per token], got ", shape_str(idx)));
  bool per_choice = x.size() == 3;
  if (!(x.size() == 2 || per_choice) || x.back() != Dim(k) || x[0] != idx[0] || (per_choice && x[1] != idx[1]))
    type_error(op, cat("x must be [", idx[0].str(), ", ", k, "] or [", idx[0].str(), ", ", idx[1].str(), ", ", k, "], got ", shape_str(x)));
  if (a.has("act") && a.s("act") == "q8" && k % 32 != 0) type_error(op, cat("act=q8 rounds x in blocks of 32; k=", k, " is not a multiple"));
  if (w.size() != 3 || w[1] != Dim(n)) type_error(op, cat("the experts' weights must be [E, ", n, ", …], got ", shape_str(w)));
  if (a.has("type")) {
    auto t = quant::block_type_from_name(a.s("type"));
    if (!t) type_error(op, cat("unknown packed type '", a.s("type"), "'"));
    auto rb = quant::row_bytes(*t, k);
    if (!rb) type_error(op, cat("rows of ", k, " elements are not whole ", a.s("type"), " blocks of ", quant::block_elems(*t)));
    require_dtype(op, in[2], in[2].dtype == DType::u8, "u8 (packed blocks)", "weight");
    if (w[2] != Dim(*rb)) type_error(op, cat("rows of ", k, " ", a.s("type"), " values take ", *rb, " bytes, got ", w[2].str()));
  } else {
    require_dtype(op, in[2], in[2].dtype == DType::f32, "f32 (or packed u8 with a type)", "weight");
    if (w[2] != Dim(k)) type_error(op, cat("the experts' weights must be [E, ", n, ", ", k, "], got ", shape_str(w)));
  }
  return {{DType::f32, {idx[0], idx[1], Dim(n)}}};
}

// Each choice's matrix gathered (and decoded), then one batched product per (token, choice).
std::vector<ValueId> decompose_expert_matmul(Builder& b, const std::vector<ValueId>& in, const Attrs& a) {
  const int64_t n = a.i("n"), k = a.i("k");
  Shape is = b.shape(in[1]);
  const Dim &T = is[0], &A = is[1];
  ValueId w = b.gather(in[2], in[1], 0);  // [T, A, n, k] or packed [T, A, n, row bytes]
  if (a.has("type")) w = b.emit1(Op::dequantize, {w}, Attrs{{"type", a.s("type")}, {"shape", Shape{T, A, Dim(n), Dim(k)}}});
  // bf16 x: the weights rounded to bf16 too, the products exact in f32
  if (b.dtype(in[0]) == DType::bf16) w = b.cast(b.cast(w, DType::bf16), DType::f32);
  ValueId x0 = a.has("act") && a.s("act") == "q8" ? round_to_q8_blocks(b, in[0], k) : b.cast(in[0], DType::f32);
  ValueId x = b.rank(x0) == 2 ? b.broadcast(b.reshape(x0, {T, Dim(1), Dim(1), Dim(k)}), {T, A, Dim(1), Dim(k)})
                              : b.reshape(x0, {T, A, Dim(1), Dim(k)});
  ValueId y = b.dot_general(x, w, {{0, 1}, {0, 1}}, {{3}, {3}});  // [T, A, 1, n]
  return {b.reshape(y, {T, A, Dim(n)})};
}

}  // namespace

void register_experts(RuleTable& t) { t[static_cast<size_t>(Op::expert_matmul)] = {infer_expert_matmul, decompose_expert_matmul}; }

}  // namespace rlx::ops
