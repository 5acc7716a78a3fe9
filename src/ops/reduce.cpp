// Reductions, scans and sorting.
#include <algorithm>

#include "ops/infer_util.h"
#include "ops/rules.h"

namespace rlx::ops {

namespace {

using ir::Type;

std::vector<Type> infer_reduce(Op op, const std::vector<Type>& in, const Attrs& a) {
  const std::string& kind = a.s("kind");
  auto axes = normalize_axes(op, a.ints("axes"), in[0].shape.size());
  DType d = in[0].dtype;
  bool arg = kind == "argmax" || kind == "argmin";
  if (arg && axes.size() != 1) type_error(op, cat(kind, " needs exactly one axis, got ", axes.size()));
  if (kind == "sum" || kind == "prod") require_dtype(op, in[0], is_numeric(d), "numeric");
  else require_dtype(op, in[0], (is_numeric(d) && !is_complex(d)) || is_bool(d), "real numeric or bool");
  Shape out;
  for (size_t i = 0; i < in[0].shape.size(); ++i) {
    bool reduced = std::find(axes.begin(), axes.end(), static_cast<int64_t>(i)) != axes.end();
    if (reduced && arg && in[0].shape[i] == Dim(0)) type_error(op, cat(kind, " over an empty axis"));
    if (!reduced) out.push_back(in[0].shape[i]);
    else if (a.b("keepdims")) out.push_back(Dim(1));
  }
  return {{arg ? DType::i64 : d, out}};
}

std::vector<Type> infer_cumsum(Op op, const std::vector<Type>& in, const Attrs& a) {
  normalize_axis(op, a.i("axis"), in[0].shape.size());
  require_dtype(op, in[0], is_numeric(in[0].dtype), "numeric");
  return {in[0]};
}

std::vector<Type> infer_sort(Op op, const std::vector<Type>& in, const Attrs& a) {
  normalize_axis(op, a.i("axis"), in[0].shape.size());
  require_dtype(op, in[0], is_numeric(in[0].dtype) && !is_complex(in[0].dtype), "real numeric");
  return {in[0], {DType::i64, in[0].shape}};
}

std::vector<Type> infer_topk(Op op, const std::vector<Type>& in, const Attrs& a) {
  int64_t axis = normalize_axis(op, a.i("axis"), in[0].shape.size());
  require_dtype(op, in[0], is_numeric(in[0].dtype) && !is_complex(in[0].dtype), "real numeric");
  int64_t k = a.i("k");
  if (k < 0) type_error(op, cat("k must be non-negative, got ", k));
  const Dim& n = in[0].shape[static_cast<size_t>(axis)];
  if (n.is_static() && k > n.value()) type_error(op, cat("k=", k, " exceeds the axis size ", n.value()));
  Shape s = in[0].shape;
  s[static_cast<size_t>(axis)] = Dim(k);
  return {{in[0].dtype, s}, {DType::i64, s}};
}

}  // namespace

void register_reduce(RuleTable& t) {
  t[static_cast<size_t>(Op::reduce)].infer = infer_reduce;
  t[static_cast<size_t>(Op::cumsum)].infer = infer_cumsum;
  t[static_cast<size_t>(Op::sort)].infer = infer_sort;
  t[static_cast<size_t>(Op::topk)].infer = infer_topk;
}

}  // namespace rlx::ops
