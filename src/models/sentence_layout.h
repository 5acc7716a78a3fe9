// How a model directory turns token vectors into one sentence vector, as sentence-transformers
// declares it: modules.json (Transformer → Pooling → Normalize), 1_Pooling/config.json and
// sentence_bert_config.json. A plain Hugging Face BERT directory has none of these; it gets
// mean pooling + L2 normalization by default (what all-MiniLM-L6-v2 and most BERT embedding
// models use), and the layout says so.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rlx::models {

// In sentence-transformers' concatenation order.
enum class PoolingMode { cls, max, mean, mean_sqrt_len, weighted_mean, last_token };
const char* pooling_mode_name(PoolingMode mode);  // "cls", "max", "mean" …

struct PoolingSpec {
  std::vector<PoolingMode> modes = {PoolingMode::mean};  // several are concatenated
  bool normalize = true;                                 // L2, after pooling
  std::optional<int64_t> dimension;                      // word_embedding_dimension, when declared
};

struct SentenceLayout {
  std::string transformer_dir;            // the directory holding config.json and the weights
  PoolingSpec pooling;
  bool defaulted = false;                 // no modules.json: pooling and normalize are defaults
  std::optional<int64_t> max_seq_length;  // sentence_bert_config.json
  std::string description;                // one line: where the pooling came from
};

// Reads `dir`. Throws rlx::Error(format) for malformed files (naming file and field) and
// rlx::Error(unsupported) for modules RLX does not run (Dense, a second Transformer …).
SentenceLayout read_sentence_layout(const std::string& dir);

// 1_Pooling/config.json: the pooling_mode_* flags (or "pooling_mode": "mean" …).
PoolingSpec parse_pooling_config(const std::string& json_text, const std::string& source);

}  // namespace rlx::models
