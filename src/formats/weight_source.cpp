#include "formats/weight_source.h"

#include <utility>

namespace rlx::formats {

std::string gguf_tensor_name(const std::string& hf, const std::string& arch) {
  static const std::pair<const char*, const char*> kLayer[] = {
      {"input_layernorm.weight", "attn_norm.weight"},
      {"self_attn.q_proj.weight", "attn_q.weight"},
      {"self_attn.k_proj.weight", "attn_k.weight"},
      {"self_attn.v_proj.weight", "attn_v.weight"},
      {"self_attn.q_proj.bias", "attn_q.bias"},
      {"self_attn.k_proj.bias", "attn_k.bias"},
      {"self_attn.v_proj.bias", "attn_v.bias"},
      {"self_attn.o_proj.weight", "attn_output.weight"},
      {"self_attn.q_norm.weight", "attn_q_norm.weight"},
      {"self_attn.k_norm.weight", "attn_k_norm.weight"},
      {"post_attention_layernorm.weight", "ffn_norm.weight"},
      {"mlp.gate_proj.weight", "ffn_gate.weight"},
      {"mlp.up_proj.weight", "ffn_up.weight"},
      {"mlp.down_proj.weight", "ffn_down.weight"},
      // Phi-3's fused matrices (llama.cpp keeps them fused too: ffn_up holds gate then up)
      {"self_attn.qkv_proj.weight", "attn_qkv.weight"},
      {"mlp.gate_up_proj.weight", "ffn_up.weight"},
      // Gemma 2/3's norms around the MLP
      {"pre_feedforward_layernorm.weight", "ffn_norm.weight"},
      {"post_feedforward_layernorm.weight", "post_ffw_norm.weight"},
      // a sparse MoE layer: the router and the experts stacked [E, rows, cols]
      {"mlp.gate.weight", "ffn_gate_inp.weight"},
      {"mlp.experts.gate_proj.weight", "ffn_gate_exps.weight"},
      {"mlp.experts.up_proj.weight", "ffn_up_exps.weight"},
      {"mlp.experts.down_proj.weight", "ffn_down_exps.weight"},
  };
  // Gemma 2/3's post_attention_layernorm normalizes the attention output (llama's is the MLP's
  // input norm, ffn_norm).
  const bool sandwich = arch == "gemma2" || arch == "gemma3";
  if (hf == "model.embed_tokens.weight") return "token_embd.weight";
  if (hf == "model.norm.weight") return "output_norm.weight";
  if (hf == "lm_head.weight") return "output.weight";
  const std::string p = "model.layers.";
  if (hf.compare(0, p.size(), p) == 0) {
    size_t dot = hf.find('.', p.size());
    if (dot == std::string::npos) return {};
    std::string layer = hf.substr(p.size(), dot - p.size()), rest = hf.substr(dot + 1);
    if (sandwich && rest == "post_attention_layernorm.weight") return "blk." + layer + ".post_attention_norm.weight";
    for (const auto& [h, g] : kLayer)
      if (rest == h) return "blk." + layer + "." + g;
  }
  return {};
}

GgufSource::GgufSource(const GgufFile& file) : file_(file) {
  if (const GgufValue* a = file.find("general.architecture"); a && a->as_string()) arch_ = *a->as_string();
}

const TensorView* GgufSource::find(const std::string& name) const {
  std::string g = gguf_tensor_name(name, arch_);
  return g.empty() ? nullptr : file_.find_tensor(g);
}

std::string GgufSource::stored_name(const std::string& name) const {
  std::string g = gguf_tensor_name(name, arch_);
  return g.empty() ? name : g;
}

}  // namespace rlx::formats
