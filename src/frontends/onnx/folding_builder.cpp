// What the importer knows at import time: constants (folded eagerly while small), values
// evaluated on demand for static arguments, and shape vectors with symbolic dims.
#include <algorithm>

#include "frontends/onnx/importer.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::frontends::onnx {

namespace {

// Eager folding stays cheap: bigger results are left to the compiler's own folding or to run time.
constexpr int64_t kFoldElements = 1 << 16;
constexpr int64_t kEvaluateElements = 1 << 24;

bool is_int_dtype(DType d) { return d == DType::i64 || d == DType::i32; }

std::vector<ir::Type> out_types(const ir::Graph& g, const std::vector<ValueId>& outs) {
  std::vector<ir::Type> t;
  for (ValueId v : outs) t.push_back(g.type(v));
  return t;
}

bool small_static(const std::vector<ir::Type>& types, int64_t limit) {
  int64_t total = 0;
  for (const auto& t : types) {
    if (!shape_is_static(t.shape)) return false;
    total += shape_numel(t.shape).value();
  }
  return total <= limit;
}

}  // namespace

std::vector<ValueId> FoldingBuilder::emit(Op op, std::vector<ValueId> inputs, Attrs attrs) {
  std::vector<ValueId> outs = Builder::emit(op, inputs, std::move(attrs));
  ir::Node n = g_.nodes().back();  // a copy: evaluation may not outlive later emits
  if (op == Op::constant) {
    const_[outs[0]] = n.attrs.tensor("value");
    return outs;
  }
  bool all_const = op != Op::elementwise_region;
  for (ValueId v : inputs) all_const = all_const && const_.count(v);
  std::vector<ir::Type> types = out_types(g_, outs);
  if (all_const && small_static(types, kFoldElements)) {
    std::vector<Tensor> in;
    for (ValueId v : inputs) in.push_back(const_.at(v));
    std::vector<Tensor> r = eval_(op, n.attrs, in, types);
    for (size_t i = 0; i < outs.size(); ++i) const_[outs[i]] = r[i];
  } else if (outs.size() == 1) {
    propagate_dims(op, inputs, n.attrs, outs[0]);
  }
  return outs;
}

const Tensor* FoldingBuilder::constant_value(ValueId v) const {
  auto it = const_.find(v);
  return it == const_.end() ? nullptr : &it->second;
}

std::optional<Tensor> FoldingBuilder::evaluate(ValueId v) {
  if (auto it = const_.find(v); it != const_.end()) return it->second;
  if (auto it = lazy_.find(v); it != lazy_.end()) return it->second;
  if (auto it = bound_.find(v); it != bound_.end()) {
    if (std::find(used_bound_.begin(), used_bound_.end(), v) == used_bound_.end()) used_bound_.push_back(v);
    return it->second;
  }
  const ir::Value& val = g_.value(v);
  if (val.node < 0) return std::nullopt;
  ir::Node n = g_.node(val.node);
  std::vector<Tensor> in;
  for (ValueId x : n.inputs) {
    auto t = evaluate(x);
    if (!t) return std::nullopt;
    in.push_back(*t);
  }
  std::vector<ir::Type> types = out_types(g_, n.outputs);
  // Static arguments are small; values read to size data-dependent outputs stay moderate.
  if (!small_static(types, kEvaluateElements)) return std::nullopt;
  std::vector<Tensor> r = eval_(n.op, n.attrs, in, types);
  for (size_t i = 0; i < n.outputs.size(); ++i) lazy_[n.outputs[i]] = r[i];
  return lazy_.at(v);
}

std::optional<std::vector<Dim>> FoldingBuilder::dims_value(ValueId v) {
  if (auto it = dims_.find(v); it != dims_.end()) return it->second;
  const Tensor* t = constant_value(v);
  if (!t || !is_int_dtype(t->dtype()) || t->rank() > 1) return std::nullopt;
  std::vector<Dim> out;
  for (int64_t x : tensor_ints(*t)) out.push_back(Dim(x));
  return out;
}

// Symbolic evaluation of the integer ops shape computations are made of (Shape → Gather →
// Unsqueeze → Concat → Reshape, sizes multiplied or divided), so that a model with symbolic
// input dims still gets static-or-symbolic shapes wherever its own arithmetic allows.
void FoldingBuilder::propagate_dims(Op op, const std::vector<ValueId>& in, const Attrs& attrs, ValueId out) {
  const ir::Type& ot = g_.type(out);
  if (!is_int_dtype(ot.dtype) || ot.shape.size() > 1 || !shape_is_static(ot.shape)) return;
  bool any_sym = false;
  std::vector<std::vector<Dim>> vals;
  for (ValueId v : in) {
    if (op == Op::gather && vals.size() == 1) break;  // indices are checked below
    auto d = dims_value(v);
    if (!d) return;
    any_sym = any_sym || dims_.count(v);
    vals.push_back(*d);
  }
  if (!any_sym) return;
  std::vector<Dim> r;
  int64_t n = shape_numel(ot.shape).value();
  switch (op) {
    case Op::reshape:
    case Op::cast:
      r = vals[0];
      break;
    case Op::concat:
      for (const auto& v : vals) r.insert(r.end(), v.begin(), v.end());
      break;
    case Op::gather: {
      const Tensor* idx = constant_value(in[1]);
      if (!idx) return;
      for (int64_t i = 0; i < idx->numel(); ++i) {
        int64_t k = tensor_ints(*idx)[static_cast<size_t>(i)];
        if (k < 0) k += static_cast<int64_t>(vals[0].size());
        if (k < 0 || k >= static_cast<int64_t>(vals[0].size())) return;
        r.push_back(vals[0][static_cast<size_t>(k)]);
      }
      break;
    }
    case Op::slice: {
      const Shape& st = attrs.dims("start");
      const Ints& stride = attrs.ints("stride");
      if (st.empty()) {
        r = vals[0];
        break;
      }
      for (int64_t i = 0; i < n; ++i) r.push_back(vals[0][static_cast<size_t>(st[0].value() + i * stride[0])]);
      break;
    }
    case Op::broadcast:
      if (vals[0].size() != 1) return;
      r.assign(static_cast<size_t>(n), vals[0][0]);
      break;
    case Op::add:
    case Op::sub:
    case Op::mul:
    case Op::div: {
      for (int64_t i = 0; i < n; ++i) {
        const Dim& a = vals[0].size() == 1 ? vals[0][0] : vals[0][static_cast<size_t>(i)];
        const Dim& c = vals[1].size() == 1 ? vals[1][0] : vals[1][static_cast<size_t>(i)];
        if (op == Op::add) r.push_back(a + c);
        else if (op == Op::sub) r.push_back(a - c);
        else if (op == Op::mul) r.push_back(a * c);
        else {
          auto q = a.exact_div(c);
          if (!q) return;
          r.push_back(*q);
        }
      }
      break;
    }
    default:
      return;
  }
  if (static_cast<int64_t>(r.size()) != n) return;
  dims_[out] = std::move(r);
}

}  // namespace rlx::frontends::onnx
