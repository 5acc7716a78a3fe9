#include "models/qwen3_weights.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <tuple>

#include "formats/quant.h"
#include "formats/json_util.h"
#include "formats/mapped_file.h"
#include "rlx/error.h"
#include "util/flags.h"
#include "util/half.h"
#include "util/host_memory.h"
#include "util/strings.h"

namespace rlx::models {

namespace {

using formats::GgufFile;
using formats::GgufValue;
using formats::TensorView;
using formats::WeightType;

constexpr double kPi = 3.14159265358979323846;

// theta^(-2i/D) in f32, as transformers computes the base frequencies.
std::vector<float> base_inv_freq(double theta, int64_t D) {
  std::vector<float> f(static_cast<size_t>(D / 2));
  for (int64_t i = 0; i < D / 2; ++i)
    f[static_cast<size_t>(i)] = 1.0f / std::pow(static_cast<float>(theta), static_cast<float>(2 * i) / static_cast<float>(D));
  return f;
}

// transformers' _compute_llama3_parameters.
std::vector<float> llama3_inv_freq(const formats::HfRope& r, int64_t D, const std::string& source) {
  if (!r.low_freq_factor || !r.high_freq_factor || !r.original_max_position_embeddings)
    throw Error(ErrorKind::format, cat(source, ": rope_type llama3 needs low_freq_factor, high_freq_factor and original_max_position_embeddings"));
  std::vector<float> f = base_inv_freq(r.theta, D);
  double old_len = static_cast<double>(*r.original_max_position_embeddings);
  double low_wavelen = old_len / *r.low_freq_factor, high_wavelen = old_len / *r.high_freq_factor;
  for (float& x : f) {
    double wavelen = 2 * kPi / x;
    double v = wavelen > low_wavelen ? x / r.factor : x;
    if (!(wavelen < high_wavelen) && !(wavelen > low_wavelen)) {
      double smooth = (old_len / wavelen - *r.low_freq_factor) / (*r.high_freq_factor - *r.low_freq_factor);
      v = (1 - smooth) * v / r.factor + smooth * v;
    }
    x = static_cast<float>(v);
  }
  return f;
}

// Matrices and stacks of them (a MoE layer's experts [E, rows, cols]): quantized, packed, rounded.
bool is_matrix(const std::vector<int64_t>& shape) { return shape.size() == 2 || shape.size() == 3; }
// A MoE router: kept F32 in GGUF files, as llama.cpp's quantizer keeps ffn_gate_inp.
bool is_router(const std::string& name) {
  const std::string suffix = ".mlp.gate.weight";
  return name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}


// llama.cpp's LlamaModel.permute: within each head, rows (i, i + D/2) become (2i, 2i + 1).
std::vector<float> permute_rows(const std::vector<float>& w, int64_t rows, int64_t cols, int64_t heads) {
  int64_t hd = rows / heads, half = hd / 2;
  std::vector<float> out(w.size());
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t i = 0; i < half; ++i)
      for (int64_t j = 0; j < 2; ++j) {
        int64_t dst = h * hd + 2 * i + j, src = h * hd + j * half + i;
        std::memcpy(&out[static_cast<size_t>(dst * cols)], &w[static_cast<size_t>(src * cols)], static_cast<size_t>(cols) * 4);
      }
  return out;
}

Tensor to_f32(const TensorView& v) { return v.type == WeightType::f32 ? formats::to_tensor(v) : formats::dequantize(v); }

// 1 + w in f32, in a new tensor (w may view a read-only mapping).
Tensor plus_one(const Tensor& w) {
  Tensor c = w.contiguous();
  Tensor out = Tensor::zeros(DType::f32, c.shape());
  for (int64_t i = 0; i < c.numel(); ++i) out.data_as<float>()[i] = 1.0f + c.data_as<float>()[i];
  return out;
}

Tensor f32_to_bf16_tensor(const Tensor& t) {
  Tensor c = t.contiguous();
  Tensor out = Tensor::zeros(DType::bf16, c.shape());
  const float* src = c.data_as<float>();
  auto* dst = out.data_as<uint16_t>();
  for (int64_t i = 0; i < c.numel(); ++i) dst[i] = f32_to_bf16(src[i]);
  return out;
}

[[noreturn]] void missing(const std::string& source, const std::string& name, size_t count) {
  throw Error(ErrorKind::format, cat(source, ": tensor '", name, "' is missing (the file has ", count, " tensors)"));
}

void check_shape(const std::string& source, const TensorView& v, const std::vector<int64_t>& shape) {
  if (v.shape != shape)
    throw Error(ErrorKind::format, cat(source, ": tensor '", v.name, "' is [", join(v.shape, ","), "], expected [", join(shape, ","), "]"));
}

// splitmix64: the same numbers on every platform.
uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t name_hash(const std::string& s) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

bool is_norm(const std::string& name) { return name.find("norm") != std::string::npos; }

std::optional<int64_t> meta_int(const GgufFile& f, const std::string& key) {
  const GgufValue* v = f.find(key);
  if (!v) return std::nullopt;
  auto x = v->as_int();
  if (!x) throw Error(ErrorKind::format, cat(f.path, ": GGUF key ", key, " must be an integer, found ", v->summary()));
  return x;
}

std::optional<double> meta_double(const GgufFile& f, const std::string& key) {
  const GgufValue* v = f.find(key);
  if (!v) return std::nullopt;
  auto x = v->as_double();
  if (!x) throw Error(ErrorKind::format, cat(f.path, ": GGUF key ", key, " must be a number, found ", v->summary()));
  return x;
}

int64_t meta_size(const GgufFile& f, const std::string& key, std::optional<int64_t> def = std::nullopt) {
  auto v = meta_int(f, key);
  if (!v && !def) throw Error(ErrorKind::format, cat(f.path, ": GGUF key ", key, " is missing"));
  int64_t x = v ? *v : *def;
  if (x <= 0 || x > (int64_t{1} << 40)) throw Error(ErrorKind::format, cat(f.path, ": GGUF key ", key, " must be a positive size, found ", x));
  return x;
}

// A stack "….mlp.experts.gate_proj.weight" from Hugging Face's one tensor per expert
// ("….mlp.experts.7.gate_proj.weight"), in f32; empty when the file has no such tensors.
Tensor stack_experts(const formats::WeightSource& src, const std::string& name, const std::vector<int64_t>& shape) {
  const std::string key = ".mlp.experts.";
  size_t at = name.find(key);
  if (at == std::string::npos || shape.size() != 3) return {};
  std::string head = name.substr(0, at + key.size()), tail = name.substr(at + key.size());
  Tensor out = Tensor::zeros(DType::f32, shape);
  const int64_t per = shape[1] * shape[2];
  for (int64_t e = 0; e < shape[0]; ++e) {
    std::string one = cat(head, e, ".", tail);
    const TensorView* v = src.find(one);
    if (!v) {
      if (e == 0) return {};
      missing(src.path(), one, src.count());
    }
    check_shape(src.path(), *v, {shape[1], shape[2]});
    if (!formats::can_dequantize(v->type) || formats::weight_type_is_quantized(v->type))
      throw Error(ErrorKind::unsupported, cat(src.path(), ": tensor '", v->name, "' is ", v->type_name(), "; expected F32, BF16 or F16"));
    Tensor f = to_f32(*v).contiguous();
    std::copy(f.data_as<float>(), f.data_as<float>() + per, out.data_as<float>() + e * per);
  }
  return out;
}

// The query scale llama.cpp derives for Gemma 2/3 (GGUF has no key for it): 1/√head_dim, or
// 1/√(hidden/heads) for the 27B models (46 layers in Gemma 2, 62 in Gemma 3).
double llama_cpp_gemma_attention_scale(const LlamaSpec& s) {
  bool big = (s.arch == "gemma2" && s.num_layers == 46) || (s.arch == "gemma3" && s.num_layers == 62);
  return 1.0 / std::sqrt(static_cast<double>(big ? s.hidden_size / s.num_heads : s.head_dim));
}

// Gemma's GGUF keys, with llama.cpp's defaults: the sliding pattern (a period or one flag per
// layer; 2 for gemma2, 6 for gemma3), freq_base_swa, the soft-caps, and llama.cpp's query scale.
void gemma_from_gguf(const GgufFile& f, LlamaSpec& s) {
  const std::string a = s.arch + ".";
  s.mlp_act = "gelu_tanh";
  s.embed_scale = std::sqrt(static_cast<double>(s.hidden_size));
  if (s.arch == "gemma") return;
  s.sandwich_norms = true;
  s.attn_scale = llama_cpp_gemma_attention_scale(s);
  if (s.arch == "gemma2") {
    s.attn_softcap = meta_double(f, a + "attn_logit_softcapping").value_or(50.0);
    s.final_softcap = meta_double(f, a + "final_logit_softcapping").value_or(30.0);
    if (!s.sliding_window) s.sliding_window = 4096;
  } else {
    s.final_softcap = meta_double(f, a + "final_logit_softcapping").value_or(0.0);
  }
  if (!s.sliding_window) return;  // a gemma3 file without a window: every layer global
  const std::string pk = a + "attention.sliding_window_pattern";
  s.sliding_layers.clear();
  if (const GgufValue* pv = f.find(pk); pv && pv->as_array()) {
    const formats::GgufArray& arr = *pv->as_array();
    if (arr.elem != formats::GgufType::boolean || static_cast<int64_t>(arr.raw.size()) != s.num_layers)
      throw Error(ErrorKind::format, cat(f.path, ": GGUF key ", pk, " must be one bool per layer (", s.num_layers, "), found ", pv->summary()));
    for (uint8_t b : arr.raw) s.sliding_layers.push_back(b != 0);
  } else {
    int64_t period = meta_size(f, pk, s.arch == "gemma2" ? 2 : 6);
    for (int64_t i = 0; i < s.num_layers; ++i) s.sliding_layers.push_back(i % period < period - 1);
  }
  // The sliding layers' base: freq_base_swa, else gemma2's shared base or gemma3's 10000.
  double local = meta_double(f, a + "rope.freq_base_swa").value_or(s.arch == "gemma2" ? s.rope_theta : 10000.0);
  if (local != s.rope_theta || !s.rope_inv_freq.empty()) s.rope_local_theta = local;
}

// transformers' _compute_longrope_parameters: inv_freq = 1 / (factor_i · θ^(2i/D)) in f32.
std::vector<float> longrope_inv_freq(double theta, int64_t D, const std::vector<float>& factors) {
  std::vector<float> f(static_cast<size_t>(D / 2));
  for (int64_t i = 0; i < D / 2; ++i)
    f[static_cast<size_t>(i)] = 1.0f / (factors[static_cast<size_t>(i)] * std::pow(static_cast<float>(theta), static_cast<float>(2 * i) / static_cast<float>(D)));
  return f;
}

// The cos/sin scale transformers and llama.cpp's converter use when the config gives none:
// √(1 + ln(max/original) / ln(original)) for an extended context.
double longrope_attention_factor(int64_t max_positions, int64_t original) {
  double scale = static_cast<double>(max_positions) / static_cast<double>(original);
  return scale <= 1.0 ? 1.0 : std::sqrt(1.0 + std::log(scale) / std::log(static_cast<double>(original)));
}

void longrope(const formats::HfConfig& c, LlamaSpec& s, const std::string& source) {
  const int64_t half = s.head_dim / 2;
  if (static_cast<int64_t>(c.rope.long_factor.size()) != half || static_cast<int64_t>(c.rope.short_factor.size()) != half)
    throw Error(ErrorKind::format, cat(source, ": longrope needs ", half, " long_factor and short_factor entries (head_dim/2), found ", c.rope.long_factor.size(),
                                       " and ", c.rope.short_factor.size()));
  int64_t original = c.rope.original_max_position_embeddings.value_or(c.max_position_embeddings);
  std::vector<float> lf(c.rope.long_factor.begin(), c.rope.long_factor.end()), sf(c.rope.short_factor.begin(), c.rope.short_factor.end());
  s.rope_inv_freq = longrope_inv_freq(s.rope_theta, s.head_dim, sf);
  s.rope_long_inv_freq = longrope_inv_freq(s.rope_theta, s.head_dim, lf);
  s.rope_long_after = original;
  s.rope_attention_factor = c.rope.attention_factor.value_or(longrope_attention_factor(c.max_position_embeddings, original));
}

}  // namespace

