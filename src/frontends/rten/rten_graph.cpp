#include "frontends/rten/rten_graph.h"

#include <cstring>
#include <set>
#include <vector>

#include <onnx/onnx_pb.h>

#include "frontends/rten/rten_attrs.h"
#include "rlx/error.h"
#include "rten_generated.h"
#include "util/strings.h"

namespace rlx::frontends::rten {

namespace fb = rlx::rten_fb;

namespace {

// ONNX's opset whose operator forms rten's match (Reduce* axes, Split sizes, Squeeze axes as
// inputs; Gelu; DFT's axis input).
constexpr int64_t kOpset = 21;
constexpr uint64_t kMaxElements = uint64_t{1} << 40;

class Converter {
 public:
  Converter(const uint8_t* tensors, size_t tensor_len, std::string source) : tensors_(tensors), tensor_len_(tensor_len), source_(std::move(source)) {}

  [[noreturn]] void bad(const std::string& msg) const { throw Error(ErrorKind::format, cat(source_, ": ", msg)); }

  void graph(const fb::Graph* g, ::onnx::GraphProto* out, int depth) {
    if (depth > 16) bad("subgraphs nested deeper than 16 levels");
    const auto* nodes = g->nodes();
    const size_t count = nodes ? nodes->size() : 0;
    // Names first: operators refer to nodes by index.
    std::vector<std::string> names(count);
    std::set<std::string> seen;
    for (size_t i = 0; i < count; ++i) {
      const fb::Node* n = nodes->Get(static_cast<flatbuffers::uoffset_t>(i));
      std::string name = n->name() ? n->name()->str() : std::string();
      if (name.empty() || !seen.insert(name).second) name = cat("rten:", depth, ":", i);
      names[i] = name;
    }
    auto name_of = [&](int64_t index, const char* what) -> std::string {
      if (index < 0) return "";
      if (static_cast<size_t>(index) >= count) bad(cat(what, " refers to node ", index, "; the graph has ", count));
      return names[static_cast<size_t>(index)];
    };
    for (size_t i = 0; i < count; ++i) {
      const fb::Node* n = nodes->Get(static_cast<flatbuffers::uoffset_t>(i));
      switch (n->data_type()) {
        case fb::NodeKind::ConstantNode: {
          const fb::ConstantNode* c = n->data_as_ConstantNode();
          if (!c || !c->shape()) bad(cat("constant node '", names[i], "' has no ", c ? "shape" : "data"));
          constant(c, names[i], out->add_initializer());
          break;
        }
        case fb::NodeKind::OperatorNode: {
          const fb::OperatorNode* op = n->data_as_OperatorNode();
          if (!op) bad(cat("operator node '", names[i], "' has no data"));
          ::onnx::NodeProto* p = out->add_node();
          p->set_name(names[i]);
          p->set_op_type(fb::EnumNameOperatorType(op->type()));
          if (p->op_type().empty()) throw Error(ErrorKind::unsupported, cat(source_, ": node '", names[i], "' has operator type ", static_cast<int>(op->type()), ", which this RLX does not know"));
          if (op->inputs())
            for (int32_t x : *op->inputs()) p->add_input(name_of(x, cat("operator '", names[i], "'").c_str()));
          if (op->outputs())
            for (int32_t y : *op->outputs()) p->add_output(name_of(y, cat("operator '", names[i], "'").c_str()));
          attributes(op, p, out, [&](const fb::Graph* sub, ::onnx::GraphProto* o) { graph(sub, o, depth + 1); }, source_);
          break;
        }
        case fb::NodeKind::ValueNode:
        case fb::NodeKind::NONE: break;
      }
    }
    auto io = [&](const flatbuffers::Vector<uint32_t>* ids, bool input) {
      if (!ids) return;
      for (uint32_t id : *ids) {
        std::string name = name_of(id, input ? "a graph input" : "a graph output");
        ::onnx::ValueInfoProto* v = input ? out->add_input() : out->add_output();
        v->set_name(name);
        const fb::Node* n = nodes->Get(id);
        if (const fb::ValueNode* value = n->data_as_ValueNode()) value_type(value, v);
      }
    };
    io(g->inputs(), true);
    io(g->outputs(), false);
    // Constants that ONNX operators read as booleans come from rten as int32.
    std::set<std::string> boolean;
    for (const auto& node : out->node()) {
      const std::string& t = node.op_type();
      int inputs = t == "Where" || t == "Not" ? 1 : t == "And" || t == "Or" || t == "Xor" ? 2 : 0;
      for (int k = 0; k < inputs && k < node.input_size(); ++k) boolean.insert(node.input(k));
    }
    for (auto& init : *out->mutable_initializer())
      if (boolean.count(init.name()) && init.data_type() == ::onnx::TensorProto::INT64) to_bool(init);
  }

