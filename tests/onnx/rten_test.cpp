// .rten models (frontends/rten): files written by rten's own converter (tests/fixtures/rten)
// run like their ONNX originals and give PyTorch's outputs; malformed files — bad headers,
// offsets past the end, invalid FlatBuffers, constants outside the tensor data, dangling node
// indices, attributes of the wrong kind — fail with one rlx::Error naming the file.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include <flatbuffers/flatbuffers.h>

#include "formats/npy.h"
#include "frontends/onnx/onnx.h"
#include "frontends/rten/rten.h"
#include "onnx_test_util.h"
#include "rlx/error.h"
#include "rlx/graph.h"
#include "rlx/session.h"
#include "rten_generated.h"
#include "util/strings.h"

namespace {

using rlx::cat;
using rlx::Error;
using rlx::ErrorKind;
using rlx::Tensor;
namespace ox = rlx::frontends::onnx;
namespace fb = rlx::rten_fb;

std::string fixture(const std::string& f) { return std::string(RLX_RTEN_FIXTURES) + "/" + f; }

double max_diff(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.shape(), b.shape());
  std::vector<double> x = a.to_f64(), y = b.to_f64();
  double m = 0;
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) m = std::max(m, std::fabs(x[i] - y[i]));
  return m;
}

std::vector<Tensor> run(const std::string& path, const std::map<std::string, Tensor>& feed) {
  ox::ImportOptions o;
  for (const auto& [k, v] : feed) o.input_shapes[k] = v.shape();
  ox::ImportedModel m = ox::import_model(path, o);
  std::vector<Tensor> in;
  for (const auto& name : m.inputs) in.push_back(feed.at(name));
  return rlx::Session("cpu").compile(rlx::Graph(m.graph)).run(in);
}

struct Case {
  const char* name;
  std::vector<const char*> inputs;
};

class RtenFixture : public ::testing::TestWithParam<Case> {};

TEST_P(RtenFixture, RunsLikeItsOnnxAndGivesPyTorchsOutputs) {
  const Case& c = GetParam();
  ASSERT_TRUE(rlx::frontends::rten::is_rten_file(fixture(cat(c.name, ".rten"))));
  std::map<std::string, Tensor> feed;
  for (const char* in : c.inputs) feed[in] = rlx::formats::read_npy(fixture(cat(c.name, ".", in, ".npy")));
  Tensor want = rlx::formats::read_npy(fixture(cat(c.name, ".out.npy")));
  std::vector<Tensor> from_rten = run(fixture(cat(c.name, ".rten")), feed);
  std::vector<Tensor> from_onnx = run(fixture(cat(c.name, ".onnx")), feed);
  ASSERT_EQ(from_rten.size(), 1u);
  double err = max_diff(from_rten[0], want);
  std::printf("[rten] %s: max |RLX(.rten) - torch| = %.3g, |.rten - .onnx| = %.3g\n", c.name, err, max_diff(from_rten[0], from_onnx[0]));
  EXPECT_LE(err, 1e-5);
  EXPECT_LE(max_diff(from_rten[0], from_onnx[0]), 1e-6);
}

