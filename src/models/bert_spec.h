// The architecture of a BERT-family encoder (BERT, MiniLM, RoBERTa-style position offsets) and
// the weights it needs, by canonical name: the Hugging Face BertModel names without a prefix.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "formats/hf_config.h"

namespace rlx::models {

struct BertSpec {
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t num_layers = 0;
  int64_t num_heads = 0;
  int64_t intermediate_size = 0;
  int64_t max_position_embeddings = 512;
  int64_t type_vocab_size = 2;
  // RoBERTa-style models number positions from pad_token_id + 1.
  int64_t position_offset = 0;
  double layer_norm_eps = 1e-12;
  std::string activation = "gelu";  // hidden_act: gelu, gelu_new / gelu_pytorch_tanh, relu, silu
  std::string model_type = "bert";

  int64_t head_dim() const { return hidden_size / num_heads; }
  // Tokens a sequence may hold: the position table minus RoBERTa's offset.
  int64_t max_tokens() const { return max_position_embeddings - position_offset; }
};

// From a parsed config.json; throws rlx::Error(unsupported) naming `source` and the field for
// encoders this builder does not cover (DistilBERT, MPNet, ELECTRA's embedding projection,
// relative position embeddings).
BertSpec bert_spec_from_config(const formats::HfConfig& config, const std::string& source);

// all-MiniLM-L6-v2: 6 layers, hidden 384, 12 heads, FFN 1536, vocab 30522.
BertSpec minilm_l6_spec();

// Every weight the graph reads, canonical name and shape, in a stable order.
std::vector<std::pair<std::string, std::vector<int64_t>>> bert_weight_shapes(const BertSpec& spec);

// Checks sizes and the activation; throws rlx::Error(invalid_argument) naming the field.
void validate_bert_spec(const BertSpec& spec);

}  // namespace rlx::models