 private:
  // ConstantNode → initializer; Int32 widened to INT64.
  void constant(const fb::ConstantNode* c, const std::string& name, ::onnx::TensorProto* t) {
    t->set_name(name);
    uint64_t numel = 1;
    for (uint32_t d : *c->shape()) {
      t->add_dims(d);
      if (d != 0 && numel > kMaxElements / d) bad(cat("constant '", name, "' has more than 2^40 elements"));
      numel *= d;
    }
    fb::ConstantDataType dtype;
    if (c->dtype()) {
      dtype = *c->dtype();
    } else {
      switch (c->data_type()) {  // older files: the inline data's type
        case fb::ConstantData::FloatData: dtype = fb::ConstantDataType::Float32; break;
        case fb::ConstantData::Int32Data: dtype = fb::ConstantDataType::Int32; break;
        case fb::ConstantData::Int8Data: dtype = fb::ConstantDataType::Int8; break;
        case fb::ConstantData::UInt8Data: dtype = fb::ConstantDataType::UInt8; break;
        default: bad(cat("constant '", name, "' has neither a dtype nor inline data"));
      }
    }
    size_t elem = 0;
    switch (dtype) {
      case fb::ConstantDataType::Float32:
      case fb::ConstantDataType::Int32: elem = 4; break;
      case fb::ConstantDataType::Int8:
      case fb::ConstantDataType::UInt8: elem = 1; break;
      default:
        throw Error(ErrorKind::unsupported, cat(source_, ": constant '", name, "' has element type ", static_cast<int>(dtype), ", which RLX does not read"));
    }
    const uint8_t* bytes = nullptr;
    size_t have = 0;
    // An inline data table: its vector of values (absent = none); the union's type without its
    // table is a malformed file.
    auto inline_data = [&](const auto* table) {
      if (!table) bad(cat("constant '", name, "' names inline data of kind ", static_cast<int>(c->data_type()), " but has none"));
      if (const auto* v = table->data()) {
        bytes = reinterpret_cast<const uint8_t*>(v->data());
        have = static_cast<size_t>(v->size()) * sizeof(*v->data());
      }
    };
    if (c->data_type() != fb::ConstantData::NONE) {
      switch (c->data_type()) {
        case fb::ConstantData::FloatData: inline_data(c->data_as_FloatData()); break;
        case fb::ConstantData::Int32Data: inline_data(c->data_as_Int32Data()); break;
        case fb::ConstantData::Int8Data: inline_data(c->data_as_Int8Data()); break;
        case fb::ConstantData::UInt8Data: inline_data(c->data_as_UInt8Data()); break;
        default: bad(cat("constant '", name, "' has inline data of unknown kind ", static_cast<int>(c->data_type())));
      }
      bool matches = (c->data_type() == fb::ConstantData::FloatData && dtype == fb::ConstantDataType::Float32) ||
                     (c->data_type() == fb::ConstantData::Int32Data && dtype == fb::ConstantDataType::Int32) ||
                     (c->data_type() == fb::ConstantData::Int8Data && dtype == fb::ConstantDataType::Int8) ||
                     (c->data_type() == fb::ConstantData::UInt8Data && dtype == fb::ConstantDataType::UInt8);
      if (!matches) bad(cat("constant '", name, "': its inline data's type does not match its dtype"));
    } else if (c->data_offset()) {
      uint64_t off = *c->data_offset();
      if (!tensors_) bad(cat("constant '", name, "' refers to tensor data, which a version 1 file does not have"));
      if (off > tensor_len_ || numel * elem > tensor_len_ - off)
        bad(cat("constant '", name, "' (", numel * elem, " bytes at offset ", off, ") lies outside the tensor data (", tensor_len_, " bytes)"));
      bytes = tensors_ + off;
      have = static_cast<size_t>(numel * elem);
    } else {
      bad(cat("constant '", name, "' has no data"));
    }
    if (have != numel * elem) bad(cat("constant '", name, "' holds ", have / elem, " values for a shape of ", numel));
    std::string raw;
    switch (dtype) {
      case fb::ConstantDataType::Float32: t->set_data_type(::onnx::TensorProto::FLOAT); if (have) raw.assign(reinterpret_cast<const char*>(bytes), have); break;
      case fb::ConstantDataType::Int8: t->set_data_type(::onnx::TensorProto::INT8); if (have) raw.assign(reinterpret_cast<const char*>(bytes), have); break;
      case fb::ConstantDataType::UInt8: t->set_data_type(::onnx::TensorProto::UINT8); if (have) raw.assign(reinterpret_cast<const char*>(bytes), have); break;
      default: {  // Int32
        t->set_data_type(::onnx::TensorProto::INT64);
        raw.resize(static_cast<size_t>(numel) * 8);
        for (uint64_t i = 0; i < numel; ++i) {
          int32_t v;
          std::memcpy(&v, bytes + i * 4, 4);
          int64_t w = v;
          std::memcpy(&raw[static_cast<size_t>(i) * 8], &w, 8);
        }
        break;
      }
    }
    t->set_raw_data(std::move(raw));
  }

