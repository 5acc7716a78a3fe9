// Building small ONNX models in tests, importing and running them.
#pragma once
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include <onnx/onnx_pb.h>

#include "frontends/onnx/onnx.h"
#include "rlx/session.h"
#include "rlx/tensor.h"

namespace rlx::onnx_test {

inline ::onnx::ValueInfoProto value_info(const std::string& name, int32_t elem, const std::vector<std::string>& dims) {
  ::onnx::ValueInfoProto v;
  v.set_name(name);
  auto* t = v.mutable_type()->mutable_tensor_type();
  t->set_elem_type(elem);
  auto* s = t->mutable_shape();
  for (const auto& d : dims) {
    auto* dim = s->add_dim();
    if (!d.empty() && (std::isdigit(static_cast<unsigned char>(d[0])))) dim->set_dim_value(std::stoll(d));
    else if (!d.empty()) dim->set_dim_param(d);
  }
  return v;
}

struct Attr {
  std::string name;
  enum Kind { i, f, s, ints, floats } kind;
  int64_t iv = 0;
  float fv = 0;
  std::string sv;
  std::vector<int64_t> iv_list;
  std::vector<float> fv_list;
};
inline Attr ai(std::string n, int64_t v) { return Attr{std::move(n), Attr::i, v, 0, "", {}, {}}; }
inline Attr af(std::string n, float v) { return Attr{std::move(n), Attr::f, 0, v, "", {}, {}}; }
inline Attr as(std::string n, std::string v) { return Attr{std::move(n), Attr::s, 0, 0, std::move(v), {}, {}}; }
inline Attr aints(std::string n, std::vector<int64_t> v) { return Attr{std::move(n), Attr::ints, 0, 0, "", std::move(v), {}}; }

inline ::onnx::NodeProto node(const std::string& op, std::vector<std::string> in, std::vector<std::string> out, std::vector<Attr> attrs = {},
                              const std::string& domain = "", const std::string& name = "") {
  ::onnx::NodeProto n;
  n.set_op_type(op);
  n.set_domain(domain);
  n.set_name(name.empty() ? op + "_" + (out.empty() ? std::string("x") : out[0]) : name);
  for (auto& i : in) n.add_input(i);
  for (auto& o : out) n.add_output(o);
  for (const auto& a : attrs) {
    auto* p = n.add_attribute();
    p->set_name(a.name);
    switch (a.kind) {
      case Attr::i: p->set_type(::onnx::AttributeProto::INT), p->set_i(a.iv); break;
      case Attr::f: p->set_type(::onnx::AttributeProto::FLOAT), p->set_f(a.fv); break;
      case Attr::s: p->set_type(::onnx::AttributeProto::STRING), p->set_s(a.sv); break;
      case Attr::ints:
        p->set_type(::onnx::AttributeProto::INTS);
        for (int64_t v : a.iv_list) p->add_ints(v);
        break;
      case Attr::floats:
        p->set_type(::onnx::AttributeProto::FLOATS);
        for (float v : a.fv_list) p->add_floats(v);
        break;
    }
  }
  return n;
}

inline ::onnx::TensorProto tensor_proto(const std::string& name, const Tensor& t) {
  ::onnx::TensorProto p;
  p.set_name(name);
  int32_t type = ::onnx::TensorProto::FLOAT;
  switch (t.dtype()) {
    case DType::f32: type = ::onnx::TensorProto::FLOAT; break;
    case DType::f64: type = ::onnx::TensorProto::DOUBLE; break;
    case DType::i64: type = ::onnx::TensorProto::INT64; break;
    case DType::i32: type = ::onnx::TensorProto::INT32; break;
    case DType::boolean: type = ::onnx::TensorProto::BOOL; break;
    default: break;
  }
  p.set_data_type(type);
  for (int64_t d : t.shape()) p.add_dims(d);
  Tensor c = t.contiguous();
  p.set_raw_data(std::string(static_cast<const char*>(c.data()), c.nbytes()));
  return p;
}

struct ModelSpec {
  int64_t opset = 17;
  std::vector<std::pair<std::string, int64_t>> extra_opsets;
  std::vector<::onnx::NodeProto> nodes;
  std::vector<::onnx::ValueInfoProto> inputs, outputs;
  std::vector<::onnx::TensorProto> initializers;
};

inline std::shared_ptr<::onnx::ModelProto> make_model(const ModelSpec& s) {
  auto m = std::make_shared<::onnx::ModelProto>();
  m->set_ir_version(8);
  m->set_producer_name("rlx-tests");
  auto* o = m->add_opset_import();
  o->set_domain("");
  o->set_version(s.opset);
  for (const auto& [d, v] : s.extra_opsets) {
    auto* e = m->add_opset_import();
    e->set_domain(d);
    e->set_version(v);
  }
  auto* g = m->mutable_graph();
  g->set_name("test");
  for (const auto& n : s.nodes) *g->add_node() = n;
  for (const auto& v : s.inputs) *g->add_input() = v;
  for (const auto& v : s.outputs) *g->add_output() = v;
  for (const auto& t : s.initializers) *g->add_initializer() = t;
  return m;
}

inline void save_model(const ::onnx::ModelProto& m, const std::string& path) {
  std::ofstream f(path, std::ios::binary);
  m.SerializeToOstream(&f);
}

// Imports with the given inputs (values bound) and runs on a device.
inline std::vector<Tensor> run_model(std::shared_ptr<::onnx::ModelProto> m, const std::vector<std::pair<std::string, Tensor>>& inputs,
                                     const std::string& device = "cpu", const std::string& dir = ".") {
  frontends::onnx::ImportOptions opts;
  for (const auto& [n, t] : inputs) opts.inputs[n] = t;
  frontends::onnx::ImportedModel im = frontends::onnx::import_model(std::move(m), dir, opts);
  std::vector<Tensor> feed;
  feed = im.feed(opts);
  return Session(device).compile(Graph(im.graph)).run(feed);
}

inline std::string temp_dir(const std::string& name) {
  auto p = std::filesystem::temp_directory_path() / ("rlx_onnx_test_" + name);
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p.string();
}

}  // namespace rlx::onnx_test
