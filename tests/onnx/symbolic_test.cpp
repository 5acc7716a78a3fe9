// Dynamic input dims become symbols; shape arithmetic on them (Shape → Gather → Unsqueeze →
// Concat → Reshape) stays symbolic, and one compiled model runs at several concrete sizes.
#include <gtest/gtest.h>

#include "onnx_test_util.h"

namespace {

using namespace rlx::onnx_test;
using rlx::Tensor;
namespace ox = rlx::frontends::onnx;

// y = reshape(x, [batch, 2, -1]) · 2 with `batch` read from x's shape at run time.
std::shared_ptr<::onnx::ModelProto> dynamic_reshape_model() {
  ModelSpec s;
  s.opset = 13;
  s.nodes = {node("Shape", {"x"}, {"shape"}),
             node("Gather", {"shape", "zero"}, {"batch"}, {ai("axis", 0)}),
             node("Unsqueeze", {"batch", "axes0"}, {"batch1"}),
             node("Concat", {"batch1", "rest"}, {"target"}, {ai("axis", 0)}),
             node("Reshape", {"x", "target"}, {"r"}),
             node("Mul", {"r", "two"}, {"y"})};
  s.inputs = {value_info("x", ::onnx::TensorProto::FLOAT, {"batch", "6"})};
  s.outputs = {value_info("y", ::onnx::TensorProto::FLOAT, {"batch", "2", "3"})};
  s.initializers = {tensor_proto("zero", Tensor::from_vector(std::vector<int64_t>{0}, {})),
                    tensor_proto("axes0", Tensor::from_vector(std::vector<int64_t>{0}, {1})),
                    tensor_proto("rest", Tensor::from_vector(std::vector<int64_t>{2, -1}, {2})),
                    tensor_proto("two", Tensor::from_vector(std::vector<float>{2}, {}))};
  return make_model(s);
}

TEST(OnnxSymbolic, DynamicDimsStaySymbolic) {
  auto m = ox::import_model(dynamic_reshape_model(), ".");
  const auto& g = *m.graph;
  EXPECT_EQ(rlx::shape_str(g.type(g.inputs()[0]).shape), "[batch,6]");
  EXPECT_EQ(rlx::shape_str(g.type(g.outputs()[0]).shape), "[batch,2,3]");
  EXPECT_TRUE(m.specialized_inputs.empty());
  rlx::CompiledModel cm = rlx::Session("cpu").compile(rlx::Graph(m.graph));
  for (int64_t batch : {1, 3}) {
    std::vector<float> v(static_cast<size_t>(batch * 6));
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
    Tensor y = cm.run({Tensor::from_vector(v, {batch, 6})})[0];
    EXPECT_EQ(y.shape(), (std::vector<int64_t>{batch, 2, 3}));
    for (size_t i = 0; i < v.size(); ++i) EXPECT_EQ(y.to_vector<float>()[i], 2 * v[i]);
  }
}

TEST(OnnxSymbolic, ConcreteShapesSpecialise) {
  ox::ImportOptions opts;
  opts.input_shapes["x"] = {4, 6};
  auto m = ox::import_model(dynamic_reshape_model(), ".", opts);
  EXPECT_EQ(rlx::shape_str(m.graph->type(m.graph->outputs()[0]).shape), "[4,2,3]");
}

TEST(OnnxSymbolic, UnnamedDynamicDimsGetFreshSymbols) {
  ModelSpec s;
  s.nodes = {node("Relu", {"x"}, {"y"})};
  s.inputs = {value_info("x", ::onnx::TensorProto::FLOAT, {"", "4"})};
  s.outputs = {value_info("y", ::onnx::TensorProto::FLOAT, {"", "4"})};
  auto m = ox::import_model(make_model(s), ".");
  EXPECT_EQ(rlx::shape_str(m.graph->type(m.graph->inputs()[0]).shape), "[x_0,4]");
}

}  // namespace
