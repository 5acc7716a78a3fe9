// Texts in, sentence vectors out: a BERT model directory's tokenizer and compiled graph, with
// batching. Texts are tokenized with truncation to the model's max_tokens, sorted by length so
// that each batch pads little (as sentence-transformers does), run B at a time padded to the
// batch's longest (rounded up to a multiple of 16, to bound the shapes compiled), and returned
// in the caller's order.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "models/bert.h"
#include "rlx/session.h"
#include "rlx/tensor.h"
#include "text/tokenizer.h"

namespace rlx::models {

class SentenceEmbedder {
 public:
  // Loads `dir` (load_bert + load_tokenizer) and compiles for `device` with `options`
  // (precision policy, dispatch policy).
  static SentenceEmbedder open(const std::string& dir, const std::string& device = "cpu", const SessionOptions& options = {});
  SentenceEmbedder(BertModel model, text::Tokenizer tokenizer, const std::string& device, const SessionOptions& options = {});

  int64_t dim() const { return model_.dim(); }
  const BertModel& model() const { return model_; }
  const text::Tokenizer& tokenizer() const { return tokenizer_; }
  const CompiledModel& compiled() const { return compiled_; }

  // f32[N, dim]. `progress` (optional) is told how many texts are done after each batch.
  Tensor embed(const std::vector<std::string>& texts, size_t batch = 32,
               const std::function<void(size_t done, size_t total)>& progress = {}) const;
  // The same for token ids that are already encoded with special tokens (one row per text).
  Tensor embed_ids(const std::vector<std::vector<int32_t>>& ids, size_t batch = 32) const;
  // One padded batch straight through the graph: i64[B, S] each; returns f32[B, dim].
  Tensor run(const Tensor& input_ids, const Tensor& attention_mask, const Tensor& token_type_ids) const;

 private:
  struct Row {
    const std::vector<int32_t>* ids;
    const std::vector<int32_t>* types;  // may be null: all zero
  };
  Tensor embed_rows(const std::vector<Row>& rows, size_t batch,
                    const std::function<void(size_t, size_t)>& progress) const;

  BertModel model_;
  text::Tokenizer tokenizer_;
  CompiledModel compiled_;
  int32_t pad_id_ = 0;
};

}  // namespace rlx::models