INSTANTIATE_TEST_SUITE_P(Converted, RtenFixture,
                         ::testing::Values(Case{"cnn", {"x"}}, Case{"encoder", {"ids", "mask"}}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(Rten, SummaryNamesTheOperators) {
  ox::ModelSummary s = ox::summarize_model(fixture("cnn.rten"));
  EXPECT_EQ(s.op_histogram.at("Conv"), 2);
  EXPECT_TRUE(s.unsupported.empty());
  ASSERT_EQ(s.inputs.size(), 1u);
  EXPECT_EQ(s.inputs[0].name, "x");
  EXPECT_EQ(s.inputs[0].shape[0], "N");  // the symbolic batch dim survives
}

// ---- malformed files ----

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

Error error_of(const std::string& bytes, const std::string& name) {
  std::string path = rlx::onnx_test::temp_dir("rten") + "/" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  try {
    ox::import_model(path);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << "the error does not name the file: " << e.what();
    return e;
  }
  ADD_FAILURE() << name << ": no rlx::Error";
  return Error(ErrorKind::internal, "");
}

void put64(std::string& s, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i) s[at + i] = static_cast<char>(v >> (8 * i));
}

// A version 2 file around a model built here: [header][model][tensor data].
std::string v2_file(flatbuffers::FlatBufferBuilder& b, const std::string& tensor_data) {
  std::string model(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
  std::string f(32, '\0');
  f.replace(0, 4, "RTEN");
  f[4] = 2;
  put64(f, 8, 32);
  put64(f, 16, model.size());
  size_t tensors = (32 + model.size() + 63) / 64 * 64;
  put64(f, 24, tensors);
  f += model;
  f.resize(tensors, '\0');
  return f + tensor_data;
}

// x → Relu → y, with a constant c[shape] at `offset` in the tensor data (or inline).
std::string relu_model(int32_t relu_input, uint64_t offset, uint32_t elems, fb::OperatorAttrs attrs_kind = fb::OperatorAttrs::NONE,
                       uint8_t op_type = static_cast<uint8_t>(fb::OperatorType::Relu)) {
  flatbuffers::FlatBufferBuilder b;
  std::vector<flatbuffers::Offset<fb::Node>> nodes;
  nodes.push_back(fb::CreateNode(b, b.CreateString("x"), fb::NodeKind::ValueNode, fb::CreateValueNode(b, 0, fb::DataType::Float).Union()));
  auto shape = b.CreateVector(std::vector<uint32_t>{elems});
  nodes.push_back(fb::CreateNode(b, b.CreateString("c"), fb::NodeKind::ConstantNode,
                                 fb::CreateConstantNode(b, shape, fb::ConstantData::NONE, 0, fb::ConstantDataType::Float32, offset).Union()));
  flatbuffers::Offset<void> attrs = 0;
  if (attrs_kind == fb::OperatorAttrs::GemmAttrs) attrs = fb::CreateGemmAttrs(b, 1, 1).Union();
  auto op = fb::CreateOperatorNode(b, static_cast<fb::OperatorType>(op_type), attrs_kind, attrs, b.CreateVector(std::vector<int32_t>{relu_input}),
                                   b.CreateVector(std::vector<int32_t>{3}));
  nodes.push_back(fb::CreateNode(b, b.CreateString("relu"), fb::NodeKind::OperatorNode, op.Union()));
  nodes.push_back(fb::CreateNode(b, b.CreateString("y"), fb::NodeKind::ValueNode, fb::CreateValueNode(b).Union()));
  auto g = fb::CreateGraph(b, b.CreateVector(nodes), b.CreateVector(std::vector<uint32_t>{0}), b.CreateVector(std::vector<uint32_t>{3}));
  b.Finish(fb::CreateModel(b, 1, g), "RTEN");
  return v2_file(b, std::string(16, '\0'));
}

TEST(RtenErrors, AWellFormedModelBuiltHereImports) {
  // the catalogue's base case: the same builder with valid values runs
  std::string path = rlx::onnx_test::temp_dir("rten") + "/ok.rten";
  std::ofstream(path, std::ios::binary) << relu_model(0, 0, 4);
  ox::ImportOptions o;
  o.input_shapes["x"] = {2};
  EXPECT_NO_THROW(ox::import_model(path, o));
}

TEST(RtenErrors, HeaderAndOffsets) {
  std::string good = read_file(fixture("cnn.rten"));
  std::string bad_version = good;
  bad_version[4] = 7;
  EXPECT_EQ(error_of(bad_version, "version7.rten").kind(), ErrorKind::unsupported);
  std::string past_end = good;
  put64(past_end, 16, good.size());  // the model runs past the end
  EXPECT_NE(std::string(error_of(past_end, "model_len.rten").what()).find("model data"), std::string::npos);
  std::string tensors_past_end = good;
  put64(tensors_past_end, 24, uint64_t{1} << 62);
  EXPECT_NE(std::string(error_of(tensors_past_end, "tensor_offset.rten").what()).find("tensor data"), std::string::npos);
  for (size_t cut : {size_t{40}, good.size() / 2, size_t{33}}) {
    Error e = error_of(good.substr(0, cut), cat("cut", cut, ".rten"));
    EXPECT_EQ(e.kind(), ErrorKind::format) << e.what();
  }
  std::string corrupt = good;
  for (size_t i = 40; i < 400 && i < corrupt.size(); i += 5) corrupt[i] = static_cast<char>(0xff);
  Error e = error_of(corrupt, "corrupt.rten");
  EXPECT_TRUE(e.kind() == ErrorKind::format || e.kind() == ErrorKind::unsupported) << e.what();
}

TEST(RtenErrors, GraphContents) {
  EXPECT_NE(std::string(error_of(relu_model(0, 1u << 20, 4), "far_constant.rten").what()).find("outside the tensor data"), std::string::npos);
  EXPECT_NE(std::string(error_of(relu_model(9, 0, 4), "dangling.rten").what()).find("refers to node 9"), std::string::npos);
  EXPECT_NE(std::string(error_of(relu_model(0, 0, 4, fb::OperatorAttrs::GemmAttrs), "wrong_attrs.rten").what()).find("GemmAttrs"),
            std::string::npos);
  Error unknown = error_of(relu_model(0, 0, 4, fb::OperatorAttrs::NONE, 250), "unknown_op.rten");
  EXPECT_EQ(unknown.kind(), ErrorKind::unsupported) << unknown.what();
  EXPECT_NE(std::string(unknown.what()).find("250"), std::string::npos) << unknown.what();
}

}  // namespace
