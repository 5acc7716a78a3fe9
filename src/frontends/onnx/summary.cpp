// `rlx info model.onnx`: opsets, inputs/outputs, the operator histogram and initializer sizes,
// all from the protobuf without reading a weight.
#include <functional>
#include <set>

#include "frontends/onnx/importer.h"
#include "frontends/onnx/proto.h"
#include "frontends/onnx/support.h"
#include "util/strings.h"

namespace rlx::frontends::onnx {

namespace {

ModelSummary::Io io_of(const ::onnx::ValueInfoProto& v) {
  ModelSummary::Io io;
  io.name = v.name();
  const auto& t = v.type();
  if (t.has_tensor_type()) {
    auto d = dtype_from_onnx(t.tensor_type().elem_type());
    io.dtype = d ? dtype_name(*d) : onnx_type_name(t.tensor_type().elem_type());
    if (t.tensor_type().has_shape())
      for (const auto& dim : t.tensor_type().shape().dim())
        io.shape.push_back(dim.has_dim_value() ? std::to_string(dim.dim_value()) : dim.has_dim_param() ? dim.dim_param() : "?");
    else
      io.shape.push_back("…");
  } else if (t.has_sequence_type()) {
    io.dtype = "sequence";
  } else if (t.has_optional_type()) {
    io.dtype = "optional";
  } else if (t.has_map_type()) {
    io.dtype = "map";
  }
  return io;
}

}  // namespace

ModelSummary summarize_model(const std::string& path) {
  auto model = load_model(path);
  ModelSummary s;
  s.ir_version = model->ir_version();
  s.producer = model->producer_name() + (model->producer_version().empty() ? "" : " " + model->producer_version());
  for (const auto& o : model->opset_import()) s.opsets[o.domain().empty() ? "ai.onnx" : o.domain()] = o.version();
  const auto& g = model->graph();
  std::set<std::string> inits;
  for (const auto& t : g.initializer()) {
    inits.insert(t.name());
    ++s.initializers;
    std::vector<int64_t> dims = tensor_dims(t, cat("initializer '", t.name(), "'"));
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    s.parameters += n;
    if (t.has_data_location() && t.data_location() == ::onnx::TensorProto::EXTERNAL) {
      s.initializer_bytes += n * static_cast<int64_t>(onnx_type_size(t.data_type()));
    } else if (t.has_raw_data()) {
      s.initializer_bytes += static_cast<int64_t>(t.raw_data().size());
    } else {
      s.initializer_bytes += n * static_cast<int64_t>(onnx_type_size(t.data_type()));
    }
  }
  for (const auto& v : g.input())
    if (!inits.count(v.name())) s.inputs.push_back(io_of(v));
  for (const auto& v : g.output()) s.outputs.push_back(io_of(v));
  std::function<void(const ::onnx::GraphProto&)> walk = [&](const ::onnx::GraphProto& gr) {
    for (const auto& n : gr.node()) {
      std::string d = canonical_domain(n.domain());
      s.op_histogram[d.empty() ? n.op_type() : d + "." + n.op_type()]++;
      ++s.nodes;
      for (const auto& a : n.attribute()) {
        if (a.has_g()) walk(a.g());
        for (const auto& sg : a.graphs()) walk(sg);
      }
    }
  };
  walk(g);
  for (const auto& u : find_unsupported(*model)) s.unsupported.push_back(u.str());
  return s;
}

}  // namespace rlx::frontends::onnx
