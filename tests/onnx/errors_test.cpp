// Malformed and unsupported models fail with one clear rlx::Error: truncated or corrupted
// files, unsupported operators and dtypes (all listed, before any weight is read), external
// data that leaves the model's directory, inconsistent tensors, dangling values.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "frontends/onnx/onnx.h"
#include "onnx_test_util.h"
#include "rlx/error.h"

namespace {

using namespace rlx::onnx_test;
using rlx::DType;
using rlx::Error;
using rlx::ErrorKind;
using rlx::Tensor;
namespace ox = rlx::frontends::onnx;

std::shared_ptr<::onnx::ModelProto> relu_model() {
  ModelSpec s;
  s.nodes = {node("Relu", {"x"}, {"y"})};
  s.inputs = {value_info("x", ::onnx::TensorProto::FLOAT, {"2", "3"})};
  s.outputs = {value_info("y", ::onnx::TensorProto::FLOAT, {"2", "3"})};
  return make_model(s);
}

template <class F>
Error error_of(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no rlx::Error was thrown";
  return Error(ErrorKind::internal, "");
}

TEST(OnnxErrors, TruncatedFileIsAFormatError) {
  std::string dir = temp_dir("truncated");
  std::string bytes = relu_model()->SerializeAsString();
  for (size_t cut : {bytes.size() / 2, bytes.size() - 3, size_t{5}}) {
    std::string path = dir + "/cut.onnx";
    std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(cut));
    Error e = error_of([&] { ox::import_model(path); });
    EXPECT_EQ(e.kind(), ErrorKind::format) << e.what();
    EXPECT_NE(std::string(e.what()).find("cut.onnx"), std::string::npos) << e.what();
  }
}

TEST(OnnxErrors, CorruptedAndEmptyFiles) {
  std::string dir = temp_dir("corrupt");
  std::string bytes = relu_model()->SerializeAsString();
  for (size_t i = 4; i < bytes.size(); i += 7) bytes[i] = static_cast<char>(0xff);
  std::ofstream(dir + "/bad.onnx", std::ios::binary) << bytes;
  Error e = error_of([&] { ox::import_model(dir + "/bad.onnx"); });
  EXPECT_TRUE(e.kind() == ErrorKind::format || e.kind() == ErrorKind::unsupported) << e.what();
  std::ofstream(dir + "/empty.onnx", std::ios::binary);
  e = error_of([&] { ox::import_model(dir + "/empty.onnx"); });
  EXPECT_EQ(e.kind(), ErrorKind::format);
  EXPECT_NE(std::string(e.what()).find("empty"), std::string::npos) << e.what();
  e = error_of([&] { ox::import_model(dir + "/missing.onnx"); });
  EXPECT_EQ(e.kind(), ErrorKind::io);
}

