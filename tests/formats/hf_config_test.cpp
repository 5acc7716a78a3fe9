// Hugging Face config.json for the architectures RLX builds, and directory discovery.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "formats/hf_config.h"
#include "formats/hf_dir.h"
#include "rlx/error.h"
#include "test_util.h"

namespace rlx::formats {
namespace {

// As published for sentence-transformers/all-MiniLM-L6-v2.
const char* kMiniLM = R"({
  "architectures": ["BertModel"], "attention_probs_dropout_prob": 0.1, "gradient_checkpointing": false,
  "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "hidden_size": 384, "initializer_range": 0.02,
  "intermediate_size": 1536, "layer_norm_eps": 1e-12, "max_position_embeddings": 512, "model_type": "bert",
  "num_attention_heads": 12, "num_hidden_layers": 6, "pad_token_id": 0, "position_embedding_type": "absolute",
  "transformers_version": "4.8.2", "type_vocab_size": 2, "use_cache": true, "vocab_size": 30522})";

// As published for Qwen/Qwen3-0.6B.
const char* kQwen3 = R"({
  "architectures": ["Qwen3ForCausalLM"], "attention_bias": false, "attention_dropout": 0.0, "bos_token_id": 151643,
  "eos_token_id": 151645, "head_dim": 128, "hidden_act": "silu", "hidden_size": 1024, "initializer_range": 0.02,
  "intermediate_size": 3072, "max_position_embeddings": 40960, "max_window_layers": 28, "model_type": "qwen3",
  "num_attention_heads": 16, "num_hidden_layers": 28, "num_key_value_heads": 8, "rms_norm_eps": 1e-06,
  "rope_scaling": null, "rope_theta": 1000000, "sliding_window": null, "tie_word_embeddings": true,
  "torch_dtype": "bfloat16", "transformers_version": "4.51.0", "use_cache": true, "use_sliding_window": false,
  "vocab_size": 151936})";

TEST(HfConfig, BertFamily) {
  HfConfig c = parse_hf_config(kMiniLM, "config.json");
  EXPECT_EQ(c.family, HfFamily::bert);
  EXPECT_EQ(c.model_type, "bert");
  EXPECT_EQ(c.hidden_size, 384);
  EXPECT_EQ(c.num_hidden_layers, 6);
  EXPECT_EQ(c.num_attention_heads, 12);
  EXPECT_EQ(c.head_dim, 32);
  EXPECT_EQ(c.intermediate_size, 1536);
  EXPECT_EQ(c.type_vocab_size, 2);
  EXPECT_EQ(c.norm_eps, 1e-12);
  EXPECT_EQ(c.position_offset, 0);
  EXPECT_EQ(c.architectures, std::vector<std::string>{"BertModel"});
  EXPECT_EQ(c.raw["transformers_version"], "4.8.2");

  // RoBERTa-style models count positions from pad_token_id + 1.
  HfConfig x = parse_hf_config(R"({"model_type": "xlm-roberta", "hidden_size": 768, "num_attention_heads": 12,
                                   "pad_token_id": 1, "type_vocab_size": 1, "vocab_size": 250002})", "x");
  EXPECT_EQ(x.position_offset, 2);
  EXPECT_EQ(x.type_vocab_size, 1);

  // DistilBERT spells the sizes differently.
  HfConfig d = parse_hf_config(R"({"model_type": "distilbert", "dim": 768, "n_layers": 6, "n_heads": 12,
                                   "hidden_dim": 3072, "activation": "gelu", "vocab_size": 30522})", "d");
  EXPECT_EQ(d.hidden_size, 768);
  EXPECT_EQ(d.num_hidden_layers, 6);
  EXPECT_EQ(d.intermediate_size, 3072);
  EXPECT_EQ(d.type_vocab_size, 0);
}

TEST(HfConfig, Qwen3) {
  HfConfig c = parse_hf_config(kQwen3, "config.json");
  EXPECT_EQ(c.family, HfFamily::llama);
  EXPECT_EQ(c.head_dim, 128);  // not hidden_size / heads (64): Qwen3 says so explicitly
  EXPECT_EQ(c.num_key_value_heads, 8);
  EXPECT_EQ(c.rope.theta, 1000000.0);
  EXPECT_EQ(c.rope.type, "default");
  EXPECT_TRUE(c.tie_word_embeddings);
  EXPECT_TRUE(c.qk_norm);
  EXPECT_FALSE(c.attention_bias);
  EXPECT_FALSE(c.sliding_window.has_value());
  EXPECT_EQ(c.dtype, "bfloat16");
  EXPECT_EQ(c.norm_eps, 1e-6);
  EXPECT_EQ(c.eos_token_ids, std::vector<int64_t>{151645});
  EXPECT_EQ(c.bos_token_id, 151643);
}

