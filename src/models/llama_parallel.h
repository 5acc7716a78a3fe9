// Megatron tensor parallelism for a llama-family model: rank r of n holds
//   attention   the query heads [r·Hq/n, (r+1)·Hq/n) and the KV heads [r·Hkv/n, …) — rows of q/k/v
//               (and their biases), so each rank attends over its own heads and its own KV cache
//               (fewer KV heads than ranks: a copy of the one its query heads share); the matching
//               columns of o_proj;
//   MLP         rows [r·F/n, …) of gate_proj and up_proj, those columns of down_proj;
//   LM head     rows [r·V/n, …) of the output matrix (vocab parallel) when n divides the vocabulary;
//   the rest    norms and the embedding table whole.
// The graph then all-reduces (sum) the partial outputs of o_proj and down_proj and gathers the
// logits (LlamaGraphOptions::tensor_parallel). Row slices are views of the loaded weights;
// column slices are copies. Quantized (GGUF) matrices split their columns at block boundaries.
#pragma once
#include <memory>
#include <optional>
#include <string>

#include "dist/graph_collectives.h"
#include "models/generate.h"
#include "models/qwen3.h"

namespace rlx::models {

struct LlamaShard {
  LlamaSpec spec;          // the shard's heads, KV heads and MLP width
  LlamaWeights weights;
  bool vocab_parallel = false;  // lm_head.weight holds V/n rows (the graph gathers the logits)
};

// Throws rlx::Error(invalid_argument) naming what n does not divide (heads, KV heads, the MLP
// width, a quantized matrix's blocks) and (unsupported) for mixtures of experts.
LlamaShard shard_llama_tensor_parallel(const LlamaSpec& spec, const LlamaWeights& weights, int rank, int ranks);

// One rank's part of a tensor × pipeline parallel run (`rlx launch -n T·P -- rlx generate|bench
// … `): connects to the job (rank = stage·T + tensor position), lends each stage's T ranks — the
// whole job, or a group split off it per stage when P > 1 (Communicator::split) — to the graphs'
// collectives, and gives the
// runner its shard and stage. T = P = 1 connects nothing and passes the model through.
class LlamaParallel {
 public:
  LlamaParallel(int64_t tp, int64_t pp);  // connects (throws naming a wrong job size)
  // Shards `spec`/`weights` for this rank and sets ro's tensor_parallel, vocab head and pipeline.
  void prepare(const LlamaSpec& spec, const LlamaWeights& weights, LlamaRunnerOptions& ro);
  const LlamaSpec& spec() const { return shard_ ? shard_->spec : *spec_; }
  const LlamaWeights& weights() const { return shard_ ? shard_->weights : *weights_; }
  dist::Communicator* comm() const { return comm_.get(); }
  bool lead() const { return !comm_ || comm_->rank() == 0; }  // rank 0 speaks for the job
  // After prepare: this rank's share of the model in words — its pipeline stage and layers, its
  // query and KV heads, MLP rows and vocabulary rows ("one process" without a split).
  std::string placement() const;
  int64_t tp() const { return tp_; }
  int64_t pp() const { return pp_; }

 private:
  int64_t tp_, pp_;
  int tp_rank_ = 0, stage_ = 0;
  int64_t first_layer_ = 0, end_layer_ = 0;  // this stage's layers (after prepare)
  std::unique_ptr<dist::Communicator> comm_, tp_comm_;
  std::optional<dist::GraphCollectives> lent_;
  std::optional<LlamaShard> shard_;
  const LlamaSpec* spec_ = nullptr;
  const LlamaWeights* weights_ = nullptr;
};

}  // namespace rlx::models