LlamaSpec llama_spec_from_hf(const formats::HfConfig& c, const std::string& source) {
  if (c.family != formats::HfFamily::llama)
    throw Error(ErrorKind::unsupported, cat(source, ": model_type '", c.model_type, "' is not a llama-family decoder"));
  LlamaSpec s;
  const std::string& t = c.model_type;
  s.arch = t == "qwen3" || t == "qwen2" || t == "phi3" || t == "gemma" || t == "gemma2" ? t
           : t == "gemma3_text"                                                             ? "gemma3"
           : t == "qwen3_moe"                                                               ? "qwen3moe"
                                                                                            : "llama";
  if (c.num_experts > 0) {
    s.num_experts = c.num_experts;
    s.experts_per_token = c.num_experts_per_tok;
    s.expert_intermediate_size = c.moe_intermediate_size;
    s.norm_topk_prob = c.norm_topk_prob;
    s.moe_layers = c.moe_layers;
  }
  s.vocab_size = c.vocab_size;
  s.hidden_size = c.hidden_size;
  s.intermediate_size = c.intermediate_size;
  s.num_layers = c.num_hidden_layers;
  s.num_heads = c.num_attention_heads;
  s.num_kv_heads = c.num_key_value_heads;
  s.head_dim = c.head_dim;
  s.max_position_embeddings = c.max_position_embeddings;
  s.rms_norm_eps = c.norm_eps;
  s.rope_theta = c.rope.theta;
  s.tie_word_embeddings = c.tie_word_embeddings;
  s.attention_bias = c.attention_bias;
  s.qk_norm = c.qk_norm;
  s.sliding_window = c.sliding_window;
  s.bos_token_id = c.bos_token_id;
  s.eos_token_ids = c.eos_token_ids;
  if (is_gemma(s)) {
    s.mlp_act = "gelu_tanh";  // hf_config checked hidden_activation
    s.embed_scale = std::sqrt(static_cast<double>(s.hidden_size));
    s.sandwich_norms = s.arch != "gemma";
    if (c.query_pre_attn_scalar) s.attn_scale = 1.0 / std::sqrt(*c.query_pre_attn_scalar);
    s.attn_softcap = c.attn_logit_softcapping.value_or(0);
    s.final_softcap = c.final_logit_softcapping.value_or(0);
    s.sliding_layers = c.sliding_layers;
    s.rope_local_theta = c.rope_local_theta;
  } else if (c.hidden_act != "silu") {
    throw Error(ErrorKind::unsupported, cat(source, ": hidden_act '", c.hidden_act, "' is not supported (llama-family models use silu)"));
  }
  const std::string& rt = c.rope.type;
  if (rt == "llama3") s.rope_inv_freq = llama3_inv_freq(c.rope, s.head_dim, source);
  else if (rt == "linear") {
    s.rope_inv_freq = base_inv_freq(s.rope_theta, s.head_dim);
    for (float& x : s.rope_inv_freq) x = static_cast<float>(x / c.rope.factor);
  } else if (rt == "longrope" || rt == "su") {
    longrope(c, s, source);
  } else if (rt != "default")
    throw Error(ErrorKind::unsupported, cat(source, ": rope_type '", rt, "' is not supported (default, linear, llama3 and longrope are)"));
  validate_llama_spec(s);
  return s;
}

