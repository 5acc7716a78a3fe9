// Data movement: reshape, transpose, broadcast, slice, concat, pad, gather, scatter; embedding.
#include "ops/builder.h"
#include "ops/infer_util.h"
#include "ops/rules.h"

namespace rlx::ops {

namespace {

using ir::Type;

std::vector<Type> infer_reshape(Op op, const std::vector<Type>& in, const Attrs& a) {
  Shape target = a.dims("shape");
  int infer_at = -1;
  Dim known(1);
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == Dim(-1)) {
      if (infer_at >= 0) type_error(op, "at most one dim may be -1");
      infer_at = static_cast<int>(i);
    } else {
      if (auto v = target[i].try_value(); v && *v < 0) type_error(op, cat("dim ", *v, " is negative"));
      known = known * target[i];
    }
  }
  Dim n = shape_numel(in[0].shape);
  if (infer_at >= 0) {
    auto q = n.exact_div(known);
    if (!q) type_error(op, cat("cannot infer the -1 dim: ", n.str(), " elements are not a multiple of ", known.str()));
    target[static_cast<size_t>(infer_at)] = *q;
  } else if (shape_numel(target) != n) {
    type_error(op, cat("cannot reshape ", shape_str(in[0].shape), " (", n.str(), " elements) to ", shape_str(target), " (",
                       shape_numel(target).str(), " elements)"));
  }
  return {{in[0].dtype, target}};
}

std::vector<Type> infer_transpose(Op op, const std::vector<Type>& in, const Attrs& a) {
  const Ints& perm = a.ints("perm");
  const Shape& s = in[0].shape;
  if (perm.size() != s.size()) type_error(op, cat("perm has ", perm.size(), " entries for rank ", s.size()));
  std::vector<bool> seen(s.size());
  Shape out;
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(s.size()) || seen[p]) type_error(op, cat("perm ", ir::attr_to_text(perm, ir::AttrType::Ints), " is not a permutation"));
    seen[p] = true;
    out.push_back(s[p]);
  }
  return {{in[0].dtype, out}};
}

std::vector<Type> infer_broadcast(Op op, const std::vector<Type>& in, const Attrs& a) {
  const Shape& target = a.dims("shape");
  const Shape& s = in[0].shape;
  if (s.size() > target.size()) type_error(op, cat("cannot broadcast ", shape_str(s), " to the smaller rank of ", shape_str(target)));
  size_t off = target.size() - s.size();
  for (size_t i = 0; i < s.size(); ++i)
    if (s[i] != target[off + i] && s[i] != Dim(1))
      type_error(op, cat("cannot broadcast ", shape_str(s), " to ", shape_str(target), " (dim ", i, ")"));
  return {{in[0].dtype, target}};
}

std::vector<Type> infer_slice(Op op, const std::vector<Type>& in, const Attrs& a) {
  const Shape& s = in[0].shape;
  const Shape& start = a.dims("start");
  const Shape& limit = a.dims("limit");
  const Ints& stride = a.ints("stride");
  if (start.size() != s.size() || limit.size() != s.size() || stride.size() != s.size())
    type_error(op, cat("start, limit and stride need one entry per dim (", s.size(), ")"));
  Shape out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (stride[i] <= 0) type_error(op, cat("stride ", stride[i], " of dim ", i, " must be positive"));
    Dim len = limit[i] - start[i];
    auto st = start[i].try_value(), li = limit[i].try_value(), n = s[i].try_value();
    if (st && *st < 0) type_error(op, cat("start ", *st, " of dim ", i, " is negative"));
    if (li && n && *li > *n) type_error(op, cat("limit ", *li, " of dim ", i, " exceeds its size ", *n));
    if (auto l = len.try_value()) {
      if (*l < 0) type_error(op, cat("dim ", i, ": start ", start[i].str(), " is after limit ", limit[i].str()));
      out.push_back(Dim(*l / stride[i] + (*l % stride[i] != 0)));  // ⌈l / stride⌉ without l + stride overflowing
    } else {
      if (stride[i] != 1) type_error(op, cat("dim ", i, ": a symbolic extent ", len.str(), " needs stride 1"));
      out.push_back(len);
    }
  }
  return {{in[0].dtype, out}};
}

std::vector<Type> infer_concat(Op op, const std::vector<Type>& in, const Attrs& a) {
  size_t r = in[0].shape.size();
  int64_t axis = normalize_axis(op, a.i("axis"), r);
  require_same_dtype(op, in, 0, in.size() - 1);
  Shape out = in[0].shape;
  out[axis] = Dim(0);
  for (size_t k = 0; k < in.size(); ++k) {
    if (in[k].shape.size() != r) type_error(op, cat("input ", k, " has rank ", in[k].shape.size(), ", expected ", r));
    for (size_t i = 0; i < r; ++i)
      if (static_cast<int64_t>(i) != axis && in[k].shape[i] != in[0].shape[i])
        type_error(op, cat("input ", k, " dim ", i, " is ", in[k].shape[i].str(), ", input 0 has ", in[0].shape[i].str()));
    out[axis] = out[axis] + in[k].shape[axis];
  }
  return {{in[0].dtype, out}};
}

