// runtime/diff (`rlx diff`): a device that agrees with the reference reports no divergence, and a
// flipped weight — one element of a constant or an input, on the device's side only — is found
// at its first consumer, by name; the CLI exits 3 and says so.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>

#include "ir/text.h"
#include "rlx/error.h"
#include "runtime/diff.h"
#include "util/strings.h"

using namespace rlx;

namespace {

// Two linear layers; the second one's weight is a named constant, the first one's an input.
const char* kGraph = R"(graph @two(%x: f32[3,4], %w1: f32[5,4]) {
  %h = hir.linear(%x, %w1) : f32[3,5] loc("first")
  %a = hir.gelu(%h) : f32[3,5]
  %w2 = mir.constant() {value=tensor<f32[2,5]>[0.5, -1.0, 0.25, 2.0, -0.75, 1.5, 0.125, -0.5, 1.0, -2.0]} : f32[2,5]
  %y = hir.linear(%a, %w2) : f32[3,2] loc("second")
  %z = hir.softmax(%y) : f32[3,2]
  return %z
}
)";

std::vector<Tensor> inputs() {
  std::vector<double> x(12), w(20);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.1 * static_cast<double>(i) - 0.5;
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.05 * static_cast<double>(i % 7) - 0.1;
  return {Tensor::from_f64(DType::f32, {3, 4}, x), Tensor::from_f64(DType::f32, {5, 4}, w)};
}

}  // namespace

TEST(Diff, AgreeingDevicesReportNoDivergence) {
  ir::Graph g = ir::parse_graph(kGraph);
  runtime::DiffReport r = runtime::diff_runs(g, inputs(), "cpu", "reference");
  EXPECT_EQ(r.first, -1) << r.str();
  EXPECT_EQ(r.values.size(), 5u);  // every node's output: h, a, w2, y, z
}

TEST(Diff, AFlippedConstantIsNamed) {
  ir::Graph g = ir::parse_graph(kGraph), flipped = g;
  std::vector<Tensor> in = inputs(), flipped_in = in;
  runtime::flip_weight(flipped, flipped_in, "w2");
  runtime::DiffReport r = runtime::diff_runs(g, in, "cpu", "reference", {}, {&flipped, &flipped_in});
  ASSERT_GE(r.first, 0) << r.str();
  EXPECT_EQ(r.values[static_cast<size_t>(r.first)].value, "w2") << r.str();  // the weight itself differs first
  EXPECT_NE(r.str().find("first divergence"), std::string::npos);
}

TEST(Diff, AFlippedInputIsFoundAtItsFirstConsumer) {
  ir::Graph g = ir::parse_graph(kGraph), flipped = g;
  std::vector<Tensor> in = inputs(), flipped_in = in;
  runtime::flip_weight(flipped, flipped_in, "w1");
  runtime::DiffReport r = runtime::diff_runs(g, in, "cpu", "reference", {}, {&flipped, &flipped_in});
  ASSERT_GE(r.first, 0) << r.str();
  EXPECT_EQ(r.values[static_cast<size_t>(r.first)].name, "first") << r.str();
  EXPECT_NE(r.json().find("\"name\":\"first\""), std::string::npos) << r.json();
}

TEST(Diff, UnknownWeightsAreNamedInTheError) {
  ir::Graph g = ir::parse_graph(kGraph);
  std::vector<Tensor> in = inputs();
  try {
    runtime::flip_weight(g, in, "w9");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("w1, w2"), std::string::npos) << e.what();
  }
}

TEST(Diff, CliExitsThreeAndNamesTheNode) {
  std::string cmd = cat(RLX_CLI, " diff ", RLX_SOURCE_DIR, "/examples/mlp.rlx --bind B=4 --flip-weight w2 --json 2>&1");
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  int status = pclose(p);
  EXPECT_EQ(WEXITSTATUS(status), 3) << out;
  EXPECT_NE(out.find("\"first\":{\"node\":2,\"name\":\"fc2\""), std::string::npos) << out;
}
