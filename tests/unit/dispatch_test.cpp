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