LlamaSpec llama_spec_from_gguf(const GgufFile& f) {
  const GgufValue* av = f.find("general.architecture");
  if (!av || !av->as_string()) throw Error(ErrorKind::format, cat(f.path, ": no general.architecture (a string) in the GGUF metadata"));
  std::string arch = *av->as_string();
  static const char* const kArchs[] = {"qwen3", "qwen3moe", "qwen2", "llama", "phi3", "gemma", "gemma2", "gemma3"};
  if (std::find(std::begin(kArchs), std::end(kArchs), arch) == std::end(kArchs))
    throw Error(ErrorKind::unsupported, cat(f.path, ": GGUF architecture '", arch,
                                            "' is not supported (qwen3, qwen3moe, qwen2, llama, phi3, gemma, gemma2 and gemma3 are)"));
  LlamaSpec s;
  s.arch = arch;
  const std::string a = arch + ".";
  s.hidden_size = meta_size(f, a + "embedding_length");
  s.num_layers = meta_size(f, a + "block_count");
  s.intermediate_size = meta_size(f, a + "feed_forward_length");
  s.num_heads = meta_size(f, a + "attention.head_count");
  s.num_kv_heads = meta_size(f, a + "attention.head_count_kv", s.num_heads);
  s.head_dim = meta_size(f, a + "attention.key_length", s.hidden_size / s.num_heads);
  s.max_position_embeddings = meta_size(f, a + "context_length", 4096);
  s.rms_norm_eps = meta_double(f, a + "attention.layer_norm_rms_epsilon").value_or(1e-6);
  s.rope_theta = meta_double(f, a + "rope.freq_base").value_or(10000.0);
  const TensorView* emb = f.find_tensor("token_embd.weight");
  if (!emb || emb->shape.size() != 2) throw Error(ErrorKind::format, cat(f.path, ": no 2-D token_embd.weight tensor"));
  s.vocab_size = emb->shape[0];
  s.tie_word_embeddings = f.find_tensor("output.weight") == nullptr;
  s.attention_bias = f.find_tensor("blk.0.attn_q.bias") != nullptr;
  s.qk_norm = f.find_tensor("blk.0.attn_q_norm.weight") != nullptr;
  // llama.cpp runs llama with GPT-J style RoPE over Q/K rows its converter permuted; qwen2/3 use
  // the NeoX style (HF rotate_half) on rows as Hugging Face stores them.
  s.rope_interleaved = arch == "llama";
  if (auto w = meta_int(f, a + "attention.sliding_window"); w && *w > 0) s.sliding_window = *w;
  if (auto id = meta_int(f, "tokenizer.ggml.bos_token_id")) s.bos_token_id = *id;
  for (const char* k : {"tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id"})
    if (auto id = meta_int(f, k))
      if (std::find(s.eos_token_ids.begin(), s.eos_token_ids.end(), *id) == s.eos_token_ids.end()) s.eos_token_ids.push_back(*id);
  const GgufValue* st = f.find(a + "rope.scaling.type");
  std::string scaling = st && st->as_string() ? *st->as_string() : "none";
  if (scaling == "linear") {
    double factor = meta_double(f, a + "rope.scaling.factor").value_or(1.0);
    s.rope_inv_freq = base_inv_freq(s.rope_theta, s.head_dim);
    for (float& x : s.rope_inv_freq) x = static_cast<float>(x / factor);
  } else if (scaling != "none") {
    throw Error(ErrorKind::unsupported, cat(f.path, ": RoPE scaling '", scaling, "' is not supported (none and linear are)"));
  }
  // Llama 3.1+: per-frequency divisors (llama.cpp stores the llama3 scaling as rope_freqs).
  if (const TensorView* rf = f.find_tensor("rope_freqs.weight")) {
    check_shape(f.path, *rf, {s.head_dim / 2});
    Tensor factors = to_f32(*rf);
    if (s.rope_inv_freq.empty()) s.rope_inv_freq = base_inv_freq(s.rope_theta, s.head_dim);
    for (size_t i = 0; i < s.rope_inv_freq.size(); ++i) s.rope_inv_freq[i] /= factors.data_as<float>()[i];
  }
  // LongRoPE as llama.cpp stores it: the two factor vectors, the pretrained context, the scale
  const TensorView* lf = f.find_tensor("rope_factors_long.weight");
  const TensorView* sf = f.find_tensor("rope_factors_short.weight");
  if (lf || sf) {
    if (!lf || !sf) throw Error(ErrorKind::format, cat(f.path, ": LongRoPE needs both rope_factors_long and rope_factors_short"));
    check_shape(f.path, *lf, {s.head_dim / 2});
    check_shape(f.path, *sf, {s.head_dim / 2});
    Tensor l = to_f32(*lf).contiguous(), sh = to_f32(*sf).contiguous();
    std::vector<float> lv(l.data_as<float>(), l.data_as<float>() + l.numel()), sv(sh.data_as<float>(), sh.data_as<float>() + sh.numel());
    for (float v : lv)
      if (!(v > 0)) throw Error(ErrorKind::format, cat(f.path, ": rope_factors_long holds ", v, "; factors must be positive"));
    for (float v : sv)
      if (!(v > 0)) throw Error(ErrorKind::format, cat(f.path, ": rope_factors_short holds ", v, "; factors must be positive"));
    int64_t original = meta_size(f, a + "rope.scaling.original_context_length", s.max_position_embeddings);
    s.rope_inv_freq = longrope_inv_freq(s.rope_theta, s.head_dim, sv);
    s.rope_long_inv_freq = longrope_inv_freq(s.rope_theta, s.head_dim, lv);
    s.rope_long_after = original;
    s.rope_attention_factor = meta_double(f, a + "rope.scaling.attn_factor").value_or(longrope_attention_factor(s.max_position_embeddings, original));
  }
  if (is_gemma(s)) gemma_from_gguf(f, s);
  if (arch == "qwen3moe") {
    // llama.cpp's qwen3moe: every layer sparse, the chosen experts' weights always renormalized
    s.num_experts = meta_size(f, a + "expert_count");
    s.experts_per_token = meta_size(f, a + "expert_used_count");
    s.expert_intermediate_size = meta_size(f, a + "expert_feed_forward_length", s.intermediate_size / s.experts_per_token);
    s.norm_topk_prob = true;
  }
  validate_llama_spec(s);
  return s;
}

