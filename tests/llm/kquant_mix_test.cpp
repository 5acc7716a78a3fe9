// llama.cpp's K-quant mixes (models/qwen3_weights.h KQuantMix): the type each recipe gives each
// matrix, written out here from llama-quantize's rules for a 16-layer model whose 16 query heads
// share 4 KV heads; and `rlx quantize --to gguf:Q3_K_M` writing those types into the file.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "formats/gguf.h"
#include "models/qwen3_weights.h"

namespace rlx::models {
namespace {

using formats::WeightType;

std::string layer(int i, const char* rest) { return "model.layers." + std::to_string(i) + "." + rest; }

TEST(KQuantMix, EachRecipeGivesEachMatrixLlamaCppsType) {
  LlamaSpec spec;
  spec.num_layers = 16;
  spec.num_heads = 16;
  spec.num_kv_heads = 4;
  spec.tie_word_embeddings = true;
  const char* v = "self_attn.v_proj.weight";
  const char* down = "mlp.down_proj.weight";
  const char* o = "self_attn.o_proj.weight";
  const char* q = "self_attn.q_proj.weight";
  auto type = [&](KQuantMix m, WeightType base, const std::string& name) { return k_quant_mix_type(spec, name, base, m); };
  // no mix: the base everywhere, the head included
  EXPECT_EQ(type(KQuantMix::none, WeightType::q4_k, "model.embed_tokens.weight"), WeightType::q4_k);
  EXPECT_EQ(type(KQuantMix::none, WeightType::q4_k, layer(0, v)), WeightType::q4_k);
  // Q3_K_M: attn_v Q5_K in layers 0-1 then Q4_K; ffn_down Q5_K below n/16 = 1 then Q4_K; attn_output Q4_K
  const WeightType q3 = WeightType::q3_k;
  EXPECT_EQ(type(KQuantMix::q3_k_m, q3, "model.embed_tokens.weight"), WeightType::q6_k);  // tied: the output matrix
  EXPECT_EQ(type(KQuantMix::q3_k_m, q3, layer(1, v)), WeightType::q5_k);
  EXPECT_EQ(type(KQuantMix::q3_k_m, q3, layer(2, v)), WeightType::q4_k);
  EXPECT_EQ(type(KQuantMix::q3_k_m, q3, layer(0, down)), WeightType::q5_k);
  EXPECT_EQ(type(KQuantMix::q3_k_m, q3, layer(1, down)), WeightType::q4_k);
  EXPECT_EQ(type(KQuantMix::q3_k_m, q3, layer(7, o)), WeightType::q4_k);
  EXPECT_EQ(type(KQuantMix::q3_k_m, q3, layer(7, q)), q3);
  EXPECT_EQ(type(KQuantMix::q3_k_m, q3, layer(7, "mlp.gate_proj.weight")), q3);
  EXPECT_EQ(type(KQuantMix::q3_k_m, q3, layer(3, "self_attn.qkv_proj.weight")), WeightType::q4_k);  // phi3's fused rows
  // Q3_K_L: attn_v, ffn_down, attn_output Q5_K; Q3_K_S: only the head
  for (const char* part : {v, down, o}) EXPECT_EQ(type(KQuantMix::q3_k_l, q3, layer(9, part)), WeightType::q5_k) << part;
  for (const char* part : {v, down, o}) EXPECT_EQ(type(KQuantMix::q3_k_s, q3, layer(0, part)), q3) << part;
  EXPECT_EQ(type(KQuantMix::q3_k_s, q3, "model.embed_tokens.weight"), WeightType::q6_k);
  // Q4_K_M: use_more_bits(i, 16) picks layers 0, 1, 4, 7, 10, 13, 14, 15 for Q6_K
  const WeightType q4 = WeightType::q4_k;
  for (int i = 0; i < 16; ++i) {
    const bool more = i == 0 || i == 1 || i == 4 || i == 7 || i == 10 || i == 13 || i == 14 || i == 15;
    EXPECT_EQ(type(KQuantMix::q4_k_m, q4, layer(i, v)), more ? WeightType::q6_k : q4) << "attn_v " << i;
    EXPECT_EQ(type(KQuantMix::q4_k_m, q4, layer(i, down)), more ? WeightType::q6_k : q4) << "ffn_down " << i;
    EXPECT_EQ(type(KQuantMix::q5_k_m, WeightType::q5_k, layer(i, down)), more ? WeightType::q6_k : WeightType::q5_k) << "ffn_down " << i;
  }
  EXPECT_EQ(type(KQuantMix::q4_k_m, q4, layer(4, o)), q4);
  EXPECT_EQ(type(KQuantMix::q4_k_m, q4, layer(5, "self_attn.qkv_proj.weight")), WeightType::q5_k);
  // Q4_K_S: attn_v Q5_K in layers 0-3, ffn_down Q5_K below n/8 = 2
  EXPECT_EQ(type(KQuantMix::q4_k_s, q4, layer(3, v)), WeightType::q5_k);
  EXPECT_EQ(type(KQuantMix::q4_k_s, q4, layer(4, v)), q4);
  EXPECT_EQ(type(KQuantMix::q4_k_s, q4, layer(1, down)), WeightType::q5_k);
  EXPECT_EQ(type(KQuantMix::q4_k_s, q4, layer(2, down)), q4);
  // Q2_K_S: attn_v Q4_K (four query heads per KV head), ffn_down Q4_K below n/8
  const WeightType q2 = WeightType::q2_k;
  EXPECT_EQ(type(KQuantMix::q2_k_s, q2, layer(8, v)), WeightType::q4_k);
  EXPECT_EQ(type(KQuantMix::q2_k_s, q2, layer(1, down)), WeightType::q4_k);
  EXPECT_EQ(type(KQuantMix::q2_k_s, q2, layer(2, down)), q2);
  spec.num_kv_heads = 8;  // two query heads a KV head: attn_v keeps the base
  EXPECT_EQ(type(KQuantMix::q2_k_s, q2, layer(8, v)), q2);
  // an untied model: the head gets Q6_K, the embedding keeps the base
  spec.tie_word_embeddings = false;
  EXPECT_EQ(type(KQuantMix::q4_k_m, q4, "lm_head.weight"), WeightType::q6_k);
  EXPECT_EQ(type(KQuantMix::q4_k_m, q4, "model.embed_tokens.weight"), q4);
}

TEST(KQuantMix, NamesParseToTheirBaseTypes) {
  auto m = k_quant_mix_from_name("q3_k_m");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->first, KQuantMix::q3_k_m);
  EXPECT_EQ(m->second, WeightType::q3_k);
  EXPECT_EQ(k_quant_mix_from_name("Q5_K_S")->second, WeightType::q5_k);
  EXPECT_EQ(k_quant_mix_from_name("Q2_K_S")->second, WeightType::q2_k);
  EXPECT_FALSE(k_quant_mix_from_name("Q4_K"));  // a pure type, not a mix
  EXPECT_FALSE(k_quant_mix_from_name("Q6_K_M"));
}

}  // namespace
}  // namespace rlx::models