TEST(HfConfig, NewerRopeParametersAndDtypeSpelling) {
  // transformers v5: "rope_parameters" replaces rope_theta/rope_scaling, "dtype" replaces torch_dtype.
  HfConfig c = parse_hf_config(R"({"model_type": "qwen3", "hidden_size": 2048, "num_attention_heads": 16,
      "num_key_value_heads": 8, "head_dim": 128, "dtype": "float16", "tie_word_embeddings": false,
      "rope_parameters": {"rope_type": "default", "rope_theta": 5000000.0}})", "v5");
  EXPECT_EQ(c.rope.theta, 5000000.0);
  EXPECT_EQ(c.dtype, "float16");
  EXPECT_FALSE(c.tie_word_embeddings);
  // Per attention type, as models with sliding layers write it.
  HfConfig p = parse_hf_config(R"({"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4,
      "rope_parameters": {"full_attention": {"rope_type": "default", "rope_theta": 250000.0},
                          "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}}})", "per-type");
  EXPECT_EQ(p.rope.theta, 250000.0);
  EXPECT_EQ(p.head_dim, 16);
}

TEST(HfConfig, LlamaFamily) {
  HfConfig l = parse_hf_config(R"({"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32,
      "num_key_value_heads": 8, "rope_theta": 500000.0, "eos_token_id": [128001, 128008, 128009],
      "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                       "original_max_position_embeddings": 8192, "rope_type": "llama3"}})", "llama3");
  EXPECT_EQ(l.rope.theta, 500000.0);
  EXPECT_EQ(l.rope.type, "llama3");
  EXPECT_EQ(l.rope.factor, 8.0);
  EXPECT_EQ(l.rope.high_freq_factor, 4.0);
  EXPECT_EQ(l.rope.original_max_position_embeddings, 8192);
  EXPECT_EQ(l.eos_token_ids, (std::vector<int64_t>{128001, 128008, 128009}));
  EXPECT_EQ(l.head_dim, 128);
  EXPECT_FALSE(l.tie_word_embeddings);  // LlamaConfig's default
  HfConfig q = parse_hf_config(R"({"model_type": "qwen2", "hidden_size": 896, "num_attention_heads": 14,
      "num_key_value_heads": 2, "tie_word_embeddings": true})", "qwen2");
  EXPECT_TRUE(q.attention_bias);  // Qwen2 always has q/k/v biases
  EXPECT_FALSE(q.qk_norm);
  EXPECT_EQ(q.head_dim, 64);
}

// As published for google/gemma-2-2b-it (hidden_act "gelu" is ignored by transformers).
const char* kGemma2 = R"({
  "architectures": ["Gemma2ForCausalLM"], "attention_bias": false, "attention_dropout": 0.0, "attn_logit_softcapping": 50.0,
  "bos_token_id": 2, "cache_implementation": "hybrid", "eos_token_id": [1, 107], "final_logit_softcapping": 30.0,
  "head_dim": 256, "hidden_act": "gelu_pytorch_tanh", "hidden_activation": "gelu_pytorch_tanh", "hidden_size": 2304,
  "initializer_range": 0.02, "intermediate_size": 9216, "max_position_embeddings": 8192, "model_type": "gemma2",
  "num_attention_heads": 8, "num_hidden_layers": 26, "num_key_value_heads": 4, "pad_token_id": 0,
  "query_pre_attn_scalar": 256, "rms_norm_eps": 1e-06, "rope_theta": 10000.0, "sliding_window": 4096,
  "torch_dtype": "bfloat16", "transformers_version": "4.42.4", "use_cache": true, "vocab_size": 256000})";