namespace {

// Phi-3 stores q, k and v as one matrix (qkv_proj) and gate and up as another (gate_up_proj):
// their rows, in that order. The split matrices are row ranges of the fused ones — views of
// the same bytes, whatever the type (quantized rows stay whole blocks).
class FusedRowsSource : public formats::WeightSource {
 public:
  FusedRowsSource(const formats::WeightSource& inner, const LlamaSpec& spec) : inner_(inner), spec_(spec) {}
  const std::string& path() const override { return inner_.path(); }
  const char* format() const override { return inner_.format(); }
  std::string stored_name(const std::string& name) const override {
    auto [fused, lo, hi] = locate(name);
    return fused.empty() ? inner_.stored_name(name) : inner_.stored_name(fused);
  }
  size_t count() const override { return inner_.count(); }
  const std::string& stored_name_at(size_t i) const override { return inner_.stored_name_at(i); }
  const formats::TensorView* find(const std::string& name) const override {
    auto [fused, lo, hi] = locate(name);
    if (fused.empty()) return inner_.find(name);
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = views_.find(name); it != views_.end()) return &it->second;
    const formats::TensorView* f = inner_.find(fused);
    if (!f) return nullptr;
    if (f->shape.size() != 2 || f->shape[0] < hi || f->nbytes == 0 || f->nbytes % static_cast<size_t>(f->shape[0]))
      throw Error(ErrorKind::format, cat(path(), ": '", fused, "' must be a matrix of at least ", hi, " rows to hold '", name, "'"));
    size_t row = f->nbytes / static_cast<size_t>(f->shape[0]);
    formats::TensorView v = *f;
    v.name = name;
    v.shape[0] = hi - lo;
    v.data = f->data + static_cast<size_t>(lo) * row;
    v.nbytes = static_cast<size_t>(hi - lo) * row;
    v.file_offset = f->file_offset + static_cast<uint64_t>(lo) * row;
    return &views_.emplace(name, std::move(v)).first->second;
  }

