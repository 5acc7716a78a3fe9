#include "models/k_quant_mix.h"

#include <cctype>
#include <map>

namespace rlx::models {

using formats::WeightType;

std::optional<std::pair<KQuantMix, WeightType>> k_quant_mix_from_name(const std::string& name) {
  std::string t = name;
  for (char& c : t) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  static const std::map<std::string, std::pair<KQuantMix, WeightType>> mixes = {
      {"Q2_K_S", {KQuantMix::q2_k_s, WeightType::q2_k}}, {"Q3_K_S", {KQuantMix::q3_k_s, WeightType::q3_k}},
      {"Q3_K_M", {KQuantMix::q3_k_m, WeightType::q3_k}}, {"Q3_K_L", {KQuantMix::q3_k_l, WeightType::q3_k}},
      {"Q4_K_S", {KQuantMix::q4_k_s, WeightType::q4_k}}, {"Q4_K_M", {KQuantMix::q4_k_m, WeightType::q4_k}},
      {"Q5_K_S", {KQuantMix::q5_k_s, WeightType::q5_k}}, {"Q5_K_M", {KQuantMix::q5_k_m, WeightType::q5_k}}};
  auto it = mixes.find(t);
  if (it == mixes.end()) return std::nullopt;
  return it->second;
}

WeightType k_quant_mix_type(const LlamaSpec& spec, const std::string& name, WeightType base, KQuantMix mix) {
  using K = KQuantMix;
  if (mix == K::none) return base;
  if (name == "lm_head.weight" || (spec.tie_word_embeddings && name == "model.embed_tokens.weight")) return WeightType::q6_k;
  const std::string prefix = "model.layers.";
  if (name.rfind(prefix, 0) != 0) return base;
  const int64_t i = std::stoll(name.substr(prefix.size())), n = spec.num_layers;
  const bool more_bits = i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2;
  auto has = [&](const char* part) { return name.find(part) != std::string::npos; };
  if (has("qkv_proj")) {  // phi3's fused q, k, v rows
    if (mix == K::q3_k_m || mix == K::q3_k_l) return WeightType::q4_k;
    if (mix == K::q4_k_m) return WeightType::q5_k;
    if (mix == K::q5_k_m) return WeightType::q6_k;
    return base;
  }
  if (has("v_proj")) {
    const bool shared_kv = spec.num_kv_heads > 0 && spec.num_heads / spec.num_kv_heads >= 4;
    switch (mix) {
      case K::q2_k_s: return shared_kv ? WeightType::q4_k : base;
      case K::q3_k_m: return i < 2 ? WeightType::q5_k : WeightType::q4_k;
      case K::q3_k_l: return WeightType::q5_k;
      case K::q4_k_s: return i < 4 ? WeightType::q5_k : base;
      case K::q4_k_m:
      case K::q5_k_m: return more_bits ? WeightType::q6_k : base;
      default: return base;
    }
  }
  if (has("down_proj")) {
    switch (mix) {
      case K::q2_k_s: return i < n / 8 ? WeightType::q4_k : base;
      case K::q3_k_m: return i < n / 16 ? WeightType::q5_k : WeightType::q4_k;
      case K::q3_k_l: return WeightType::q5_k;
      case K::q4_k_s: return i < n / 8 ? WeightType::q5_k : base;
      case K::q4_k_m:
      case K::q5_k_m: return more_bits ? WeightType::q6_k : base;
      default: return base;
    }
  }
  if (has("o_proj")) {
    if (mix == K::q3_k_m) return WeightType::q4_k;
    if (mix == K::q3_k_l) return WeightType::q5_k;
  }
  return base;
}

}  // namespace rlx::models
