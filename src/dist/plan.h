// The paper plan of a tensor- and pipeline-parallel decoder (`rlx launch --dry-run`): for a
// llama-family transformer split Megatron-style over TP ranks (attention heads and KV heads, the
// MLP's columns then rows, a vocab-parallel embedding and LM head) and PP stages (contiguous
// layers; the embedding on the first stage, the final norm and LM head on the last), the bytes
// each rank holds — weights, KV cache at a context length — and the bytes one decode step and
// one prefill step communicate. Arithmetic only: it lets Qwen3-8B/32B layouts be planned on a
// machine that could never hold them.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace rlx::dist {

struct DecoderShape {  // what the plan needs of a model (models:: specs convert to it)
  std::string name;
  int64_t vocab = 0, hidden = 0, intermediate = 0, layers = 0, heads = 0, kv_heads = 0, head_dim = 0;
  bool tied_embeddings = false, qk_norm = false;
};

struct Layout {
  int tp = 1, pp = 1;
  double weight_bytes = 2;      // per parameter (bf16: 2, f32: 4, q8_0: 34/32, …)
  double kv_bytes = 2;          // per cached element
  double activation_bytes = 2;  // per element sent between ranks
  int64_t context = 4096;       // KV cache length per sequence
  int64_t batch = 1;            // sequences decoded together
  int64_t prompt = 512;         // tokens of one prefill step
};

struct RankPlan {
  int rank = 0, tp_rank = 0, stage = 0;
  int64_t first_layer = 0, layers = 0;  // [first_layer, first_layer + layers)
  bool embedding = false, head = false;
  double params = 0;          // parameters held (after the split)
  double weight_bytes = 0, kv_bytes = 0;
  double total() const { return weight_bytes + kv_bytes; }
};

struct StepTraffic {
  int64_t all_reduces = 0;       // per step, on each TP group
  double all_reduce_bytes = 0;   // payload of each (the tensor reduced)
  double tp_wire_bytes = 0;      // bytes one TP rank sends in a step (ring: 2(t−1)/t of each payload)
  double logits_gather_bytes = 0;  // the vocab-parallel LM head's all-gather payload
  double pp_bytes = 0;           // activations one stage boundary passes on in a step
};

struct Plan {
  std::vector<RankPlan> ranks;   // rank = stage·tp + tp_rank
  StepTraffic decode, prefill;
  std::vector<std::string> notes;  // e.g. KV heads replicated because tp > kv_heads
};

// Throws rlx::Error naming what does not divide (heads by tp, …) or is out of range.
Plan plan(const DecoderShape& m, const Layout& l);

}  // namespace rlx::dist
