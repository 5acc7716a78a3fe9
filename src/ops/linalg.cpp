// Contractions: dot_general and conv (MIR); matmul and linear (HIR).
#include <algorithm>

#include "ops/builder.h"
#include "ops/infer_util.h"
#include "ops/rules.h"

namespace rlx::ops {

namespace {

using ir::Type;

bool contains(const Ints& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

std::vector<Type> infer_dot_general(Op op, const std::vector<Type>& in, const Attrs& a) {
  const Intss& batch = a.intss("batch");
  const Intss& contract = a.intss("contract");
  if (batch.size() != 2 || contract.size() != 2) type_error(op, "batch and contract must each be [[lhs dims],[rhs dims]]");
  if (batch[0].size() != batch[1].size()) type_error(op, "lhs and rhs list different numbers of batch dims");
  if (contract[0].size() != contract[1].size()) type_error(op, "lhs and rhs list different numbers of contracting dims");
  require_same_dtype(op, in, 0, 1);
  require_dtype(op, in[0], is_numeric(in[0].dtype), "numeric");
  const Shape& ls = in[0].shape;
  const Shape& rs = in[1].shape;
  Ints lb = normalize_axes(op, batch[0], ls.size()), rb = normalize_axes(op, batch[1], rs.size());
  Ints lc = normalize_axes(op, contract[0], ls.size()), rc = normalize_axes(op, contract[1], rs.size());
  for (int64_t d : lc)
    if (contains(lb, d)) type_error(op, cat("lhs dim ", d, " is both batch and contracting"));
  for (int64_t d : rc)
    if (contains(rb, d)) type_error(op, cat("rhs dim ", d, " is both batch and contracting"));
  Shape out;
  for (size_t i = 0; i < lb.size(); ++i) {
    if (ls[lb[i]] != rs[rb[i]])
      type_error(op, cat("batch dims differ: lhs dim ", lb[i], " is ", ls[lb[i]].str(), ", rhs dim ", rb[i], " is ", rs[rb[i]].str()));
    out.push_back(ls[lb[i]]);
  }
  for (size_t i = 0; i < lc.size(); ++i)
    if (ls[lc[i]] != rs[rc[i]])
      type_error(op, cat("contracting dims differ: lhs dim ", lc[i], " is ", ls[lc[i]].str(), ", rhs dim ", rc[i], " is ",
                         rs[rc[i]].str()));
  for (size_t i = 0; i < ls.size(); ++i)
    if (!contains(lb, i) && !contains(lc, i)) out.push_back(ls[i]);
  for (size_t i = 0; i < rs.size(); ++i)
    if (!contains(rb, i) && !contains(rc, i)) out.push_back(rs[i]);
  DType od = in[0].dtype;
  if (auto* o = a.find("out")) od = std::get<DType>(*o);
  if (auto* c = a.find("compute"); c && !is_float(std::get<DType>(*c)))
    type_error(op, cat("compute must be a float type, got ", dtype_name(std::get<DType>(*c))));
  return {{od, out}};
}

std::vector<Type> infer_conv(Op op, const std::vector<Type>& in, const Attrs& a) {
  const Shape& x = in[0].shape;
  const Shape& w = in[1].shape;
  require_same_dtype(op, in, 0, 1);
  require_dtype(op, in[0], is_float(in[0].dtype) || is_integer(in[0].dtype), "real numeric");
  if (x.size() < 3) type_error(op, cat("input must be [N, C, spatial…], got ", shape_str(x)));
  if (w.size() != x.size()) type_error(op, cat("weight rank ", w.size(), " differs from input rank ", x.size()));
  size_t sp = x.size() - 2;
  const Ints& strides = a.ints("strides");
  const Intss& padding = a.intss("padding");
  const Ints& dilation = a.ints("dilation");
  int64_t groups = a.i("groups");
  if (strides.size() != sp || dilation.size() != sp || padding.size() != sp)
    type_error(op, cat("strides, dilation and padding need one entry per spatial dim (", sp, ")"));
  if (groups <= 0) type_error(op, "groups must be positive");
  // Input channels may be symbolic (a weight gradient written as a conv contracts the batch).
  auto O = w[0].try_value();
  if (!O) type_error(op, "output channel count must be static");
  if (x[1] != w[1] * Dim(groups))
    type_error(op, cat("input has ", x[1].str(), " channels but weight expects ", w[1].str(), " x ", groups, " groups"));
  if (*O % groups) type_error(op, cat("output channels ", *O, " are not divisible by groups ", groups));
  Shape out = {x[0], w[0]};
  for (size_t i = 0; i < sp; ++i) {
    if (padding[i].size() != 2) type_error(op, "padding entries must be [lo, hi]");
    auto k = w[2 + i].try_value();
    if (!k) type_error(op, "kernel dims must be static");
    out.push_back(window_out_dim(op, x[2 + i], padding[i][0], padding[i][1], *k, strides[i], dilation[i]));
  }
  DType od = in[0].dtype;
  if (auto* o = a.find("out")) od = std::get<DType>(*o);
  return {{od, out}};
}

// numpy matmul: [..., M, K] x [..., K, N] with broadcast batch dims; 1-D operands are promoted.
std::vector<Type> infer_matmul(Op op, const std::vector<Type>& in, const Attrs&) {
  require_same_dtype(op, in, 0, 1);
  require_dtype(op, in[0], is_numeric(in[0].dtype), "numeric");
  Shape a = in[0].shape, b = in[1].shape;
  if (a.empty() || b.empty()) type_error(op, "operands must have rank ≥ 1");
  bool a1 = a.size() == 1, b1 = b.size() == 1;
  if (a1) a.insert(a.begin(), Dim(1));
  if (b1) b.push_back(Dim(1));
  if (a.back() != b[b.size() - 2])
    type_error(op, cat("inner dims differ: ", shape_str(in[0].shape), " x ", shape_str(in[1].shape)));
  Shape batch = broadcast_shapes(op, Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2));
  Shape out = batch;
  if (!a1) out.push_back(a[a.size() - 2]);
  if (!b1) out.push_back(b.back());
  return {{in[0].dtype, out}};
}

std::vector<ValueId> decompose_matmul(Builder& b, const std::vector<ValueId>& in, const Attrs&) {
  ValueId x = in[0], y = in[1];
  Shape xs = b.shape(x), ys = b.shape(y);
  bool x1 = xs.size() == 1, y1 = ys.size() == 1;
  Shape final_shape = infer_matmul(Op::matmul, {b.type(x), b.type(y)}, {})[0].shape;
  if (x1) x = b.reshape(x, {Dim(1), xs[0]});
  if (y1) y = b.reshape(y, {ys[0], Dim(1)});
  xs = b.shape(x);
  ys = b.shape(y);
  int64_t xr = static_cast<int64_t>(xs.size()), yr = static_cast<int64_t>(ys.size());
  ValueId out;
  if (yr == 2) {
    // Plain weight matrix: contract the last dim of x with no batch dims at all.
    out = b.dot_general(x, y, {{}, {}}, {{xr - 1}, {0}});
  } else {
    Shape batch = broadcast_shapes(Op::matmul, Shape(xs.begin(), xs.end() - 2), Shape(ys.begin(), ys.end() - 2));
    Shape xt = batch, yt = batch;
    xt.insert(xt.end(), xs.end() - 2, xs.end());
    yt.insert(yt.end(), ys.end() - 2, ys.end());
    x = b.broadcast(x, xt);
    y = b.broadcast(y, yt);
    int64_t nb = static_cast<int64_t>(batch.size());
    Ints bd;
    for (int64_t i = 0; i < nb; ++i) bd.push_back(i);
    out = b.dot_general(x, y, {bd, bd}, {{nb + 1}, {nb}});
  }
  return {b.reshape(out, final_shape)};
}

// linear(x[..., in], w[out, in], bias[out]?) = x·wᵀ + bias, the PyTorch convention.
std::vector<Type> infer_linear(Op op, const std::vector<Type>& in, const Attrs&) {
  const Shape& x = in[0].shape;
  const Shape& w = in[1].shape;
  require_same_dtype(op, in, 0, in.size() - 1);
  require_dtype(op, in[0], is_numeric(in[0].dtype), "numeric");
  if (x.empty()) type_error(op, "input must have rank ≥ 1");
  if (w.size() != 2) type_error(op, cat("weight must be [out, in], got ", shape_str(w)));
  if (x.back() != w[1]) type_error(op, cat("input features ", x.back().str(), " differ from weight's ", w[1].str()));
  if (in.size() == 3 && !(in[2].shape == Shape{w[0]})) type_error(op, cat("bias must be [", w[0].str(), "], got ", shape_str(in[2].shape)));
  Shape out = x;
  out.back() = w[0];
  return {{in[0].dtype, out}};
}

std::vector<ValueId> decompose_linear(Builder& b, const std::vector<ValueId>& in, const Attrs&) {
  int64_t r = static_cast<int64_t>(b.rank(in[0]));
  ValueId y = b.dot_general(in[0], in[1], {{}, {}}, {{r - 1}, {1}});
  if (in.size() == 3) y = b.add(y, in[2]);
  return {y};
}

}  // namespace

void register_linalg(RuleTable& t) {
  t[static_cast<size_t>(Op::dot_general)].infer = infer_dot_general;
  t[static_cast<size_t>(Op::conv)].infer = infer_conv;
  t[static_cast<size_t>(Op::matmul)] = {infer_matmul, decompose_matmul};
  t[static_cast<size_t>(Op::linear)] = {infer_linear, decompose_linear};
}

}  // namespace rlx::ops