 private:
  // The fused tensor a split name lives in and its rows [lo, hi), or "" when it is not split.
  std::tuple<std::string, int64_t, int64_t> locate(const std::string& name) const {
    const int64_t q = spec_.num_heads * spec_.head_dim, kv = spec_.num_kv_heads * spec_.head_dim, ff = spec_.intermediate_size;
    auto ends = [&](const char* suffix) {
      std::string s = suffix;
      return name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0 ? name.substr(0, name.size() - s.size()) : std::string();
    };
    if (auto p = ends("self_attn.q_proj.weight"); !p.empty()) return {p + "self_attn.qkv_proj.weight", 0, q};
    if (auto p = ends("self_attn.k_proj.weight"); !p.empty()) return {p + "self_attn.qkv_proj.weight", q, q + kv};
    if (auto p = ends("self_attn.v_proj.weight"); !p.empty()) return {p + "self_attn.qkv_proj.weight", q + kv, q + 2 * kv};
    if (auto p = ends("mlp.gate_proj.weight"); !p.empty()) return {p + "mlp.gate_up_proj.weight", 0, ff};
    if (auto p = ends("mlp.up_proj.weight"); !p.empty()) return {p + "mlp.gate_up_proj.weight", ff, 2 * ff};
    return {"", 0, 0};
  }
  const formats::WeightSource& inner_;
  const LlamaSpec& spec_;
  mutable std::mutex mu_;
  mutable std::map<std::string, formats::TensorView> views_;
};

}  // namespace

LlamaWeights load_llama_weights(const formats::WeightSource& file, const LlamaSpec& spec, const std::string& precision) {
  FusedRowsSource fused(file, spec);
  const formats::WeightSource& src = spec.arch == "phi3" ? static_cast<const formats::WeightSource&>(fused) : file;
  if (precision != "as-stored" && precision != "f32" && precision != "bf16")
    throw Error(ErrorKind::invalid_argument, cat("precision '", precision, "' is not supported for llama weights (as-stored, f32 or bf16)"));
  const bool as_stored = precision == "as-stored";
  // Gemma's Hugging Face norms hold w and multiply by 1 + w; GGUF files (llama.cpp's converter)
  // already hold 1 + w, which is what the graph multiplies by.
  const bool gemma_offset = is_gemma(spec) && std::string(src.format()) != "gguf";
  LlamaWeights w;
  // Packed matrices are copied into one block on huge pages (unless RLX_MMAP_WEIGHTS): decode
  // streams all of them every token, and per-matrix blocks of 1-3 MB would mostly miss out.
  std::shared_ptr<void> block;
  size_t block_used = 0, block_size = 0;
  if (as_stored && !flags().RLX_MMAP_WEIGHTS) {
    size_t total = 0;
    for (const auto& [name, shape] : llama_weight_shapes(spec)) {
      const TensorView* v = src.find(name);
      if (v && is_matrix(shape) && formats::block_type_of(v->type)) total += (v->nbytes + 63) / 64 * 64;
    }
    block_size = total;
    if (total) block = host_alloc(total, false, cat("the quantized weights of ", src.path()).c_str());
  }
  for (const auto& [name, shape] : llama_weight_shapes(spec)) {
    const TensorView* v = src.find(name);
    if (!v) {
      if (Tensor stacked = stack_experts(src, name, shape); stacked.defined()) {
        LlamaWeight lw;
        lw.shape = shape;
        lw.dense = precision == "bf16" ? f32_to_bf16_tensor(stacked) : stacked;
        w[name] = std::move(lw);
        continue;
      }
    }
    // Some tied checkpoints store only lm_head, some untied exports only the embedding.
    if (!v) missing(src.path(), src.stored_name(name), src.count());
    check_shape(src.path(), *v, shape);
    LlamaWeight lw;
    lw.shape = shape;
    auto bt = formats::block_type_of(v->type);
    if (as_stored && is_matrix(shape) && bt) {
      // packed as the file stores it: quantized blocks, f16 or bf16 rows ([E, rows, row bytes]
      // for a stack of experts)
      int64_t rb = *quant::row_bytes(*bt, shape.back());
      lw.type = *bt;
      std::vector<int64_t> ps(shape.begin(), shape.end() - 1);
      ps.push_back(rb);
      size_t bytes = static_cast<size_t>(shape.size() == 3 ? shape[0] * shape[1] * rb : shape[0] * rb);
      if (block && bytes <= v->nbytes && block_used + bytes <= block_size) {
        auto* dst = static_cast<uint8_t*>(block.get()) + block_used;
        std::memcpy(dst, v->data, bytes);
        block_used += (bytes + 63) / 64 * 64;
        lw.packed = Tensor::wrap(DType::u8, ps, dst, block);
      } else {
        lw.packed = Tensor::wrap(DType::u8, ps, const_cast<uint8_t*>(v->data), v->owner);
      }
    } else if (!formats::can_dequantize(v->type)) {
      throw Error(ErrorKind::unsupported, cat(src.path(), ": tensor '", v->name, "' uses ", v->type_name(), ", which RLX cannot decode yet"));
    } else if (!as_stored && formats::weight_type_is_quantized(v->type)) {
      throw Error(ErrorKind::unsupported, cat(src.path(), ": tensor '", v->name, "' is ", v->type_name(), "; expected F32, BF16 or F16"));
    } else if (!is_matrix(shape) || precision != "bf16") {
      lw.dense = to_f32(*v);  // norms and biases always f32
      if (gemma_offset && is_norm(name)) lw.dense = plus_one(lw.dense);
    } else {
      lw.dense = v->type == WeightType::bf16 ? formats::to_tensor(*v) : f32_to_bf16_tensor(to_f32(*v));  // bf16 checkpoints stay zero-copy
    }
    w[name] = std::move(lw);
  }
  return w;
}

