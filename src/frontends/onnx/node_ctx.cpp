// NodeCtx: a converter's view of one ONNX node — inputs, attributes and static arguments.
#include "frontends/onnx/importer.h"
#include "frontends/onnx/proto.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::frontends::onnx {

NodeCtx::NodeCtx(Importer& imp_, const ::onnx::NodeProto& node_, int64_t opset_, std::vector<IValue> in)
    : node(node_), opset(opset_), imp(imp_), b(imp_.builder()), vals_(std::move(in)) {
  for (const IValue& v : vals_) in_.push_back(v.is_tensor() ? v.v : kNoValue);
}

const IValue& NodeCtx::sequence_in(size_t i) const {
  if (i >= vals_.size() || vals_[i].kind != IValue::Kind::sequence) invalid(cat("input ", i, " must be a sequence"));
  return vals_[i];
}

std::string NodeCtx::label() const {
  std::string d = canonical_domain(node.domain());
  return cat(d.empty() ? "" : d + ".", node.op_type(), " node '", node.name().empty() ? node.output_size() ? node.output(0) : "?" : node.name(), "'");
}

void NodeCtx::fail(const std::string& msg) const {
  throw Error(ErrorKind::unsupported, cat(label(), " (opset ", opset, "): ", msg));
}

void NodeCtx::invalid(const std::string& msg) const { throw Error(ErrorKind::format, cat(label(), ": ", msg)); }

ValueId NodeCtx::in(size_t i) const {
  if (i < vals_.size() && vals_[i].kind == IValue::Kind::sequence) invalid(cat("input ", i, " is a sequence where a tensor is expected"));
  if (!has(i)) invalid(cat("input ", i, " is required but missing"));
  return in_[i];
}

std::vector<int64_t> NodeCtx::static_shape(ValueId v, const char* what) const {
  Shape s = shape(v);
  if (!shape_is_static(s)) fail(cat("needs a static shape for ", what, ", got ", shape_str(s), " (give concrete input shapes)"));
  return shape_values(s);
}

void NodeCtx::require_rank(ValueId v, int64_t min_rank, int64_t max_rank, const char* what) const {
  int64_t r = rank(v);
  if (r < min_rank || r > max_rank)
    invalid(cat(what, " must have rank ", min_rank == max_rank ? cat(min_rank) : cat(min_rank, "-", max_rank), ", got ", shape_str(shape(v))));
}

const ::onnx::AttributeProto* NodeCtx::attr(const char* name) const {
  for (const auto& a : node.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

int64_t NodeCtx::attr_i(const char* name, int64_t def) const {
  const auto* a = attr(name);
  if (!a) return def;
  if (a->type() == ::onnx::AttributeProto::FLOAT) return static_cast<int64_t>(a->f());
  return a->i();
}

float NodeCtx::attr_f(const char* name, float def) const {
  const auto* a = attr(name);
  if (!a) return def;
  if (a->type() == ::onnx::AttributeProto::INT) return static_cast<float>(a->i());
  return a->f();
}

std::string NodeCtx::attr_s(const char* name, const std::string& def) const {
  const auto* a = attr(name);
  return a ? a->s() : def;
}

std::vector<int64_t> NodeCtx::attr_ints(const char* name, std::vector<int64_t> def) const {
  const auto* a = attr(name);
  if (!a) return def;
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

std::vector<float> NodeCtx::attr_floats(const char* name, std::vector<float> def) const {
  const auto* a = attr(name);
  if (!a) return def;
  return std::vector<float>(a->floats().begin(), a->floats().end());
}

Tensor NodeCtx::attr_t(const char* name) const {
  const auto* a = attr(name);
  if (!a || !a->has_t()) invalid(cat("attribute '", name, "' (a tensor) is missing"));
  return tensor_from_proto(a->t(), imp.base_dir(), cat(label(), " attribute '", name, "'"));
}

const ::onnx::GraphProto& NodeCtx::attr_g(const char* name) const {
  const auto* a = attr(name);
  if (!a || !a->has_g()) invalid(cat("attribute '", name, "' (a graph) is missing"));
  return a->g();
}

std::optional<Tensor> NodeCtx::try_value(size_t i) {
  if (!has(i)) return std::nullopt;
  return b.evaluate(in_[i]);
}

Tensor NodeCtx::value(size_t i, const char* what) {
  ValueId v = in(i);
  if (auto t = b.evaluate(v)) return *t;
  fail(cat("its ", what, " (input ", i, " '", node.input(static_cast<int>(i)),
           "') must be known when the model is imported — a constant, an initializer or a value computed from them — "
           "but it depends on a graph input whose value is not given (rlx run and rlx onnx-suite give them)"));
}

std::vector<int64_t> NodeCtx::ints(size_t i, const char* what) {
  Tensor t = value(i, what);
  if (!is_integer(t.dtype())) invalid(cat(what, " must be an integer tensor, got ", dtype_name(t.dtype())));
  return tensor_ints(t);
}

int64_t NodeCtx::int_scalar(size_t i, const char* what) {
  std::vector<int64_t> v = ints(i, what);
  if (v.size() != 1) invalid(cat(what, " must hold one value, got ", v.size()));
  return v[0];
}

std::vector<Dim> NodeCtx::dims(size_t i, const char* what) {
  if (auto d = b.dims_value(in(i))) return *d;
  std::vector<Dim> out;
  for (int64_t v : ints(i, what)) out.push_back(Dim(v));
  return out;
}

double NodeCtx::scalar(size_t i, const char* what) {
  Tensor t = value(i, what);
  if (t.numel() != 1) invalid(cat(what, " must hold one value, got ", t.numel()));
  return t.at_f64(0);
}

std::vector<int64_t> tensor_ints(const Tensor& t) {
  Tensor c = t.contiguous();
  std::vector<int64_t> out(static_cast<size_t>(c.numel()));
  for (size_t k = 0; k < out.size(); ++k) {
    if (c.dtype() == DType::i64) out[k] = c.data_as<int64_t>()[k];
    else if (c.dtype() == DType::i32) out[k] = c.data_as<int32_t>()[k];
    else out[k] = static_cast<int64_t>(c.at_f64(static_cast<int64_t>(k)));
  }
  return out;
}

int64_t NodeCtx::axis(int64_t a, int64_t r) const {
  if (a < -r || a >= std::max<int64_t>(r, 1)) invalid(cat("axis ", a, " is out of range for rank ", r));
  return a < 0 ? a + r : a;
}

}  // namespace rlx::frontends::onnx