  static void to_bool(::onnx::TensorProto& t) {
    const std::string& raw = t.raw_data();
    std::string b(raw.size() / 8, '\0');
    for (size_t i = 0; i < b.size(); ++i) {
      int64_t v;
      std::memcpy(&v, raw.data() + i * 8, 8);
      b[i] = v != 0;
    }
    t.set_data_type(::onnx::TensorProto::BOOL);
    t.set_raw_data(b);
  }

  void value_type(const fb::ValueNode* v, ::onnx::ValueInfoProto* out) const {
    if (!v->dtype()) return;
    auto* tt = out->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx_dtype(*v->dtype()));
    if (!v->shape()) return;
    auto* shape = tt->mutable_shape();
    for (const fb::Dim* d : *v->shape()) {
      auto* dim = shape->add_dim();
      if (d->name() && d->name()->size()) dim->set_dim_param(d->name()->str());
      else dim->set_dim_value(d->value());
    }
  }

  const uint8_t* tensors_;
  size_t tensor_len_;
  std::string source_;
};

}  // namespace

int32_t onnx_dtype(fb::DataType t) {
  switch (t) {
    case fb::DataType::Int32: return ::onnx::TensorProto::INT64;  // rten's int32 is ONNX's int64 too
    case fb::DataType::Float: return ::onnx::TensorProto::FLOAT;
    case fb::DataType::Int8: return ::onnx::TensorProto::INT8;
    case fb::DataType::UInt8: return ::onnx::TensorProto::UINT8;
  }
  return ::onnx::TensorProto::UNDEFINED;
}

std::shared_ptr<::onnx::ModelProto> convert_model(const uint8_t* model, size_t model_len, const uint8_t* tensors, size_t tensor_len,
                                                  const std::string& source) {
  flatbuffers::Verifier verifier(model, model_len, /*max_depth=*/64, /*max_tables=*/4000000);
  if (!verifier.VerifyBuffer<fb::Model>(nullptr))
    throw Error(ErrorKind::format, cat(source, ": the model data is not a valid .rten FlatBuffer (", model_len, " bytes: truncated or corrupted?)"));
  const fb::Model* m = flatbuffers::GetRoot<fb::Model>(model);
  auto out = std::make_shared<::onnx::ModelProto>();
  out->set_ir_version(8);
  out->set_producer_name("rten");
  auto* opset = out->add_opset_import();
  opset->set_domain("");
  opset->set_version(kOpset);
  if (const fb::Metadata* md = m->metadata()) {
    auto put = [&](const char* key, const flatbuffers::String* v) {
      if (!v) return;
      auto* p = out->add_metadata_props();
      p->set_key(key);
      p->set_value(v->str());
    };
    put("description", md->description());
    put("license", md->license());
    put("onnx_hash", md->onnx_hash());
    put("model_repository", md->model_repository());
    put("code_repository", md->code_repository());
    put("commit", md->commit());
    if (md->description()) out->set_doc_string(md->description()->str());
  }
  Converter(tensors, tensor_len, source).graph(m->graph(), out->mutable_graph(), 0);
  out->mutable_graph()->set_name("rten");
  return out;
}

}  // namespace rlx::frontends::rten
