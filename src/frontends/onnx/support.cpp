#include "frontends/onnx/support.h"

#include <map>
#include <set>
#include <unordered_map>

#include "frontends/onnx/importer.h"
#include "frontends/onnx/proto.h"
#include "util/strings.h"

namespace rlx::frontends::onnx {

std::string UnsupportedNode::str() const {
  std::string s = cat(domain.empty() ? "" : domain + ".", op, " (opset ", opset);
  if (!dtypes.empty()) s += cat(", dtypes ", join(dtypes));
  s += cat(") node '", node, "': ", no_converter ? "no converter for this operator" : "RLX has no dtype for its tensors");
  return s;
}

namespace {

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

std::string unsupported_elem(int64_t onnx_type) {
  return dtype_from_onnx(static_cast<int32_t>(onnx_type)) ? "" : onnx_type_name(static_cast<int32_t>(onnx_type));
}

// Which values carry a dtype RLX lacks: the declared types (inputs, outputs, value_info,
// initializers) and, for undeclared intermediates, what flows in — a node's outputs inherit its
// inputs' unsupported dtypes unless it is a cast. ONNX's own shape inference is not used here:
// it is not robust to hostile files (it divides by attribute values unchecked).
struct Walker {
  const std::map<std::string, int64_t>& opsets;
  std::unordered_map<std::string, std::string> bad;  // value name → unsupported dtype ("" = fine)
  std::set<std::string> declared;
  std::vector<UnsupportedNode> out;
  int64_t counter = 0;

  void declare(const ::onnx::ValueInfoProto& v) {
    bad[v.name()] = unsupported_type(v.type());
    declared.insert(v.name());
  }

  void walk(const ::onnx::GraphProto& g) {
    for (const auto& v : g.input()) declare(v);
    for (const auto& v : g.value_info()) declare(v);
    for (const auto& v : g.output()) declare(v);
    for (const auto& i : g.initializer()) {
      bad[i.name()] = unsupported_elem(i.data_type());
      declared.insert(i.name());
    }
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
      std::set<std::string> in_bad, attr_bad;
      for (const auto& i : n.input())
        if (auto b = bad.find(i); b != bad.end() && !b->second.empty()) in_bad.insert(b->second);
      std::string cast_to;  // the output type of a cast-like node ("" = fine, or not a cast)
      bool is_cast = n.op_type() == "Cast" || n.op_type() == "CastLike";
      for (const auto& a : n.attribute()) {
        if ((a.name() == "to" || a.name() == "dtype" || a.name() == "output_datatype") && a.type() == ::onnx::AttributeProto::INT) {
          std::string s = unsupported_elem(a.i());
          if (!s.empty()) attr_bad.insert(s);
          if (a.name() == "to") cast_to = s;
        }
        if (a.has_t() && !dtype_from_onnx(a.t().data_type())) attr_bad.insert(onnx_type_name(a.t().data_type()));
      }
      if (n.op_type() == "CastLike" && n.input_size() > 1)
        if (auto b = bad.find(n.input(1)); b != bad.end()) cast_to = b->second;
      for (const auto& o : n.output()) {
        if (declared.count(o)) continue;
        if (is_cast) bad[o] = cast_to;
        else bad[o] = !attr_bad.empty() ? *attr_bad.begin() : in_bad.empty() ? "" : *in_bad.begin();
      }
      std::set<std::string> all = in_bad;
      all.insert(attr_bad.begin(), attr_bad.end());
      for (const auto& o : n.output())
        if (auto b = bad.find(o); b != bad.end() && !b->second.empty()) all.insert(b->second);
      u.dtypes.assign(all.begin(), all.end());
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
  std::map<std::string, int64_t> opsets;
  for (const auto& o : model.opset_import()) opsets[canonical_domain(o.domain())] = o.version();
  if (!opsets.count("")) opsets[""] = 1;
  Walker w{opsets, {}, {}, {}, 0};
  w.walk(model.graph());
  return w.out;
}

}  // namespace rlx::frontends::onnx
