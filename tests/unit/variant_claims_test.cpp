// Fused variants (ops.def's "+name" attributes) are claimed by allow-list: a device whose kernel
// would take the node says no unless it lists the variant, and the node then decomposes.
#include <gtest/gtest.h>

#include "ir/op.h"
#include "ir/text.h"
#include "passes/legalize.h"
#include "runtime/registry.h"

using namespace rlx;
using ir::Op;

namespace {

// A device whose kernels would take anything, implementing only the variants it is given.
class EagerDevice : public passes::KernelClaims {
 public:
  explicit EagerDevice(std::vector<std::string> variants) : variants_(std::move(variants)) {}
  std::string name() const override { return "eager"; }

 protected:
  bool claims_kernel(Op, const std::vector<ir::Type>&, const std::vector<ir::Type>&, const ir::Attrs&) const override { return true; }
  bool implements_variant(Op, const std::string& attr) const override {
    for (const auto& v : variants_)
      if (v == attr) return true;
    return false;
  }

 private:
  std::vector<std::string> variants_;
};

const std::vector<ir::Type> kNone;

}  // namespace

TEST(VariantClaims, TheOpTableMarksTheFusedVariants) {
  for (const char* a : {"act", "glu", "norm_eps"}) EXPECT_TRUE(ir::find_attr_spec(Op::dequant_matmul, a)->variant) << a;
  for (const char* a : {"norm_eps", "append_axis"}) EXPECT_TRUE(ir::find_attr_spec(Op::rope, a)->variant) << a;
  EXPECT_FALSE(ir::find_attr_spec(Op::dequant_matmul, "type")->variant);
  EXPECT_FALSE(ir::find_attr_spec(Op::rope, "theta")->variant);
}

TEST(VariantClaims, AnUnlistedVariantIsNeverClaimed) {
  ir::Attrs plain{{"type", std::string("q8_0")}, {"n", int64_t{4}}, {"k", int64_t{32}}};
  ir::Attrs gated = plain;
  gated.set("glu", std::string("silu"));
  EXPECT_TRUE(EagerDevice({}).claims(Op::dequant_matmul, kNone, kNone, plain));
  EXPECT_FALSE(EagerDevice({}).claims(Op::dequant_matmul, kNone, kNone, gated));
  EXPECT_FALSE(EagerDevice({"norm_eps"}).claims(Op::dequant_matmul, kNone, kNone, gated));
  EXPECT_TRUE(EagerDevice({"glu"}).claims(Op::dequant_matmul, kNone, kNone, gated));
}

TEST(VariantClaims, TheCpuDecomposesANormedRope) {
  ir::Graph g = ir::parse_graph(R"(graph @r(%x: f32[1,2,3,8], %pos: i64[3], %g: f32[8]) {
  %y = hir.rope(%x, %pos, %g) {norm_eps=1e-06} : f32[1,2,3,8]
  return %y
}
)");
  passes::DispatchReport rep;
  ir::Graph out = passes::legalize(g, runtime::backend("cpu"), {}, rep);
  EXPECT_EQ(rep.rows["hir.rope"].common_ir, 1);  // the normed rope: decomposed (rms_norm, then a plain rope)
  EXPECT_TRUE(rep.ok());
  for (const auto& n : out.nodes()) EXPECT_FALSE(n.op == Op::rope && n.attrs.has("norm_eps")) << "a normed rope reached the cpu";
}
