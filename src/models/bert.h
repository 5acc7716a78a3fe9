// BERT-family sentence encoders (BERT, MiniLM, bge, e5, RoBERTa-style position offsets) as HIR:
// embeddings (word + position + token type) → LayerNorm → N post-LN encoder layers (self-
// attention with the padding mask as an additive bias, GELU FFN) → pooling → L2 normalize, the
// way sentence-transformers computes them.
//
// Graph inputs, all i64[B, S]: input_ids, attention_mask (1 token, 0 padding), token_type_ids.
// Outputs: sentence_embedding f32[B, D] (D = hidden size × pooling modes), then
// last_hidden_state f32[B, S, H] when BertGraphOptions::hidden_states is set.
#pragma once
#include <cstdint>
#include <string>

#include "ir/graph.h"
#include "models/bert_spec.h"
#include "models/bert_weights.h"
#include "models/sentence_layout.h"

namespace rlx::models {

struct BertGraphOptions {
  bool hidden_states = false;  // also output last_hidden_state (for tests and debugging)
};

// Weights become graph constants (zero-copy views of the mapped file where they are f32).
// Throws rlx::Error(invalid_argument) when a weight is missing or the spec is inconsistent.
ir::Graph build_bert_graph(const BertSpec& spec, const PoolingSpec& pooling, const BertWeights& weights,
                           const BertGraphOptions& options = {});

// Width of the sentence vector: hidden size × number of pooling modes.
int64_t pooled_dim(const BertSpec& spec, const PoolingSpec& pooling);

// A model directory read and checked, ready to build: config.json, safetensors weights (one
// file or sharded), and the sentence-transformers layout (or the defaults of a plain one).
struct BertModel {
  std::string dir;        // what was opened
  BertSpec spec;
  SentenceLayout layout;  // pooling, normalize, transformer_dir, max_seq_length
  BertWeights weights;
  std::string weight_prefix;  // "", "bert." … as found in the checkpoint
  int64_t max_tokens = 0;     // truncation length: max_seq_length, capped by the position table

  int64_t dim() const { return pooled_dim(spec, layout.pooling); }
  ir::Graph graph(const BertGraphOptions& options = {}) const { return build_bert_graph(spec, layout.pooling, weights, options); }
};

// Throws rlx::Error naming the file and field that is missing or malformed.
BertModel load_bert(const std::string& dir);

}  // namespace rlx::models
