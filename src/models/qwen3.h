// Qwen3 and the llama family (Qwen2, Llama 3, Mistral, Phi-3, Gemma 1/2/3) as HIR: token
// embedding → N pre-norm decoder layers (RMSNorm; GQA attention with optional QK-norm, RoPE,
// q/k/v biases; SwiGLU or GeGLU MLP) → final RMSNorm → LM head (tied to the embedding or not).
// Gemma adds an embedding scale, norms after attention and after the MLP (Gemma 2/3), a
// query_pre_attn_scalar attention scale, soft-capped scores and logits (Gemma 2), and
// sliding-window layers with their own RoPE base among global ones (Gemma 2/3).
//
// One graph serves prefill and decode. It reads and updates a preallocated KV cache: graph
// inputs
//   input_ids  i64[B, S]      the new tokens
//   positions  i64[S]         their positions in the sequence (rows past the prompt may be padding)
//   last_index i64[1]         which of the S rows to compute logits for
//   k_cache.L, v_cache.L      f32[B, Hkv, C, D] for every layer L (C: the cache capacity)
// and outputs logits f32[B, vocab] followed by the updated caches, each donated from its input
// (and, when asked, the greedy next token),
// so CompiledModel::run_into writes the new rows in place (mir.scatter at `positions`) and no
// cache is ever copied. Attention spans the whole capacity; a mask built from `positions`
// hides keys after each query (causal) and the unused tail. S, B and C are symbolic, so one
// graph compiles once and specializes per (prompt bucket, capacity).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "rlx/tensor.h"
#include "util/quant_blocks.h"

