// The tensor/pipeline-parallel plan (src/dist/plan.h) against the model's own weight list
// (models::llama_weight_shapes, an independent count): one rank holds every parameter once; split
// over tp × pp the ranks together hold them once more only where the split replicates (norms on
// every TP rank, a tied LM head on the last stage); errors name what does not divide.
#include <gtest/gtest.h>

#include "dist/plan.h"
#include "models/decoder_shape.h"
#include "rlx/error.h"

using namespace rlx;

namespace {

dist::DecoderShape shape_of(const models::LlamaSpec& s) { return models::decoder_shape(s, "qwen3-0.6b"); }

double total_params(const models::LlamaSpec& s) {
  double n = 0;
  for (const auto& [name, shape] : models::llama_weight_shapes(s)) {
    double e = 1;
    for (int64_t d : shape) e *= static_cast<double>(d);
    n += e;
  }
  return n;
}

double sum_params(const dist::Plan& p) {
  double n = 0;
  for (const auto& r : p.ranks) n += r.params;
  return n;
}

}  // namespace

TEST(DistPlan, OneRankHoldsExactlyTheModelsWeights) {
  const models::LlamaSpec s = models::qwen3_0_6b_spec();
  dist::Layout l;
  const dist::Plan p = dist::plan(shape_of(s), l);
  ASSERT_EQ(p.ranks.size(), 1u);
  EXPECT_DOUBLE_EQ(p.ranks[0].params, total_params(s));
  EXPECT_DOUBLE_EQ(p.ranks[0].weight_bytes, 2 * total_params(s));
  // KV cache: layers × (k, v) × kv heads × head dim × context × batch × 2 bytes
  EXPECT_DOUBLE_EQ(p.ranks[0].kv_bytes, 28.0 * 2 * 8 * 128 * 4096 * 1 * 2);
  EXPECT_EQ(p.decode.all_reduces, 0);
}

TEST(DistPlan, SplitsReplicateOnlyTheNormsAndATiedHead) {
  const models::LlamaSpec s = models::qwen3_0_6b_spec();
  dist::Layout l;
  l.tp = 2;
  l.pp = 2;
  const dist::Plan p = dist::plan(shape_of(s), l);
  ASSERT_EQ(p.ranks.size(), 4u);
  const double H = 1024, D = 128, V = 151936;
  const double replicated = (l.tp - 1) * (28 * (2 * H + 2 * D) + H);  // every layer's norms and the final norm
  EXPECT_DOUBLE_EQ(sum_params(p), total_params(s) + replicated + V * H);  // + the last stage's copy of the tied head
  EXPECT_EQ(p.ranks[0].layers + p.ranks[2].layers, 28);
  EXPECT_TRUE(p.ranks[0].embedding && !p.ranks[0].head && p.ranks[3].head);
  // decode: two all-reduces a layer of the first stage plus the embedding's, of one hidden vector
  EXPECT_EQ(p.decode.all_reduces, 2 * 14 + 1);
  EXPECT_DOUBLE_EQ(p.decode.all_reduce_bytes, H * 2);
  EXPECT_DOUBLE_EQ(p.decode.pp_bytes, H * 2);
  EXPECT_DOUBLE_EQ(p.prefill.pp_bytes, 512 * H * 2);
  EXPECT_FALSE(p.notes.empty()) << "the tied head's copy should be noted";
}

TEST(DistPlan, RefusesSplitsThatDoNotDivide) {
  const models::LlamaSpec s = models::qwen3_0_6b_spec();
  dist::Layout l;
  l.tp = 3;  // 16 heads
  try {
    dist::plan(shape_of(s), l);
    FAIL() << "tp=3 split 16 heads";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("16 attention heads"), std::string::npos) << e.what();
  }
  l.tp = 16;  // more ranks than KV heads: replicated, and noted
  const dist::Plan p = dist::plan(shape_of(s), l);
  ASSERT_FALSE(p.notes.empty());
  EXPECT_NE(p.notes[0].find("replicated"), std::string::npos);
}