std::vector<float> random_llama_tensor(const LlamaSpec&, uint64_t seed, const std::string& name, int64_t numel, double stddev) {
  std::vector<float> v(static_cast<size_t>(numel));
  if (is_norm(name) && name.find("weight") != std::string::npos) {
    std::fill(v.begin(), v.end(), 1.0f);
    return v;
  }
  // Uniform on [-a, a] has standard deviation a/√3.
  float a = static_cast<float>(stddev * std::sqrt(3.0));
  uint64_t state = seed * 0x9e3779b97f4a7c15ull + name_hash(name);
  for (auto& x : v) {
    state += 0x9e3779b97f4a7c15ull;
    float u = static_cast<float>(mix(state) >> 40) * (1.0f / 16777216.0f);
    x = (2 * u - 1) * a;
  }
  return v;
}

LlamaWeights random_llama_weights(const LlamaSpec& spec, uint64_t seed, DType dtype, double stddev) {
  if (dtype != DType::f32 && dtype != DType::bf16)
    throw Error(ErrorKind::invalid_argument, cat("random llama weights are f32 or bf16, not ", dtype_name(dtype)));
  LlamaWeights w;
  for (const auto& [name, shape] : llama_weight_shapes(spec)) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    std::vector<float> v = random_llama_tensor(spec, seed, name, n, stddev);
    LlamaWeight lw;
    lw.shape = shape;
    lw.dense = Tensor::from_vector(v, shape);
    if (dtype == DType::bf16 && is_matrix(shape)) lw.dense = f32_to_bf16_tensor(lw.dense);
    w[name] = std::move(lw);
  }
  return w;
}