namespace rlx::models {

struct LlamaSpec {
  std::string arch = "qwen3";  // qwen3 | qwen3moe | qwen2 | llama (mistral builds as llama) | phi3 | gemma | gemma2 | gemma3
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t num_layers = 0;
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;
  int64_t head_dim = 0;
  int64_t max_position_embeddings = 0;
  double rms_norm_eps = 1e-6;
  double rope_theta = 10000.0;
  // Frequencies of a scaled RoPE (llama3, linear): theta^(-2i/D) adjusted; empty when plain.
  std::vector<float> rope_inv_freq;
  // LongRoPE (Phi-3's 128k models): rope_inv_freq holds the short-context frequencies; a forward
  // step whose last position is ≥ rope_long_after rotates its rows with rope_long_inv_freq
  // instead, as transformers switches per step (rows cached earlier keep their rotation).
  std::vector<float> rope_long_inv_freq;
  int64_t rope_long_after = 0;
  double rope_attention_factor = 1.0;  // cos and sin × this (LongRoPE's attention scale)
  // Pairs (2i, 2i+1) instead of (i, i + D/2): llama GGUF files, whose Q/K rows llama.cpp's
  // converter permuted into that order (the scores are the same).
  bool rope_interleaved = false;
  bool tie_word_embeddings = false;
  bool attention_bias = false;  // q/k/v projection biases (qwen2)
  bool qk_norm = false;         // RMSNorm of q and k over head_dim (qwen3)
  std::optional<int64_t> sliding_window;  // keys older than this many positions are hidden
  // Which layers use sliding_window (empty: every layer, when there is one).
  std::vector<bool> sliding_layers;
  // The sliding layers' own RoPE base, unscaled (Gemma 3: 10000 beside the global layers' 1e6).
  std::optional<double> rope_local_theta;
  // Gemma family. Norm weights are held as the graph multiplies by them: Gemma's stored w
  // becomes 1 + w when loaded from Hugging Face (GGUF files already hold 1 + w).
  double embed_scale = 0;          // embeddings × this (√hidden for Gemma); 0: none
  std::string mlp_act = "silu";    // silu (SwiGLU) | gelu_tanh (GeGLU)
  bool sandwich_norms = false;     // Gemma 2/3: post_attention_layernorm normalizes the attention
                                   // output; pre_/post_feedforward_layernorm wrap the MLP
  double attn_scale = 0;           // scores × this; 0: 1/√head_dim
  double attn_softcap = 0;         // scores → cap·tanh(scores/cap); 0: none
  double final_softcap = 0;        // the same for the logits
  // Mixture of experts (qwen3moe): a sparse layer's MLP is `num_experts` SwiGLU experts of
  // width expert_intermediate_size; each token takes the experts_per_token most probable under
  // a softmax router, their outputs weighted by those probabilities (renormalized to sum 1 when
  // norm_topk_prob). Weights: mlp.gate.weight [E, H] (the router) and the experts stacked,
  // mlp.experts.{gate,up}_proj.weight [E, F, H], mlp.experts.down_proj.weight [E, H, F].
  int64_t num_experts = 0;  // 0: dense
  int64_t experts_per_token = 0;
  int64_t expert_intermediate_size = 0;
  bool norm_topk_prob = true;
  std::vector<bool> moe_layers;  // which layers are sparse (empty: all, when num_experts > 0)
  std::optional<int64_t> bos_token_id;
  std::vector<int64_t> eos_token_ids;
};

// Throws rlx::Error(invalid_argument) naming the inconsistent field.
void validate_llama_spec(const LlamaSpec& spec);
bool is_gemma(const LlamaSpec& spec);  // gemma, gemma2, gemma3: (1 + w) norms in Hugging Face files
// Whether layer l attends through the sliding window.
bool layer_slides(const LlamaSpec& spec, int64_t l);
// Whether layer l's MLP is a sparse mixture of experts.
bool layer_is_moe(const LlamaSpec& spec, int64_t l);

// The Qwen3-0.6B architecture (28 layers, hidden 1024, 16 heads, 8 KV heads, head_dim 128,
// FFN 3072, vocab 151936, tied embeddings, rope_theta 1e6): the benchmark model.
LlamaSpec qwen3_0_6b_spec();

// One weight: dense (f32, bf16 or f16 values) or packed (u8[rows, row bytes] of `type` blocks,
// zero-copy views of a GGUF mapping). Norm weights and biases are always dense f32.
struct LlamaWeight {
  Tensor dense;
  Tensor packed;
  quant::BlockType type = quant::BlockType::q8_0;
  std::vector<int64_t> shape;  // logical: [out, in] for matrices
  bool is_packed() const { return packed.defined(); }
  int64_t bytes() const;  // storage bytes
};
// By Hugging Face name ("model.layers.0.self_attn.q_proj.weight").
using LlamaWeights = std::map<std::string, LlamaWeight>;

// The names and logical shapes the spec needs (lm_head.weight only when untied).
std::vector<std::pair<std::string, std::vector<int64_t>>> llama_weight_shapes(const LlamaSpec& spec);

struct LlamaGraphOptions {
  // Dense bf16/f16 matrices: "gemm" multiplies through dot_general (bf16 × bf16 → f32, AMX on
  // the cpu device), "packed" through dequant_matmul (decode-on-the-fly, best for one row).
  std::string half_matmul = "gemm";
  // Multiply packed and bf16 matrices by x rounded to bf16 (f32 accumulation), and attention's
  // two products in bf16 too: AMX for prefill. Dense f32 matrices always take f32 x.
  bool bf16_activations = false;
  // Round x to 8-bit blocks before quantized (GGUF-typed) matrices, as llama.cpp does: the cpu
  // device then multiplies with integer dot products (dequant_matmul act=q8). Q8_0 matrices
  // only with q8_activations_q8_0 too: rounding x costs them exact greedy agreement with f32.
  bool q8_activations = false;
  bool q8_activations_q8_0 = false;
  std::optional<int64_t> fixed_seq;  // a static S (1 for a decode-only graph); symbolic when unset
  // One more output after the caches: next_token i64[B], the argmax of the logits, so a greedy
  // decode step on a GPU brings back 8 bytes instead of the vocabulary's logits.
  bool next_token_output = false;
  // Slot decode graphs: attention reads each slot's whole cache block under the mask instead of
  // a copied window of the live positions — for devices whose attention skips the masked tail
  // (the cpu device's decode kernel reads only keys up to the last unmasked one).
  bool slot_attention_full_cache = false;
  // Outputs after the others, one per dense or packed matmul of the layers (not the LM head):
  // "sq:<weight name>" f32[k], the sum over the step's rows of the matmul's input squared, by
  // column — the statistics of an importance matrix (quant/importance.h).
  bool matmul_input_stats = false;
  // One rank of n of a tensor-parallel model (models/llama_parallel.h: the spec and weights are
  // the shard's): the partial sums of o_proj and down_proj are all-reduced across the ranks,
  // and with vocab_parallel_head each rank's logits [B, V/n] are gathered into [B, V].
  int64_t tensor_parallel = 1;
  bool vocab_parallel_head = false;
  // A pipeline stage (build_llama_graph only): layers [first_layer, end_layer) (end −1: the last),
  // their caches only; hidden_input takes the previous stage's residual stream `hidden`
  // f32[B, S, hidden] in place of input_ids, hidden_output returns this stage's (`hidden_out`,
  // every row) in place of the logits.
  int64_t first_layer = 0, end_layer = -1;
  bool hidden_input = false, hidden_output = false;
};

// Throws rlx::Error(invalid_argument) when a weight is missing or has the wrong shape.
ir::Graph build_llama_graph(const LlamaSpec& spec, const LlamaWeights& weights, const LlamaGraphOptions& options = {});

// Graphs that serve several sequences at once (continuous batching; models/slot_runner.h). Each
// layer's cache is f32[slots·capacity, Hkv, D] — a row block per sequence slot, bshd — taken as
// a donated input and returned updated. Attention reads only the first L keys of a slot, L the
// length of the input `kv_window` (i64[L], values unused): callers bind it to the longest live
// sequence, rounded up, so a step costs what the sequences hold, not the capacity.
//   decode:  input_ids i64[B, 1], positions i64[B], kv_window, caches → logits f32[B, vocab],
//            caches: the next token of each of the first B slots at its own position, in one
//            pass (B ≤ slots is bound per call, like L).
//   prefill: input_ids i64[1, S], positions i64[S], slot i64[1], last_index i64[1], kv_window,
//            caches → logits f32[1, vocab] of the last_index-th token, caches: one prompt into
//            its slot's rows.
ir::Graph build_llama_slot_decode_graph(const LlamaSpec& spec, const LlamaWeights& weights, const LlamaGraphOptions& options, int64_t slots,
                                        int64_t capacity);
ir::Graph build_llama_slot_prefill_graph(const LlamaSpec& spec, const LlamaWeights& weights, const LlamaGraphOptions& options, int64_t slots,
                                         int64_t capacity);

}  // namespace rlx::models
