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

}  // namespace rlx::models