// As published for google/gemma-3-1b-it.
const char* kGemma3 = R"({
  "architectures": ["Gemma3ForCausalLM"], "attention_bias": false, "attention_dropout": 0.0, "attn_logit_softcapping": null,
  "bos_token_id": 2, "cache_implementation": "hybrid", "eos_token_id": [1, 106], "final_logit_softcapping": null,
  "head_dim": 256, "hidden_activation": "gelu_pytorch_tanh", "hidden_size": 1152, "initializer_range": 0.02,
  "intermediate_size": 6912, "max_position_embeddings": 32768, "model_type": "gemma3_text", "num_attention_heads": 4,
  "num_hidden_layers": 26, "num_key_value_heads": 1, "pad_token_id": 0, "query_pre_attn_scalar": 256,
  "rms_norm_eps": 1e-06, "rope_local_base_freq": 10000, "rope_scaling": null, "rope_theta": 1000000,
  "sliding_window": 512, "sliding_window_pattern": 6, "torch_dtype": "bfloat16", "transformers_version": "4.50.0.dev0",
  "use_cache": true, "vocab_size": 262144})";

// As published for Qwen/Qwen3-30B-A3B.
const char* kQwen3Moe = R"({
  "architectures": ["Qwen3MoeForCausalLM"], "attention_bias": false, "attention_dropout": 0.0, "bos_token_id": 151643,
  "decoder_sparse_step": 1, "eos_token_id": 151645, "head_dim": 128, "hidden_act": "silu", "hidden_size": 2048,
  "initializer_range": 0.02, "intermediate_size": 6144, "max_position_embeddings": 40960, "max_window_layers": 48,
  "mlp_only_layers": [], "model_type": "qwen3_moe", "moe_intermediate_size": 768, "norm_topk_prob": true,
  "num_attention_heads": 32, "num_experts": 128, "num_experts_per_tok": 8, "num_hidden_layers": 48,
  "num_key_value_heads": 4, "output_router_logits": false, "rms_norm_eps": 1e-06, "rope_scaling": null,
  "rope_theta": 1000000.0, "router_aux_loss_coef": 0.001, "sliding_window": null, "tie_word_embeddings": false,
  "torch_dtype": "bfloat16", "transformers_version": "4.51.0", "use_cache": true, "use_sliding_window": false,
  "vocab_size": 151936})";

TEST(HfConfig, Qwen3Moe) {
  HfConfig c = parse_hf_config(kQwen3Moe, "Qwen3-30B-A3B");
  EXPECT_EQ(c.num_experts, 128);
  EXPECT_EQ(c.num_experts_per_tok, 8);
  EXPECT_EQ(c.moe_intermediate_size, 768);
  EXPECT_TRUE(c.norm_topk_prob);
  EXPECT_TRUE(c.qk_norm);
  ASSERT_EQ(c.moe_layers.size(), 48u);
  EXPECT_EQ(std::count(c.moe_layers.begin(), c.moe_layers.end(), true), 48);
  // mlp_only_layers and decoder_sparse_step pick the dense layers
  HfConfig d = parse_hf_config(R"({"model_type": "qwen3_moe", "num_hidden_layers": 6, "decoder_sparse_step": 2, "mlp_only_layers": [3]})", "x");
  EXPECT_EQ(d.moe_layers, (std::vector<bool>{false, true, false, false, false, true}));
  EXPECT_FALSE(d.norm_topk_prob);  // Qwen3MoeConfig's default
}

TEST(HfConfig, Gemma2And3) {
  HfConfig g2 = parse_hf_config(kGemma2, "gemma-2-2b-it");
  EXPECT_EQ(g2.hidden_act, "gelu_pytorch_tanh");
  EXPECT_TRUE(g2.tie_word_embeddings);  // Gemma's default
  EXPECT_EQ(g2.attn_logit_softcapping, 50.0);
  EXPECT_EQ(g2.final_logit_softcapping, 30.0);
  EXPECT_EQ(g2.query_pre_attn_scalar, 256.0);
  EXPECT_EQ(g2.sliding_window, 4096);
  ASSERT_EQ(g2.sliding_layers.size(), 26u);
  EXPECT_TRUE(g2.sliding_layers[0]);  // even layers slide
  EXPECT_FALSE(g2.sliding_layers[1]);
  EXPECT_FALSE(g2.rope_local_theta);
  EXPECT_FALSE(g2.qk_norm);
  HfConfig g3 = parse_hf_config(kGemma3, "gemma-3-1b-it");
  EXPECT_TRUE(g3.qk_norm);
  EXPECT_FALSE(g3.attn_logit_softcapping);  // null: no capping
  EXPECT_FALSE(g3.final_logit_softcapping);
  EXPECT_EQ(g3.rope_local_theta, 10000.0);
  EXPECT_EQ(g3.rope.theta, 1000000.0);
  ASSERT_EQ(g3.sliding_layers.size(), 26u);
  for (size_t i = 0; i < 26; ++i) EXPECT_EQ(g3.sliding_layers[i], (i + 1) % 6 != 0) << "layer " << i;
  EXPECT_EQ(g3.eos_token_ids, (std::vector<int64_t>{1, 106}));
}

