// llama.cpp's K-quant mixes: which ggml type each matrix of a llama-family model gets.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "formats/weight_type.h"
#include "models/qwen3.h"

namespace rlx::models {

// llama.cpp's K-quant mixes (llama-quantize's file types): a base type for the matrices and more
// bits where they matter most — Q6_K for the output (or tied embedding) matrix, and per recipe
// attn_v, ffn_down, attn_output (and phi3's fused qkv) of chosen layers:
//   Q2_K_S  base Q2_K; attn_v Q4_K when 4+ query heads share a KV head; ffn_down Q4_K in the first n/8 layers
//   Q3_K_S  base Q3_K
//   Q3_K_M  base Q3_K; attn_v Q5_K in layers 0–1, else Q4_K; ffn_down Q5_K in the first n/16, else Q4_K;
//           attn_output Q4_K; qkv Q4_K
//   Q3_K_L  base Q3_K; attn_v, ffn_down, attn_output Q5_K; qkv Q4_K
//   Q4_K_S  base Q4_K; attn_v Q5_K in layers 0–3; ffn_down Q5_K in the first n/8 layers
//   Q4_K_M  base Q4_K; attn_v, ffn_down Q6_K in the layers use_more_bits picks; qkv Q5_K
//   Q5_K_S  base Q5_K
//   Q5_K_M  base Q5_K; attn_v, ffn_down Q6_K in the layers use_more_bits picks; qkv Q6_K
// use_more_bits(i, n): the first and last eighth of the layers and every third between.
enum class KQuantMix : uint8_t { none, q2_k_s, q3_k_s, q3_k_m, q3_k_l, q4_k_s, q4_k_m, q5_k_s, q5_k_m };
// "Q4_K_M" (any case) → the mix and its base type; nullopt for a name that is not a mix.
std::optional<std::pair<KQuantMix, formats::WeightType>> k_quant_mix_from_name(const std::string& name);
// The type the mix gives the matrix `name` (a Hugging Face tensor name, "model.layers.3.self_attn.v_proj.weight").
formats::WeightType k_quant_mix_type(const LlamaSpec& spec, const std::string& name, formats::WeightType base, KQuantMix mix);

}  // namespace rlx::models
