#include "formats/onnx/support.h"

#include <map>
#include <set>
#include <unordered_map>

#include <onnx/shape_inference/implementation.h>

#include "formats/onnx/importer.h"
#include "formats/onnx/proto.h"
#include "util/strings.h"

namespace rlx::formats::onnx {

std::string UnsupportedNode::str() const {
  std::string s = cat(domain.empty() ? "" : domain + ".", op, " (opset ", opset);
  if (!dtypes.empty()) s += cat(", dtypes ", join(dtypes));
  s += cat(") node '", node, "': ", no_converter ? "no converter for this operator" : "RLX has no dtype for its tensors");
  return s;
}

namespace {

using TypeMap = std::unordered_map<std::string, const ::onnx::TypeProto*>;

// "" when RLX supports the type; else its name.
std::string unsupported_type(const ::onnx::TypeProto& t) {
  if (t.has_tensor_type()) {
    if (!t.tensor_type().has_elem_type() || t.tensor_type().elem_type() == 0) return "";
    return dtype_from_onnx(t.tensor_type().elem_type()) ? "" : onnx_type_name(t.tensor_type().elem_type());
  }
  // Sequences and optionals of tensors are resolved at import; maps are not.
  if (t.has_sequence_type()) return t.sequence_type().has_elem_type() ? unsupported_type(t.sequence_type().elem_type()) : "";
  if (t.has_optional_type()) return t.optional_type().has_elem_type() ? unsupported_type(t.optional_type().elem_type()) : "";
  if (t.has_map_type()) return "map";
  if (t.has_sparse_tensor_type()) return "sparse tensor";
  return "";
}

void collect_types(const ::onnx::GraphProto& g, TypeMap& types) {
  for (const auto& v : g.input()) types[v.name()] = &v.type();
  for (const auto& v : g.output()) types[v.name()] = &v.type();
  for (const auto& v : g.value_info()) types[v.name()] = &v.type();
  for (const auto& n : g.node())
    for (const auto& a : n.attribute()) {
      if (a.has_g()) collect_types(a.g(), types);
      for (const auto& sg : a.graphs()) collect_types(sg, types);
    }
}

struct Walker {
  const std::map<std::string, int64_t>& opsets;
  const TypeMap& types;
  std::unordered_map<std::string, int32_t> init_types;
  std::vector<UnsupportedNode> out;
  int64_t counter = 0;

  void walk(const ::onnx::GraphProto& g) {
    for (const auto& i : g.initializer())
      if (!dtype_from_onnx(i.data_type())) init_types[i.name()] = i.data_type();
    for (const auto& n : g.node()) {
      std::string domain = canonical_domain(n.domain());
      auto it = opsets.find(domain);
      int64_t version = it != opsets.end() && it->second > 0 ? it->second : 1;
      UnsupportedNode u;
      u.domain = domain;
      u.op = n.op_type();
      u.opset = version;
      u.node = n.name().empty() ? cat(n.op_type(), "_", counter) : n.name();
      ++counter;
      u.no_converter = find_converter(domain, n.op_type(), version) == nullptr;
      std::set<std::string> bad;
      auto check = [&](const std::string& name) {
        if (name.empty()) return;
        if (auto t = types.find(name); t != types.end()) {
          std::string s = unsupported_type(*t->second);
          if (!s.empty()) bad.insert(s);
        }
        if (auto t = init_types.find(name); t != init_types.end()) bad.insert(onnx_type_name(t->second));
      };
      for (const auto& i : n.input()) check(i);
      for (const auto& o : n.output()) check(o);
      for (const auto& a : n.attribute()) {
        if (a.name() == "to" && a.type() == ::onnx::AttributeProto::INT && !dtype_from_onnx(static_cast<int32_t>(a.i())))
          bad.insert(onnx_type_name(static_cast<int32_t>(a.i())));
        if (a.has_t() && !dtype_from_onnx(a.t().data_type())) bad.insert(onnx_type_name(a.t().data_type()));
      }
      u.dtypes.assign(bad.begin(), bad.end());
      if (u.no_converter || !u.dtypes.empty()) out.push_back(u);
      for (const auto& a : n.attribute()) {
        if (a.has_g()) walk(a.g());
        for (const auto& sg : a.graphs()) walk(sg);
      }
    }
  }
};

}  // namespace

std::vector<UnsupportedNode> find_unsupported(const ::onnx::ModelProto& model) {
  // ONNX's type inference on a copy without the weight bytes gives every intermediate dtype.
  ::onnx::ModelProto copy;
  copy.set_ir_version(model.ir_version());
  copy.mutable_opset_import()->CopyFrom(model.opset_import());
  const ::onnx::GraphProto& src = model.graph();
  ::onnx::GraphProto* g = copy.mutable_graph();
  g->set_name(src.name());
  g->mutable_node()->CopyFrom(src.node());
  g->mutable_input()->CopyFrom(src.input());
  g->mutable_output()->CopyFrom(src.output());
  g->mutable_value_info()->CopyFrom(src.value_info());
  for (const auto& init : src.initializer()) {
    ::onnx::TensorProto* t = g->add_initializer();
    if (init.ByteSizeLong() <= 4096) {
      t->CopyFrom(init);
    } else {  // the type and shape are what inference needs
      t->set_name(init.name());
      t->set_data_type(init.data_type());
      t->mutable_dims()->CopyFrom(init.dims());
    }
  }
  try {
    ::onnx::ShapeInferenceOptions opts;
    opts.check_type = false;
    opts.error_mode = 0;
    ::onnx::shape_inference::InferShapes(copy, ::onnx::OpSchemaRegistry::Instance(), opts);
  } catch (const std::exception&) {
    // Inference is only a help here: without it, the declared types are checked.
  }
  TypeMap types;
  collect_types(copy.graph(), types);
  std::map<std::string, int64_t> opsets;
  for (const auto& o : model.opset_import()) opsets[canonical_domain(o.domain())] = o.version();
  if (!opsets.count("")) opsets[""] = 1;
  Walker w{opsets, types, {}, {}, 0};
  w.walk(copy.graph());
  return w.out;
}

}  // namespace rlx::formats::onnx