std::vector<Type> infer_pad(Op op, const std::vector<Type>& in, const Attrs& a) {
  const Shape& s = in[0].shape;
  const Ints& lo = a.ints("lo");
  const Ints& hi = a.ints("hi");
  if (lo.size() != s.size() || hi.size() != s.size()) type_error(op, cat("lo and hi need one entry per dim (", s.size(), ")"));
  const std::string& mode = a.s("mode");
  ir::Ints interior = a.has("interior") ? a.ints("interior") : ir::Ints(s.size(), 0);
  if (interior.size() != s.size()) type_error(op, cat("interior needs one entry per dim (", s.size(), ")"));
  Shape out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (interior[i] < 0) type_error(op, "interior padding cannot be negative");
    // far beyond any tensor, and small enough that the sums below cannot overflow
    constexpr int64_t kMaxPad = int64_t{1} << 40;
    if (lo[i] < -kMaxPad || lo[i] > kMaxPad || hi[i] < -kMaxPad || hi[i] > kMaxPad || interior[i] > kMaxPad)
      type_error(op, cat("padding of dim ", i, " (lo ", lo[i], ", hi ", hi[i], ", interior ", interior[i], ") is out of range (|·| ≤ 2^40)"));
    if (interior[i] > 0 && mode != "constant") type_error(op, "interior padding needs mode=constant");
    if (mode != "constant" && (lo[i] < 0 || hi[i] < 0)) type_error(op, cat(mode, " padding cannot be negative"));
    if (mode == "reflect") {
      if (auto n = s[i].try_value(); n && (lo[i] >= *n || hi[i] >= *n))
        type_error(op, cat("reflect padding of dim ", i, " must be smaller than its size ", *n));
    }
    if (mode == "edge" && s[i] == Dim(0) && (lo[i] || hi[i])) type_error(op, "edge padding of an empty dim");
    // n elements with `interior` fill values between neighbours: n + (n-1)·interior
    Dim d = s[i] + Dim(lo[i] + hi[i]);
    if (interior[i] > 0) {
      if (auto n = s[i].try_value(); n && *n == 0) d = Dim(lo[i] + hi[i]);
      else d = d + (s[i] - Dim(1)) * Dim(interior[i]);
    }
    if (auto v = d.try_value(); v && *v < 0) type_error(op, cat("padding makes dim ", i, " negative"));
    out.push_back(d);
  }
  return {{in[0].dtype, out}};
}

std::vector<Type> infer_gather(Op op, const std::vector<Type>& in, const Attrs& a) {
  const Shape& s = in[0].shape;
  int64_t axis = normalize_axis(op, a.i("axis"), s.size());
  require_dtype(op, in[1], in[1].dtype == DType::i32 || in[1].dtype == DType::i64, "i32 or i64", "indices");
  Shape out(s.begin(), s.begin() + axis);
  out.insert(out.end(), in[1].shape.begin(), in[1].shape.end());
  out.insert(out.end(), s.begin() + axis + 1, s.end());
  return {{in[0].dtype, out}};
}

// scatter(data, indices, updates): the inverse of gather; updates has gather's output shape.
std::vector<Type> infer_scatter(Op op, const std::vector<Type>& in, const Attrs& a) {
  std::vector<Type> g = infer_gather(op, {in[0], in[1]}, a);
  if (in[2].dtype != in[0].dtype) type_error(op, "updates must have the data's dtype");
  if (in[2].shape != g[0].shape) type_error(op, cat("updates must be ", shape_str(g[0].shape), ", got ", shape_str(in[2].shape)));
  const std::string& red = a.s("reduce");
  bool ok = red == "none" || (is_numeric(in[0].dtype) && (!is_complex(in[0].dtype) || red == "add"));
  if (!ok) type_error(op, cat("reduce=", red, " needs a real numeric dtype", red == "add" ? "" : " (complex ones add only)"));
  return {in[0]};
}

std::vector<Type> infer_embedding(Op op, const std::vector<Type>& in, const Attrs&) {
  require_rank(op, in[0], 2, "table");
  return infer_gather(op, in, Attrs{{"axis", int64_t{0}}});
}

std::vector<ValueId> decompose_embedding(Builder& b, const std::vector<ValueId>& in, const Attrs&) {
  return {b.gather(in[0], in[1], 0)};
}

}  // namespace

void register_movement(RuleTable& t) {
  t[static_cast<size_t>(Op::reshape)].infer = infer_reshape;
  t[static_cast<size_t>(Op::transpose)].infer = infer_transpose;
  t[static_cast<size_t>(Op::broadcast)].infer = infer_broadcast;
  t[static_cast<size_t>(Op::slice)].infer = infer_slice;
  t[static_cast<size_t>(Op::concat)].infer = infer_concat;
  t[static_cast<size_t>(Op::pad)].infer = infer_pad;
  t[static_cast<size_t>(Op::gather)].infer = infer_gather;
  t[static_cast<size_t>(Op::scatter)].infer = infer_scatter;
  t[static_cast<size_t>(Op::embedding)] = {infer_embedding, decompose_embedding};
}

}  // namespace rlx::ops
