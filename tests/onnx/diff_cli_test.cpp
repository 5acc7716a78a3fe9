// `rlx diff` on an ONNX model: against onnxruntime-node (every node output exposed on both sides,
// compared by tensor name) and against the reference with an initializer flipped on the device's
// side — the report names the ONNX node that consumes it.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>

#include "onnx_test_util.h"
#include "util/strings.h"

using namespace rlx;
using namespace rlx::onnx_test;

namespace {

std::string mlp_model() {
  std::string dir = temp_dir("diff_cli");
  ModelSpec s;
  s.inputs = {value_info("x", ::onnx::TensorProto::FLOAT, {"2", "4"})};
  s.outputs = {value_info("probs", ::onnx::TensorProto::FLOAT, {"2", "3"})};
  std::vector<double> w1(12), b1(3), w2(9);
  for (size_t i = 0; i < w1.size(); ++i) w1[i] = 0.1 * static_cast<double>(i) - 0.6;
  for (size_t i = 0; i < w2.size(); ++i) w2[i] = 0.2 * static_cast<double>(i % 5) - 0.3;
  b1 = {0.1, -0.2, 0.3};
  s.initializers = {tensor_proto("W1", Tensor::from_f64(DType::f32, {4, 3}, w1)), tensor_proto("B1", Tensor::from_f64(DType::f32, {3}, b1)),
                    tensor_proto("W2", Tensor::from_f64(DType::f32, {3, 3}, w2))};
  s.nodes = {node("MatMul", {"x", "W1"}, {"h"}, {}, "", "fc1"), node("Add", {"h", "B1"}, {"hb"}, {}, "", "bias1"),
             node("Relu", {"hb"}, {"a"}, {}, "", "act"), node("MatMul", {"a", "W2"}, {"logits"}, {}, "", "fc2"),
             node("Softmax", {"logits"}, {"probs"}, {ai("axis", -1)}, "", "softmax")};
  std::string path = dir + "/mlp.onnx";
  save_model(*make_model(s), path);
  return path;
}

std::pair<int, std::string> run_cli(const std::string& args) {
  FILE* p = popen(cat(RLX_CLI, " ", args, " 2>&1").c_str(), "r");
  std::string out;
  char buf[4096];
  size_t n;
  while (p && (n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  int status = p ? pclose(p) : -1;
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

}  // namespace

TEST(DiffCli, AgreesWithOnnxRuntimeNodeByNode) {
  const char* home = std::getenv("HOME");
  if (std::system("node --version >/dev/null 2>&1") != 0 || !home ||
      !std::filesystem::exists(std::string(home) + "/.cache/rlx-npm/node_modules/onnxruntime-node/package.json"))
    GTEST_SKIP() << "needs node and onnxruntime-node in ~/.cache/rlx-npm (make setup installs them)";
  auto [rc, out] = run_cli(cat("diff ", mlp_model(), " --against onnxruntime --json"));
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("\"against\":\"onnxruntime\",\"compared\":5,"), std::string::npos) << out;  // h, hb, a, logits, probs
  EXPECT_NE(out.find("\"first\":null"), std::string::npos) << out;
}

TEST(DiffCli, NamesTheNodeOfAFlippedInitializer) {
  auto [rc, out] = run_cli(cat("diff ", mlp_model(), " --flip-weight W2"));
  EXPECT_EQ(rc, 3) << out;
  EXPECT_NE(out.find("first divergence: node"), std::string::npos) << out;
  EXPECT_NE(out.find("\"fc2\" from onnx.MatMul"), std::string::npos) << out;
}