void expect_error(const std::string& json, ErrorKind kind, const std::string& fragment) {
  try {
    parse_hf_config(json, "config.json");
    ADD_FAILURE() << "no error for " << json;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(HfConfig, ErrorsNameTheKey) {
  expect_error(R"({"model_type": "qwen3", "hidden_size": "big"})", ErrorKind::format, "\"hidden_size\" must be an integer");
  expect_error(R"({"model_type": "llama", "num_attention_heads": 32, "num_key_value_heads": 5})", ErrorKind::format,
               "\"num_key_value_heads\" 5 does not divide");
  expect_error(R"({"model_type": "bert", "hidden_size": -3})", ErrorKind::format, "\"hidden_size\" must be a positive size");
  expect_error(R"({"model_type": "mamba"})", ErrorKind::unsupported, "model_type 'mamba' is not supported yet");
  expect_error(R"({"hidden_size": 3})", ErrorKind::format, "\"model_type\" is missing");
  expect_error(R"({"model_type": "bert",)", ErrorKind::format, "malformed JSON at byte offset");
  expect_error(std::string(100, '[') + std::string(100, ']'), ErrorKind::format, "nesting deeper than");
  expect_error(R"([1, 2])", ErrorKind::format, "must be a JSON object");
  expect_error(R"({"model_type": "llama", "rope_parameters": 3})", ErrorKind::format, "\"rope_parameters\" must be an object");
  expect_error(R"({"model_type": "gemma3", "text_config": {}})", ErrorKind::unsupported, "its text model alone is gemma3_text");
  expect_error(R"({"model_type": "gemma2", "num_hidden_layers": 3, "layer_types": ["full_attention"]})", ErrorKind::format,
               "\"layer_types\" must list one type per layer (3)");
  expect_error(R"({"model_type": "gemma2", "hidden_activation": "relu"})", ErrorKind::format, "'relu' is not supported");
  expect_error(R"({"model_type": "gemma2", "attn_logit_softcapping": -1})", ErrorKind::format, "must be positive or null");
  expect_error(R"({"model_type": "qwen3_moe", "num_experts": 4, "num_experts_per_tok": 8})", ErrorKind::format, "exceeds num_experts 4");
  expect_error(R"({"model_type": "qwen3_moe", "num_hidden_layers": 2, "mlp_only_layers": [5]})", ErrorKind::format,
               "entries must be layer indices below 2");
}

TEST(HfDirectory, FindsConfigWeightsAndTokenizerFiles) {
  namespace fs = std::filesystem;
  std::string dir = test::scratch_dir("hf");
  for (const char* f : {"config.json", "tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json",
                        "model.safetensors", "modules.json", "pytorch_model.bin", "README.md"})
    test::write_text(dir + "/" + f, "{}");
  fs::create_directories(dir + "/1_Pooling");
  test::write_text(dir + "/1_Pooling/config.json", "{}");
  HfDirectory d = scan_hf_directory(dir);
  EXPECT_TRUE(d.config);
  EXPECT_TRUE(d.tokenizer.tokenizer_json);
  EXPECT_TRUE(d.tokenizer.tokenizer_config);
  EXPECT_TRUE(d.tokenizer.vocab_txt);
  EXPECT_TRUE(d.tokenizer.special_tokens_map);
  EXPECT_FALSE(d.tokenizer.merges_txt);
  EXPECT_TRUE(d.pooling_config);
  EXPECT_TRUE(d.sentence_transformers_modules);
  EXPECT_EQ(d.safetensors.size(), 1u);
  EXPECT_EQ(d.pickles.size(), 1u);
  EXPECT_FALSE(d.safetensors_index);
  EXPECT_EQ(d.listing().size(), 9u);  // all but README.md
  EXPECT_THROW(scan_hf_directory(dir + "/config.json"), Error);
}

}  // namespace
}  // namespace rlx::formats