// Every unsupported node is listed in one error, before the initializers are read: the
// external-data initializer below points at a file that does not exist.
TEST(OnnxErrors, UnsupportedOpsAreAllListedBeforeWeightsAreRead) {
  ModelSpec s;
  s.nodes = {node("Relu", {"x"}, {"a"}), node("FrobnicateA", {"a"}, {"b"}, {}, "", "first_bad"), node("Add", {"b", "w"}, {"c"}),
             node("FrobnicateB", {"c"}, {"y"}, {}, "com.example", "second_bad")};
  s.extra_opsets = {{"com.example", 1}};
  s.inputs = {value_info("x", ::onnx::TensorProto::FLOAT, {"2"})};
  s.outputs = {value_info("y", ::onnx::TensorProto::FLOAT, {"2"})};
  ::onnx::TensorProto w;
  w.set_name("w");
  w.set_data_type(::onnx::TensorProto::FLOAT);
  w.add_dims(2);
  w.set_data_location(::onnx::TensorProto::EXTERNAL);
  auto* kv = w.add_external_data();
  kv->set_key("location");
  kv->set_value("does_not_exist.bin");
  s.initializers = {w};
  Error e = error_of([&] { ox::import_model(make_model(s), temp_dir("unsupported")); });
  EXPECT_EQ(e.kind(), ErrorKind::unsupported);
  std::string msg = e.what();
  EXPECT_NE(msg.find("2 nodes"), std::string::npos) << msg;
  EXPECT_NE(msg.find("FrobnicateA (opset 17) node 'first_bad'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("com.example.FrobnicateB (opset 1) node 'second_bad'"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("does_not_exist"), std::string::npos) << msg;
}

// Attribute combinations a converter does not support are found while converting; all of them
// still come in one error (nodes downstream of one are skipped, not reported again).
TEST(OnnxErrors, UnsupportedAttributesAreAllListed) {
  ModelSpec s;
  s.opset = 13;
  s.extra_opsets = {{"com.microsoft", 1}};
  s.nodes = {node("Pad", {"x", "pads"}, {"a"}, {as("mode", "wrap")}, "", "wrap_pad"), node("Relu", {"a"}, {"b"}, {}, "", "after_pad"),
             node("FusedMatMul", {"x", "x"}, {"c"}, {ai("transBatchA", 1)}, "com.microsoft", "batch_transposed")};
  s.inputs = {value_info("x", ::onnx::TensorProto::FLOAT, {"2", "2"})};
  s.outputs = {value_info("b", ::onnx::TensorProto::FLOAT, {}), value_info("c", ::onnx::TensorProto::FLOAT, {})};
  s.initializers = {tensor_proto("pads", Tensor::from_vector(std::vector<int64_t>{1, 1, 1, 1}, {4}))};
  Error e = error_of([&] { ox::import_model(make_model(s), "."); });
  EXPECT_EQ(e.kind(), ErrorKind::unsupported);
  std::string msg = e.what();
  EXPECT_NE(msg.find("2 nodes"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'wrap_pad'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'batch_transposed'"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("after_pad"), std::string::npos) << msg;
}

TEST(OnnxErrors, UnsupportedDtypesAreNamed) {
  ModelSpec s;
  s.nodes = {node("Cast", {"x"}, {"y"}, {ai("to", ::onnx::TensorProto::STRING)}, "", "to_text"), node("Identity", {"u"}, {"v"}, {}, "", "wide")};
  s.inputs = {value_info("x", ::onnx::TensorProto::FLOAT, {"2"}), value_info("u", ::onnx::TensorProto::UINT32, {"2"})};
  s.outputs = {value_info("y", ::onnx::TensorProto::STRING, {"2"}), value_info("v", ::onnx::TensorProto::UINT32, {"2"})};
  Error e = error_of([&] { ox::import_model(make_model(s), "."); });
  EXPECT_EQ(e.kind(), ErrorKind::unsupported);
  std::string msg = e.what();
  EXPECT_NE(msg.find("Cast (opset 17, dtypes STRING) node 'to_text'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Identity (opset 17, dtypes UINT32) node 'wide'"), std::string::npos) << msg;
}

std::shared_ptr<::onnx::ModelProto> external_model(const std::string& location, int64_t offset, int64_t length) {
  ModelSpec s;
  s.nodes = {node("Add", {"x", "w"}, {"y"})};
  s.inputs = {value_info("x", ::onnx::TensorProto::FLOAT, {"4"})};
  s.outputs = {value_info("y", ::onnx::TensorProto::FLOAT, {"4"})};
  ::onnx::TensorProto w;
  w.set_name("w");
  w.set_data_type(::onnx::TensorProto::FLOAT);
  w.add_dims(4);
  w.set_data_location(::onnx::TensorProto::EXTERNAL);
  auto add = [&](const char* k, const std::string& v) {
    auto* kv = w.add_external_data();
    kv->set_key(k);
    kv->set_value(v);
  };
  add("location", location);
  add("offset", std::to_string(offset));
  add("length", std::to_string(length));
  s.initializers = {w};
  return make_model(s);
}

TEST(OnnxErrors, ExternalDataStaysInsideTheModelDirectory) {
  std::string dir = temp_dir("external");
  std::vector<float> w = {0, 0, 10, 20, 30, 40};
  std::ofstream(dir + "/weights.bin", std::ios::binary).write(reinterpret_cast<const char*>(w.data()), 24);
  Tensor x = Tensor::from_vector(std::vector<float>{1, 2, 3, 4}, {4});
  auto y = run_model(external_model("weights.bin", 8, 16), {{"x", x}}, "cpu", dir);
  EXPECT_EQ(y[0].to_vector<float>(), (std::vector<float>{11, 22, 33, 44}));
  for (const std::string& loc : {std::string("../weights.bin"), std::string("/etc/passwd"), std::string("sub/../../weights.bin")}) {
    Error e = error_of([&] { run_model(external_model(loc, 0, 16), {{"x", x}}, "cpu", dir); });
    EXPECT_EQ(e.kind(), ErrorKind::format) << loc << ": " << e.what();
    EXPECT_NE(std::string(e.what()).find(loc), std::string::npos) << e.what();
  }
  Error e = error_of([&] { run_model(external_model("weights.bin", 16, 16), {{"x", x}}, "cpu", dir); });
  EXPECT_EQ(e.kind(), ErrorKind::format) << e.what();
  EXPECT_NE(std::string(e.what()).find("outside"), std::string::npos) << e.what();
  e = error_of([&] { run_model(external_model("nothing_here.bin", 0, 16), {{"x", x}}, "cpu", dir); });
  EXPECT_EQ(e.kind(), ErrorKind::io) << e.what();
}

TEST(OnnxErrors, InconsistentInitializerAndDanglingValue) {
  ModelSpec s;
  s.nodes = {node("Add", {"x", "w"}, {"y"})};
  s.inputs = {value_info("x", ::onnx::TensorProto::FLOAT, {"4"})};
  s.outputs = {value_info("y", ::onnx::TensorProto::FLOAT, {"4"})};
  ::onnx::TensorProto w = tensor_proto("w", Tensor::from_vector(std::vector<float>{1, 2, 3}, {3}));
  w.set_dims(0, 4);  // 3 floats of data for 4 elements
  s.initializers = {w};
  Error e = error_of([&] { ox::import_model(make_model(s), "."); });
  EXPECT_EQ(e.kind(), ErrorKind::format);
  EXPECT_NE(std::string(e.what()).find("raw_data holds 12 bytes"), std::string::npos) << e.what();
  s.initializers.clear();
  e = error_of([&] { ox::import_model(make_model(s), "."); });
  EXPECT_EQ(e.kind(), ErrorKind::format);
  EXPECT_NE(std::string(e.what()).find("'w'"), std::string::npos) << e.what();
}

TEST(OnnxErrors, ShapeArgumentFromAnUnknownInput) {
  ModelSpec s;
  s.opset = 13;
  s.nodes = {node("Reshape", {"x", "shape"}, {"y"})};
  s.inputs = {value_info("x", ::onnx::TensorProto::FLOAT, {"6"}), value_info("shape", ::onnx::TensorProto::INT64, {"2"})};
  s.outputs = {value_info("y", ::onnx::TensorProto::FLOAT, {"2", "3"})};
  Error e = error_of([&] { ox::import_model(make_model(s), "."); });
  EXPECT_EQ(e.kind(), ErrorKind::unsupported);
  EXPECT_NE(std::string(e.what()).find("'shape'"), std::string::npos) << e.what();
  // With the value given (as rlx run does), the graph is specialised to it.
  ox::ImportOptions opts;
  opts.inputs["x"] = Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {6});
  opts.inputs["shape"] = Tensor::from_vector(std::vector<int64_t>{3, -1}, {2});
  auto m = ox::import_model(make_model(s), ".", opts);
  EXPECT_EQ(m.specialized_inputs, std::vector<std::string>{"shape"});
  EXPECT_EQ(rlx::shape_str(m.graph->type(m.graph->outputs()[0]).shape), "[3,2]");
}

}  // namespace
