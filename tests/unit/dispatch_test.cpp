#include <gtest/gtest.h>

#include "ir/text.h"
#include "passes/legalize.h"
#include "rlx/error.h"
#include "runtime/registry.h"

using namespace rlx;
using namespace rlx::ir;

namespace {

const char* kBlock = R"(graph @block(%x: f32[B,16], %w: f32[8,16], %b: f32[8], %h: bf16[B,8]) {
  %y = hir.linear(%x, %w, %b) : f32[B,8] loc("proj")
  %s = hir.softmax(%y) : f32[B,8]
  %t = mir.add(%h, %h) : bf16[B,8]
  return %s, %t
}
)";

passes::DispatchReport legalize_on(const std::string& device, passes::DispatchOptions opts = {}) {
  Graph g = parse_graph(kBlock);
  passes::DispatchReport rep;
  passes::legalize(g, runtime::backend(device), opts, rep);
  return rep;
}

}  // namespace

TEST(Dispatch, PreferNativeUsesKernelsDecomposesTheRestAndRewritesDtypes) {
  auto rep = legalize_on("cpu");
  EXPECT_EQ(rep.rows["hir.linear"].common_ir, 1);    // no linear kernel: decomposed
  EXPECT_EQ(rep.rows["hir.softmax"].native, 1);      // cpu has a softmax kernel
  EXPECT_EQ(rep.rows["mir.dot_general"].native, 1);
  EXPECT_EQ(rep.rows["mir.add"].rewritten, 1);       // bf16 add: promoted to f32
  EXPECT_TRUE(rep.ok());
  EXPECT_NE(rep.str().find("rewritten"), std::string::npos);
}

TEST(Dispatch, ForceCommonDecomposesEverythingDecomposable) {
  passes::DispatchOptions o;
  o.policy = passes::Policy::force_common;
  auto rep = legalize_on("cpu", o);
  EXPECT_EQ(rep.rows["hir.softmax"].native, 0);
  EXPECT_EQ(rep.rows["hir.softmax"].common_ir, 1);
  EXPECT_GT(rep.rows["mir.exp"].native, 0);
}

TEST(Dispatch, PerOpOverride) {
  passes::DispatchOptions o;
  o.overrides["softmax"] = "common";
  auto rep = legalize_on("cpu", o);
  EXPECT_EQ(rep.rows["hir.softmax"].common_ir, 1);
  o.overrides["softmax"] = "sideways";
  EXPECT_THROW(legalize_on("cpu", o), Error);
}

TEST(Dispatch, UnsupportedListsEveryNodeAtOnceBeforeRunning) {
  try {
    legalize_on("null");
    FAIL() << "the null device must reject every graph";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::unsupported);
    std::string m = e.what();
    // every op kind of the graph is named: the MIR ops and the HIR ops they come from
    for (const char* op : {"mir.dot_general", "mir.add", "mir.exp", "mir.reduce", "hir.linear", "hir.softmax"})
      EXPECT_NE(m.find(op), std::string::npos) << op << " missing from:\n" << m;
    EXPECT_NE(m.find("\"proj\""), std::string::npos) << "the node name is missing:\n" << m;
    EXPECT_NE(m.find("device null"), std::string::npos) << m;
    EXPECT_NE(m.find("dispatch report"), std::string::npos) << m;
  }
}

TEST(Dispatch, ReferenceRunsEverything) {
  auto rep = legalize_on("reference");
  EXPECT_TRUE(rep.ok());
  EXPECT_EQ(rep.rows["hir.linear"].native, 1);
}

TEST(Dispatch, LegalizedGraphIsMirLevelWithPaths) {
  Graph g = parse_graph(kBlock);
  passes::DispatchReport rep;
  Graph m = passes::legalize(g, runtime::backend("cpu"), {}, rep);
  for (const auto& n : m.nodes()) EXPECT_NE(n.path, Path::unresolved) << op_keyword(n.op);
  EXPECT_EQ(m.device, "cpu");
}

TEST(DispatchReport, PlacesNodesByTheirPlaceInTheModel) {
  EXPECT_EQ(passes::placement_group("model.layers.3.self_attn.q_proj"), "model.layers.3");
  EXPECT_EQ(passes::placement_group("/encoder/layer.10/attention/self/MatMul"), "/encoder/layer.10");
  EXPECT_EQ(passes::placement_group("lm_head"), "lm_head");
  EXPECT_EQ(passes::placement_group("model.norm"), "model");
  EXPECT_EQ(passes::placement_group(""), "(unnamed)");
  passes::DispatchReport r;
  for (int i = 0; i < 12; ++i) r.placement["layers." + std::to_string(i)] = {5, 2, 0, 0};
  r.placement["layers.7"].native = 6;  // one layer resolved differently breaks the run
  r.placement["lm_head"] = {1, 0, 0, 0};
  const std::string s = r.placement_str();
  EXPECT_NE(s.find("layers.0–6 (each)"), std::string::npos) << s;
  EXPECT_NE(s.find("layers.7 "), std::string::npos) << s;
  EXPECT_NE(s.find("layers.8–11 (each)"), std::string::npos) << s;  // 8 after 7, not after 11 as text sorts
  EXPECT_NE(r.json().find("{\"nodes\":\"layers.8–11\",\"groups\":4"), std::string::npos) << r.json();
}
