// Operators whose meaning changed between opsets import with the model's version: attributes
// that became inputs (Squeeze, ReduceSum, Slice, Clip, Pad, Split) and Softmax's 2-D coercion
// before opset 13. Each pair of models must agree with the other and with a direct computation.
#include <gtest/gtest.h>

#include <cmath>

#include "onnx_test_util.h"

namespace {

using namespace rlx::onnx_test;
using rlx::Tensor;

Tensor iota_f32(std::vector<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i) * 0.25f - 1.0f;
  return Tensor::from_vector(v, shape);
}

Tensor i64(std::vector<int64_t> v) {
  int64_t n = static_cast<int64_t>(v.size());
  return Tensor::from_vector(v, {n});
}

std::vector<Tensor> run1(int64_t opset, ::onnx::NodeProto n, std::vector<std::pair<std::string, Tensor>> inits, const Tensor& x) {
  ModelSpec s;
  s.opset = opset;
  s.nodes = {n};
  std::vector<std::string> dims;
  for (int64_t d : x.shape()) dims.push_back(std::to_string(d));
  s.inputs = {value_info("x", ::onnx::TensorProto::FLOAT, dims)};
  for (int i = 0; i < n.output_size(); ++i) s.outputs.push_back(value_info(n.output(i), ::onnx::TensorProto::FLOAT, {}));
  for (auto& [name, t] : inits) s.initializers.push_back(tensor_proto(name, t));
  return run_model(make_model(s), {{"x", x}});
}

void expect_same(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.shape(), b.shape());
  auto u = a.to_f64(), v = b.to_f64();
  for (size_t i = 0; i < u.size(); ++i) EXPECT_NEAR(u[i], v[i], 1e-6) << "element " << i;
}

TEST(OnnxOpsets, SqueezeAxesAttributeThenInput) {
  Tensor x = iota_f32({3, 1, 4, 1});
  Tensor a = run1(11, node("Squeeze", {"x"}, {"y"}, {aints("axes", {1, -1})}), {}, x)[0];
  Tensor b = run1(13, node("Squeeze", {"x", "axes"}, {"y"}), {{"axes", i64({1, -1})}}, x)[0];
  EXPECT_EQ(a.shape(), (std::vector<int64_t>{3, 4}));
  expect_same(a, b);
  expect_same(a, x.reshape({3, 4}));
}

TEST(OnnxOpsets, ReduceSumAxesAttributeThenInput) {
  Tensor x = iota_f32({2, 3, 4});
  Tensor a = run1(11, node("ReduceSum", {"x"}, {"y"}, {aints("axes", {1}), ai("keepdims", 0)}), {}, x)[0];
  Tensor b = run1(13, node("ReduceSum", {"x", "axes"}, {"y"}, {ai("keepdims", 0)}), {{"axes", i64({1})}}, x)[0];
  expect_same(a, b);
  auto v = x.to_f64();
  for (int i = 0; i < 2; ++i)
    for (int k = 0; k < 4; ++k) EXPECT_NEAR(a.to_f64()[i * 4 + k], v[i * 12 + k] + v[i * 12 + 4 + k] + v[i * 12 + 8 + k], 1e-6);
  // opset 13 with no axes: every axis, or none with noop_with_empty_axes
  Tensor all = run1(13, node("ReduceSum", {"x"}, {"y"}, {ai("keepdims", 0)}), {}, x)[0];
  EXPECT_EQ(all.rank(), 0);
  Tensor none = run1(13, node("ReduceSum", {"x"}, {"y"}, {ai("noop_with_empty_axes", 1)}), {}, x)[0];
  expect_same(none, x);
}

TEST(OnnxOpsets, SliceAttributesThenInputs) {
  Tensor x = iota_f32({5, 6});
  Tensor a = run1(9, node("Slice", {"x"}, {"y"}, {aints("starts", {1, -4}), aints("ends", {4, 1000}), aints("axes", {0, 1})}), {}, x)[0];
  Tensor b = run1(13, node("Slice", {"x", "starts", "ends", "axes"}, {"y"}), {{"starts", i64({1, -4})}, {"ends", i64({4, 1000})}, {"axes", i64({0, 1})}}, x)[0];
  expect_same(a, b);
  expect_same(a, x.slice(0, 1, 4).slice(1, 2, 6).contiguous());
}

TEST(OnnxOpsets, SoftmaxCoercesTo2dBeforeOpset13) {
  Tensor x = iota_f32({2, 3, 4});
  Tensor a = run1(11, node("Softmax", {"x"}, {"y"}, {ai("axis", 1)}), {}, x)[0];
  // opset 11: softmax over the flattened [3·4] block of each batch row
  auto v = x.to_f64();
  for (int bi = 0; bi < 2; ++bi) {
    double m = -INFINITY, s = 0;
    for (int i = 0; i < 12; ++i) m = std::max(m, v[bi * 12 + i]);
    for (int i = 0; i < 12; ++i) s += std::exp(v[bi * 12 + i] - m);
    for (int i = 0; i < 12; ++i) EXPECT_NEAR(a.to_f64()[bi * 12 + i], std::exp(v[bi * 12 + i] - m) / s, 1e-6);
  }
  Tensor b = run1(13, node("Softmax", {"x"}, {"y"}, {ai("axis", 1)}), {}, x)[0];
  for (int bi = 0; bi < 2; ++bi)
    for (int k = 0; k < 4; ++k) {
      double s = 0;
      for (int j = 0; j < 3; ++j) s += b.to_f64()[bi * 12 + j * 4 + k];
      EXPECT_NEAR(s, 1.0, 1e-6);
    }
}