void write_llama_gguf(const std::string& path, const LlamaSpec& spec,
                      const std::function<std::vector<float>(const std::string&, const std::vector<int64_t>&)>& tensor,
                      const GgufExportOptions& o) {
  validate_llama_spec(spec);
  formats::GgufWriter gw;
  const std::string a = spec.arch + ".";
  auto u32 = [](int64_t v) { return GgufValue(static_cast<uint32_t>(v)); };
  gw.set("general.architecture", spec.arch);
  gw.set("general.name", o.name);
  gw.set(a + "context_length", u32(spec.max_position_embeddings > 0 ? spec.max_position_embeddings : 4096));
  gw.set(a + "embedding_length", u32(spec.hidden_size));
  gw.set(a + "block_count", u32(spec.num_layers));
  gw.set(a + "feed_forward_length", u32(spec.intermediate_size));
  gw.set(a + "attention.head_count", u32(spec.num_heads));
  gw.set(a + "attention.head_count_kv", u32(spec.num_kv_heads));
  gw.set(a + "attention.key_length", u32(spec.head_dim));
  gw.set(a + "attention.value_length", u32(spec.head_dim));
  gw.set(a + "attention.layer_norm_rms_epsilon", static_cast<float>(spec.rms_norm_eps));
  gw.set(a + "rope.freq_base", static_cast<float>(spec.rope_theta));
  if (spec.arch == "phi3") gw.set(a + "rope.dimension_count", u32(spec.head_dim));
  if (spec.sliding_window) gw.set(a + "attention.sliding_window", u32(*spec.sliding_window));
  if (spec.num_experts > 0) {
    if (spec.arch != "qwen3moe") throw Error(ErrorKind::unsupported, cat("GGUF export: experts in a ", spec.arch, " model (only qwen3moe has them)"));
    for (int64_t l = 0; l < spec.num_layers; ++l)
      if (!layer_is_moe(spec, l))
        throw Error(ErrorKind::unsupported, cat("GGUF export: layer ", l, " is dense; llama.cpp's qwen3moe makes every layer sparse"));
    if (!spec.norm_topk_prob) throw Error(ErrorKind::unsupported, "GGUF export: llama.cpp's qwen3moe always renormalizes the chosen experts' weights");
    gw.set(a + "expert_count", u32(spec.num_experts));
    gw.set(a + "expert_used_count", u32(spec.experts_per_token));
    gw.set(a + "expert_feed_forward_length", u32(spec.expert_intermediate_size));
  }
  if (spec.arch == "gemma2" || spec.arch == "gemma3") {
    // llama.cpp's keys; the scale it derives from the sizes must be the model's
    double llama_cpp_scale = llama_cpp_gemma_attention_scale(spec);
    double scale = spec.attn_scale != 0 ? spec.attn_scale : 1.0 / std::sqrt(static_cast<double>(spec.head_dim));
    if (std::fabs(scale - llama_cpp_scale) > 1e-9 * llama_cpp_scale)
      throw Error(ErrorKind::unsupported, cat("GGUF export: ", spec.arch, " with attention scale ", scale, " cannot be stored: GGUF has no key for it and llama.cpp derives ",
                                              llama_cpp_scale, " from the sizes"));
    if (spec.arch == "gemma2" || spec.attn_softcap != 0) gw.set(a + "attn_logit_softcapping", static_cast<float>(spec.attn_softcap));
    if (spec.arch == "gemma2" || spec.final_softcap != 0) gw.set(a + "final_logit_softcapping", static_cast<float>(spec.final_softcap));
    if (spec.sliding_window) {
      // llama.cpp's gemma2/gemma3 read the pattern only as a period p (layer l slides when
      // l % p < p - 1) and ignore an array of flags: write the period, or refuse.
      std::optional<int64_t> period;
      for (int64_t p = 1; p <= spec.num_layers + 1 && !period; ++p) {
        bool fits = true;
        for (int64_t l = 0; l < spec.num_layers && fits; ++l) fits = layer_slides(spec, l) == (l % p < p - 1);
        if (fits) period = p;
      }
      if (!period)
        throw Error(ErrorKind::unsupported, cat("GGUF export: ", spec.arch, "'s sliding layers are not every layer but each p-th (l % p < p - 1), the only pattern llama.cpp reads"));
      gw.set(a + "attention.sliding_window_pattern", u32(*period));
      gw.set(a + "rope.freq_base_swa", static_cast<float>(spec.rope_local_theta.value_or(spec.rope_theta)));
    }
  } else if (spec.attn_scale != 0 || spec.attn_softcap != 0 || spec.final_softcap != 0 || !spec.sliding_layers.empty() || spec.rope_local_theta) {
    throw Error(ErrorKind::unsupported, cat("GGUF export: ", spec.arch, " has no GGUF keys for attention scale, soft-capping or per-layer windows"));
  }
  if (o.tokenizer_json) {
    nlohmann::json tj = formats::parse_json_checked(formats::read_text_file(*o.tokenizer_json, 64u << 20), *o.tokenizer_json, 64u << 20, 64);
    const auto& model = tj.at("model");
    std::vector<std::string> tokens(static_cast<size_t>(spec.vocab_size));
    std::vector<int32_t> types(tokens.size(), 5);  // unused until named
    for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = cat("[PAD", i, "]");
    for (const auto& [tok, id] : model.at("vocab").items()) {
      auto i = id.get<int64_t>();
      if (i >= 0 && i < spec.vocab_size) tokens[static_cast<size_t>(i)] = tok, types[static_cast<size_t>(i)] = 1;
    }
    if (tj.contains("added_tokens"))
      for (const auto& t : tj["added_tokens"]) {
        auto i = t.at("id").get<int64_t>();
        if (i < 0 || i >= spec.vocab_size) continue;
        tokens[static_cast<size_t>(i)] = t.at("content").get<std::string>();
        types[static_cast<size_t>(i)] = t.value("special", false) ? 3 : 4;
      }
    // A SentencePiece BPE (byte fallback, "▁" for spaces) goes as llama.cpp's "llama" model:
    // pieces with scores (−id: the order its merges were made in) and no merges; a byte-level
    // BPE as "gpt2" with its merges.
    bool sentencepiece = model.value("byte_fallback", false);
    gw.set("tokenizer.ggml.tokens", formats::gguf_array(tokens));
    if (sentencepiece) {
      std::vector<float> scores(tokens.size(), 0.0f);
      for (size_t i = 0; i < tokens.size(); ++i) {
        const std::string& t = tokens[i];
        bool byte = t.size() == 6 && t.compare(0, 3, "<0x") == 0 && t[5] == '>';
        if (byte) types[i] = 6;
        else if (types[i] == 1) scores[i] = -static_cast<float>(i);
        if (model.contains("unk_token") && model["unk_token"].is_string() && t == model["unk_token"].get<std::string>()) {
          types[i] = 2;
          gw.set("tokenizer.ggml.unknown_token_id", u32(static_cast<int64_t>(i)));
        }
      }
      gw.set("tokenizer.ggml.model", "llama");
      gw.set("tokenizer.ggml.scores", formats::gguf_array_of(formats::GgufType::f32, scores));
    } else {
      std::vector<std::string> merges;
      for (const auto& m : model.at("merges"))
        merges.push_back(m.is_string() ? m.get<std::string>() : cat(m.at(0).get<std::string>(), " ", m.at(1).get<std::string>()));
      gw.set("tokenizer.ggml.model", "gpt2");
      gw.set("tokenizer.ggml.pre", spec.arch == "llama" ? "llama-bpe" : "qwen2");
      gw.set("tokenizer.ggml.merges", formats::gguf_array(merges));
    }
    gw.set("tokenizer.ggml.token_type", formats::gguf_array_of(formats::GgufType::i32, types));
    if (!spec.eos_token_ids.empty()) gw.set("tokenizer.ggml.eos_token_id", u32(spec.eos_token_ids[0]));
    if (spec.bos_token_id) gw.set("tokenizer.ggml.bos_token_id", u32(*spec.bos_token_id));
    gw.set("tokenizer.ggml.add_bos_token", (spec.arch == "llama" || sentencepiece) && spec.bos_token_id.has_value());
  }
  if (o.chat_template) gw.set("tokenizer.chat_template", *o.chat_template);
  if (!spec.rope_long_inv_freq.empty()) {
    // LongRoPE as llama.cpp's converter writes it: the factors (base / frequency) of each set
    std::vector<float> base = base_inv_freq(spec.rope_theta, spec.head_dim), lf(base.size()), sf(base.size());
    for (size_t i = 0; i < base.size(); ++i) {
      lf[i] = base[i] / spec.rope_long_inv_freq[i];
      sf[i] = base[i] / spec.rope_inv_freq[i];
    }
    gw.add_tensor_f32("rope_factors_long.weight", {spec.head_dim / 2}, lf.data(), WeightType::f32);
    gw.add_tensor_f32("rope_factors_short.weight", {spec.head_dim / 2}, sf.data(), WeightType::f32);
    gw.set(a + "rope.scaling.original_context_length", u32(spec.rope_long_after));
    gw.set(a + "rope.scaling.attn_factor", static_cast<float>(spec.rope_attention_factor));
  } else if (!spec.rope_inv_freq.empty()) {
    // A scaled RoPE as llama.cpp stores it: one divisor for all frequencies (linear) as
    // rope.scaling keys — the only form its gemma3 reads — else per-frequency divisors of the
    // base frequencies as rope_freqs (llama3).
    std::vector<float> base = base_inv_freq(spec.rope_theta, spec.head_dim), factors(base.size());
    for (size_t i = 0; i < base.size(); ++i) factors[i] = base[i] / spec.rope_inv_freq[i];
    bool uniform = std::all_of(factors.begin(), factors.end(), [&](float f) { return std::fabs(f - factors[0]) <= 1e-6f * factors[0]; });
    if (uniform) {
      gw.set(a + "rope.scaling.type", "linear");
      gw.set(a + "rope.scaling.factor", factors[0]);
    } else {
      gw.add_tensor_f32("rope_freqs.weight", {spec.head_dim / 2}, factors.data(), WeightType::f32);
    }
  }
  auto ends_with = [](const std::string& s, const char* suffix) {
    std::string x = suffix;
    return s.size() >= x.size() && s.compare(s.size() - x.size(), x.size(), x) == 0;
  };
  for (auto [name, shape] : llama_weight_shapes(spec)) {
    std::vector<float> v;
    if (spec.arch == "phi3" && (ends_with(name, "k_proj.weight") || ends_with(name, "v_proj.weight") || ends_with(name, "mlp.up_proj.weight")))
      continue;  // written inside the fused matrix of their layer
    if (spec.arch == "phi3" && (ends_with(name, "q_proj.weight") || ends_with(name, "gate_proj.weight"))) {
      // llama.cpp's phi3 layout: q, k, v rows in attn_qkv; gate then up rows in ffn_up
      bool attn = ends_with(name, "q_proj.weight");
      std::string stem = name.substr(0, name.size() - std::string(attn ? "q_proj.weight" : "gate_proj.weight").size());
      std::vector<std::string> parts = attn ? std::vector<std::string>{stem + "q_proj.weight", stem + "k_proj.weight", stem + "v_proj.weight"}
                                             : std::vector<std::string>{stem + "gate_proj.weight", stem + "up_proj.weight"};
      int64_t rows = 0;
      for (const std::string& part : parts) {
        std::vector<int64_t> ps = {part.find("k_proj") != std::string::npos || part.find("v_proj") != std::string::npos ? spec.num_kv_heads * spec.head_dim : shape[0], shape[1]};
        std::vector<float> x = tensor(part, ps);
        v.insert(v.end(), x.begin(), x.end());
        rows += ps[0];
      }
      name = stem + (attn ? "qkv_proj.weight" : "gate_up_proj.weight");
      shape = {rows, shape[1]};
    } else {
      v = tensor(name, shape);
    }
    WeightType t = WeightType::f32;
    if (is_matrix(shape) && !is_router(name)) {
      t = o.matrix_type;
      t = k_quant_mix_type(spec, name, t, o.k_quant_mix);
      // llama.cpp's fallbacks when rows do not hold whole blocks.
      int64_t k = shape.back();
      if (k % formats::weight_type_block_elems(t)) t = WeightType::q8_0;
      if (k % formats::weight_type_block_elems(t)) t = WeightType::f16;
      if (spec.arch == "llama" && (name.find("q_proj") != std::string::npos || name.find("k_proj") != std::string::npos)) {
        int64_t heads = name.find("q_proj") != std::string::npos ? spec.num_heads : spec.num_kv_heads;
        v = permute_rows(v, shape[0], shape[1], heads);
      }
    } else if (spec.arch == "llama" && (name.find("q_proj.bias") != std::string::npos || name.find("k_proj.bias") != std::string::npos)) {
      int64_t heads = name.find("q_proj") != std::string::npos ? spec.num_heads : spec.num_kv_heads;
      v = permute_rows(v, shape[0], 1, heads);
    }
    const float* importance = nullptr;
    if (o.importance && is_matrix(shape) && shape.size() == 2) {
      auto it = o.importance->find(name);
      if (it != o.importance->end() && static_cast<int64_t>(it->second.size()) == shape.back()) importance = it->second.data();
    }
    gw.add_tensor_f32(formats::gguf_tensor_name(name, spec.arch), shape, v.data(), t, importance);
  }
  gw.write(path);
}

void write_llama_gguf(const std::string& path, const LlamaSpec& spec, const LlamaWeights& weights, const GgufExportOptions& o) {
  write_llama_gguf(
      path, spec,
      [&](const std::string& name, const std::vector<int64_t>&) {
        auto it = weights.find(name);
        if (it == weights.end()) throw Error(ErrorKind::invalid_argument, cat("GGUF export: weight '", name, "' was not provided"));
        if (it->second.is_packed()) throw Error(ErrorKind::unsupported, cat("GGUF export: weight '", name, "' is already packed"));
        Tensor c = it->second.dense.dtype() == DType::f32 ? it->second.dense.contiguous() : Tensor();
        if (!c.defined()) {
          std::vector<double> d = it->second.dense.to_f64();
          return std::vector<float>(d.begin(), d.end());
        }
        return std::vector<float>(c.data_as<float>(), c.data_as<float>() + c.numel());
      },
      o);
}

}  // namespace rlx::models
