// The oneapi device's claims: fused elementwise chains are one oneDNN primitive (claimed as a
// region), regions that are not chains are refused (fusion then shrinks them), and ops are
// claimed only where oneDNN computes their definition (no wrapping integer arithmetic).
// test_backend_ops checks the values; this checks that the fast path is the one taken.
#include <gtest/gtest.h>

#include "ir/graph.h"
#include "runtime/registry.h"

using namespace rlx;
using ir::Op;

namespace {

ir::Type f32(std::vector<int64_t> dims) {
  Shape s;
  for (int64_t d : dims) s.push_back(Dim(d));
  return {DType::f32, s};
}

bool claims_region(const std::string& body, const std::vector<ir::Type>& in, const ir::Type& out) {
  return runtime::backend("oneapi").claims(Op::elementwise_region, in, {out}, ir::Attrs{{"body", body}});
}

}  // namespace

TEST(Oneapi, ChainsAreClaimedAsOnePrimitive) {
  // scaled attention scores plus a broadcast mask: the mask becomes the primitive's own operand
  EXPECT_TRUE(claims_region("graph @region(%x: f32[2,3,4,8], %m: f32[2,1,1,8]) {\n  %c = mir.constant() {value=tensor<f32[]>[0.25]} : f32[]\n"
                            "  %y = mir.mul(%x, %c) : f32[2,3,4,8]\n  %z = mir.add(%y, %m) : f32[2,3,4,8]\n  return %z\n}\n",
                            {f32({2, 3, 4, 8}), f32({2, 1, 1, 8})}, f32({2, 3, 4, 8})));
  // bias, GELU, residual
  EXPECT_TRUE(claims_region("graph @region(%x: f32[5,70], %b: f32[70], %r: f32[5,70]) {\n  %h = mir.add(%x, %b) : f32[5,70]\n"
                            "  %g = hir.gelu(%h) : f32[5,70]\n  %y = mir.add(%g, %r) : f32[5,70]\n  return %y\n}\n",
                            {f32({5, 70}), f32({70}), f32({5, 70})}, f32({5, 70})));
  // a constant head: (1 − x)·(−3), then exp
  EXPECT_TRUE(claims_region("graph @region(%x: f32[7,5]) {\n  %c = mir.constant() {value=tensor<f32[]>[1.0]} : f32[]\n  %a = mir.sub(%c, %x) : f32[7,5]\n"
                            "  %k = mir.constant() {value=tensor<f32[]>[-3.0]} : f32[]\n  %b = mir.mul(%a, %k) : f32[7,5]\n  %e = mir.exp(%b) : f32[7,5]\n"
                            "  return %e\n}\n",
                            {f32({7, 5})}, f32({7, 5})));
  // symbolic shapes (fusion's view): claimed by form
  ir::Type sym{DType::f32, {Dim::symbol("B"), Dim(70)}};
  EXPECT_TRUE(claims_region("graph @region(%x: f32[B,70], %b: f32[70]) {\n  %h = mir.add(%x, %b) : f32[B,70]\n  %g = hir.gelu(%h) : f32[B,70]\n"
                            "  return %g\n}\n",
                            {sym, f32({70})}, sym));
}

TEST(Oneapi, RegionsThatAreNotChainsAreRefused) {
  // two branches meeting again (x·y + x·z): no single running value
  EXPECT_FALSE(claims_region("graph @region(%x: f32[4,9], %y: f32[4,9], %z: f32[4,9]) {\n  %a = mir.mul(%x, %y) : f32[4,9]\n"
                             "  %b = mir.mul(%x, %z) : f32[4,9]\n  %c = mir.add(%a, %b) : f32[4,9]\n  return %c\n}\n",
                             {f32({4, 9}), f32({4, 9}), f32({4, 9})}, f32({4, 9})));
  // erf has no oneDNN algorithm
  EXPECT_FALSE(claims_region("graph @region(%x: f32[4,9]) {\n  %a = mir.erf(%x) : f32[4,9]\n  %b = mir.exp(%a) : f32[4,9]\n  return %b\n}\n",
                             {f32({4, 9})}, f32({4, 9})));
}

TEST(Oneapi, ClaimsOnlyWhatOneDnnComputesExactly) {
  runtime::Backend& d = runtime::backend("oneapi");
  ir::Type i32{DType::i32, {Dim(5), Dim(7)}}, i8{DType::i8, {Dim(5), Dim(7)}};
  EXPECT_FALSE(d.claims(Op::add, {i32, i32}, {i32}, {}));  // RLX wraps, oneDNN saturates
  EXPECT_FALSE(d.claims(Op::mul, {i8, i8}, {i8}, {}));
  EXPECT_TRUE(d.claims(Op::max, {i8, i8}, {i8}, {}));      // no overflow possible
  EXPECT_TRUE(d.claims(Op::add, {f32({5, 7}), f32({7})}, {f32({5, 7})}, {}));
  // float → integer casts truncate in RLX and round in oneDNN
  EXPECT_FALSE(d.claims(Op::cast, {f32({5, 7})}, {i32}, ir::Attrs{{"to", DType::i32}}));
  EXPECT_TRUE(d.claims(Op::cast, {i8}, {f32({5, 7})}, ir::Attrs{{"to", DType::f32}}));
  EXPECT_FALSE(d.claims(Op::erf, {f32({5, 7})}, {f32({5, 7})}, {}));
}
