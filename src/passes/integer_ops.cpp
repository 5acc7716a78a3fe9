#include "passes/integer_ops.h"

#include <cmath>
#include <vector>

namespace rlx::passes {

using ir::Op;
using ir::ValueId;

std::optional<std::pair<int32_t, int32_t>> fixed_point(double m) {
  if (!(m > 0) || !std::isfinite(m)) return std::nullopt;
  int e = 0;
  double f = std::frexp(m, &e);  // m = f · 2^e, f in [0.5, 1)
  int64_t M = std::llround(f * 2147483648.0);
  int s = 31 - e;
  if (M == 2147483648LL) {
    M /= 2;
    --s;
  }
  if (s < 0 || s > 62) return std::nullopt;
  return std::make_pair(static_cast<int32_t>(M), s);
}

ValueId rescale(ops::Builder& b, ValueId acc, std::pair<int32_t, int32_t> fp, int64_t zero_point, int64_t lo, int64_t hi, DType out) {
  ir::Attrs a{{"zero_point", zero_point}, {"lo", lo}, {"hi", hi}, {"out", out}};
  return b.emit1(Op::requantize, {acc, b.scalar(DType::i32, fp.first), b.scalar(DType::i32, fp.second)}, a);
}

std::optional<IntegerAdd> plan_integer_add(Int8Grid a, Int8Grid b, Int8Grid out) {
  if (!(a.scale > 0) || !(b.scale > 0) || !(out.scale > 0)) return std::nullopt;
  const double sc = 2.0 * std::max(a.scale, b.scale) / 1048576.0;
  auto fa = fixed_point(a.scale / sc), fb = fixed_point(b.scale / sc), fo = fixed_point(sc / out.scale);
  if (!fa || !fb || !fo) return std::nullopt;
  return IntegerAdd{*fa, *fb, *fo};
}

ValueId emit_integer_add(ops::Builder& b, ValueId qa, Int8Grid a, ValueId qb, Int8Grid bg, Int8Grid out, const IntegerAdd& plan, bool relu) {
  auto side = [&](ValueId q, const Int8Grid& g, std::pair<int32_t, int32_t> f) {
    ValueId v = b.cast(q, DType::i32);
    if (g.zero_point != 0) v = b.add(v, b.scalar(DType::i32, static_cast<double>(-g.zero_point)));
    return rescale(b, v, f, 0, INT32_MIN, INT32_MAX, DType::i32);  // |(q − z)·sa/sc| ≤ 255·2^19
  };
  ValueId sum = b.add(side(qa, a, plan.a), side(qb, bg, plan.b));
  return rescale(b, sum, plan.out, out.zero_point, relu ? std::max<int64_t>(out.zero_point, -128) : -128, 127, DType::i8);
}

std::optional<IntegerSoftmax> plan_integer_softmax(int64_t n, Int8Grid out) {
  if (n <= 0 || !(out.scale > 0)) return std::nullopt;
  IntegerSoftmax p;
  // K: Σe ≤ n·2^K stays below 2^30; S: the largest shift with C < 2^31.
  p.K = 14;
  while (p.K > 0 && static_cast<double>(n) * std::ldexp(1.0, p.K) >= std::ldexp(1.0, 30)) --p.K;
  p.S = 62;
  while (p.S > 0 && std::ldexp(1.0, p.S) / out.scale >= 2147483647.0) --p.S;  // in double: llround of 2^70 overflows
  p.C = std::llround(std::ldexp(1.0, p.S) / out.scale);
  if (p.C < (int64_t{1} << 16)) return std::nullopt;
  return p;
}

ValueId emit_integer_softmax(ops::Builder& b, ValueId qx, Int8Grid x, int64_t axis, Int8Grid out, const IntegerSoftmax& plan) {
  std::vector<int32_t> table(256);
  for (int d = 0; d < 256; ++d) table[static_cast<size_t>(d)] = static_cast<int32_t>(std::llround(std::ldexp(std::exp(-x.scale * d), plan.K)));
  ValueId m = b.reduce(qx, "max", {axis}, true);
  ValueId d = b.sub(b.cast(m, DType::i32), b.cast(qx, DType::i32));
  ValueId e = b.gather(b.constant(Tensor::from_vector(table, {256})), d, 0);
  ValueId r = b.div(b.scalar(DType::i32, static_cast<double>(plan.C)), b.reduce(e, "sum", {axis}, true));
  ir::Attrs a{{"zero_point", out.zero_point}, {"lo", int64_t{-128}}, {"hi", int64_t{127}}, {"out", DType::i8}};
  return b.emit1(Op::requantize, {e, r, b.scalar(DType::i32, plan.S)}, a);
}

}  // namespace rlx::passes
