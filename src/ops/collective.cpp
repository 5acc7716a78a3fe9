// Collectives: all_reduce keeps its input's type; all_gather multiplies one axis by the ranks.
#include "ops/infer_util.h"
#include "ops/rules.h"

namespace rlx::ops {

namespace {

std::vector<Type> infer_all_reduce(Op op, const std::vector<Type>& in, const Attrs& a) {
  DType d = in[0].dtype;
  require_dtype(op, in[0], is_numeric(d) && !is_complex(d), "real numeric");
  if (a.s("op") == "avg") require_dtype(op, in[0], is_float(d), "floating-point (avg)");
  return {in[0]};
}

std::vector<Type> infer_all_gather(Op op, const std::vector<Type>& in, const Attrs& a) {
  int64_t axis = normalize_axis(op, a.i("axis"), in[0].shape.size());
  int64_t ranks = a.i("ranks");
  if (ranks < 1) type_error(op, cat("ranks must be positive, got ", ranks));
  Shape s = in[0].shape;
  s[static_cast<size_t>(axis)] = s[static_cast<size_t>(axis)] * Dim(ranks);
  return {{in[0].dtype, s}};
}

}  // namespace

void register_collective(RuleTable& t) {
  t[static_cast<size_t>(Op::all_reduce)].infer = infer_all_reduce;
  t[static_cast<size_t>(Op::all_gather)].infer = infer_all_gather;
}

}  // namespace rlx::ops