TEST(OnnxOpsets, ClipAndPadAttributesThenInputs) {
  Tensor x = iota_f32({2, 3});
  Tensor a = run1(6, node("Clip", {"x"}, {"y"}, {af("min", -0.5f), af("max", 0.0f)}), {}, x)[0];
  Tensor b = run1(13, node("Clip", {"x", "lo", "hi"}, {"y"}),
                  {{"lo", Tensor::from_vector(std::vector<float>{-0.5f}, {})}, {"hi", Tensor::from_vector(std::vector<float>{0.0f}, {})}}, x)[0];
  expect_same(a, b);
  for (double v : a.to_f64()) EXPECT_TRUE(v >= -0.5 && v <= 0.0);
  Tensor p = run1(2, node("Pad", {"x"}, {"y"}, {aints("pads", {0, 1, 1, 0}), as("mode", "edge")}), {}, x)[0];
  Tensor q = run1(13, node("Pad", {"x", "pads"}, {"y"}, {as("mode", "edge")}), {{"pads", i64({0, 1, 1, 0})}}, x)[0];
  EXPECT_EQ(p.shape(), (std::vector<int64_t>{3, 4}));
  expect_same(p, q);
  EXPECT_EQ(p.to_f64()[0], x.to_f64()[0]);  // edge-padded column
}

TEST(OnnxOpsets, SplitAttributeThenInput) {
  Tensor x = iota_f32({6, 2});
  auto a = run1(11, node("Split", {"x"}, {"p", "q"}, {aints("split", {2, 4})}), {}, x);
  auto b = run1(13, node("Split", {"x", "split"}, {"p", "q"}), {{"split", i64({2, 4})}}, x);
  ASSERT_EQ(a.size(), 2u);
  expect_same(a[0], b[0]);
  expect_same(a[1], b[1]);
  EXPECT_EQ(a[1].shape(), (std::vector<int64_t>{4, 2}));
}

// com.microsoft contrib ops agree with their standard-op definitions.
TEST(OnnxContrib, FusedMatMulSkipLayerNormAndGelus) {
  Tensor x = iota_f32({2, 3, 4});
  Tensor w = iota_f32({5, 4});
  auto run_ms = [&](std::vector<::onnx::NodeProto> nodes, std::vector<std::pair<std::string, Tensor>> inits) {
    ModelSpec s;
    s.opset = 17;
    s.extra_opsets = {{"com.microsoft", 1}};
    s.nodes = std::move(nodes);
    s.inputs = {value_info("x", ::onnx::TensorProto::FLOAT, {"2", "3", "4"})};
    s.outputs = {value_info("y", ::onnx::TensorProto::FLOAT, {})};
    for (auto& [n, t] : inits) s.initializers.push_back(tensor_proto(n, t));
    return run_model(make_model(s), {{"x", x}})[0];
  };
  Tensor fused = run_ms({node("FusedMatMul", {"x", "w"}, {"y"}, {ai("transB", 1), af("alpha", 0.5f)}, "com.microsoft")}, {{"w", w}});
  Tensor plain = run_ms({node("Transpose", {"w"}, {"wt"}), node("MatMul", {"x", "wt"}, {"m"}), node("Mul", {"m", "half"}, {"y"})},
                        {{"w", w}, {"half", Tensor::from_vector(std::vector<float>{0.5f}, {})}});
  expect_same(fused, plain);

  Tensor skip = iota_f32({2, 3, 4}), gamma = iota_f32({4}), beta = iota_f32({4}), bias = iota_f32({4});
  Tensor sln = run_ms({node("SkipLayerNormalization", {"x", "skip", "gamma", "beta", "bias"}, {"y"}, {af("epsilon", 1e-5f)}, "com.microsoft")},
                      {{"skip", skip}, {"gamma", gamma}, {"beta", beta}, {"bias", bias}});
  Tensor ln = run_ms({node("Add", {"x", "skip"}, {"s1"}), node("Add", {"s1", "bias"}, {"s2"}),
                      node("LayerNormalization", {"s2", "gamma", "beta"}, {"y"}, {af("epsilon", 1e-5f)})},
                     {{"skip", skip}, {"gamma", gamma}, {"beta", beta}, {"bias", bias}});
  expect_same(sln, ln);

  Tensor fast = run_ms({node("FastGelu", {"x", "bias"}, {"y"}, {}, "com.microsoft")}, {{"bias", bias}});
  auto xv = x.to_f64(), bv = bias.to_f64(), fv = fast.to_f64();
  for (size_t i = 0; i < xv.size(); ++i) {
    double v = xv[i] + bv[i % 4];
    EXPECT_NEAR(fv[i], 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v))), 1e-6);
  }
  Tensor gelu = run_ms({node("Gelu", {"x"}, {"y"}, {}, "com.microsoft")}, {});
  auto gv = gelu.to_f64();
  for (size_t i = 0; i < xv.size(); ++i) EXPECT_NEAR(gv[i], 0.5 * xv[i] * (1 + std::erf(xv[i] / std::sqrt(2.0))), 1e-6);
}

}  // namespace
