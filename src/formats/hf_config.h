// config.json of a Hugging Face model directory, typed for the architectures RLX builds:
// BERT family encoders (bert, roberta, xlm-roberta, distilbert …) and llama-family decoders
// (llama, mistral, qwen2, qwen3, qwen3_moe, phi3, gemma, gemma2, gemma3_text). Defaults are those of the transformers config classes.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace rlx::formats {

enum class HfFamily { bert, llama };
const char* hf_family_name(HfFamily f);

struct HfRope {
  double theta = 10000.0;
  std::string type = "default";  // "default", "linear", "dynamic", "yarn", "llama3" …
  double factor = 1.0;
  std::optional<double> low_freq_factor, high_freq_factor;  // llama3
  std::optional<int64_t> original_max_position_embeddings;
  // longrope (Phi-3's "su"): per-frequency divisors for sequences within the original context
  // (short) and beyond it (long), and the cos/sin scale
  std::vector<double> long_factor, short_factor;
  std::optional<double> attention_factor;
};

struct HfConfig {
  std::string model_type;  // "bert", "qwen3" …
  std::vector<std::string> architectures;
  HfFamily family = HfFamily::bert;

  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t num_hidden_layers = 0;
  int64_t num_attention_heads = 0;
  int64_t num_key_value_heads = 0;  // = num_attention_heads when absent
  int64_t head_dim = 0;             // = hidden_size / num_attention_heads when absent
  int64_t max_position_embeddings = 0;
  std::string hidden_act;
  double norm_eps = 0;  // rms_norm_eps (decoders) or layer_norm_eps (encoders)
  std::string dtype;    // "dtype" or the older "torch_dtype" ("bfloat16"); empty when absent

  // Decoders.
  HfRope rope;
  bool tie_word_embeddings = false;
  bool attention_bias = false;  // q/k/v projection biases (always on for qwen2)
  bool qk_norm = false;         // RMSNorm on q and k per head (qwen3)
  std::optional<int64_t> sliding_window;
  std::optional<int64_t> bos_token_id;
  std::vector<int64_t> eos_token_ids;  // one or several

  // Gemma family (hidden_activation is read into hidden_act).
  std::optional<double> query_pre_attn_scalar;   // attention scale = this^-0.5 (Gemma 2/3)
  std::optional<double> attn_logit_softcapping;  // scores → cap·tanh(scores/cap) (Gemma 2)
  std::optional<double> final_logit_softcapping;
  std::optional<double> rope_local_theta;        // the sliding layers' RoPE base (Gemma 3)
  std::vector<bool> sliding_layers;              // per layer: attends through sliding_window

  // Mixture of experts (qwen3_moe).
  int64_t num_experts = 0;           // 0: a dense model
  int64_t num_experts_per_tok = 0;
  int64_t moe_intermediate_size = 0;
  bool norm_topk_prob = false;       // renormalize the chosen experts' probabilities to sum 1
  std::vector<bool> moe_layers;      // per layer: sparse MoE (else the dense MLP)

  // Encoders.
  int64_t type_vocab_size = 0;
  int64_t pad_token_id = 0;
  int64_t position_offset = 0;  // roberta family: positions start at pad_token_id + 1
  std::string position_embedding_type = "absolute";

  nlohmann::json raw;  // the whole file, for fields not typed here
};

// Throws rlx::Error(format) naming the key for wrong types or inconsistent sizes, and
// rlx::Error(unsupported) for a model_type outside the families above.
HfConfig parse_hf_config(const std::string& json_text, const std::string& source);
HfConfig read_hf_config(const std::string& path);
nlohmann::json hf_config_json(const HfConfig& c);  // the typed fields, for `rlx info --json`

}  // namespace rlx::formats
