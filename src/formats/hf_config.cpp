#include "formats/hf_config.h"

#include <algorithm>

#include "formats/json_util.h"
#include "formats/mapped_file.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::formats {

namespace {

using json = nlohmann::json;
constexpr size_t kMaxConfigBytes = 16u << 20;
constexpr int64_t kMaxSize = int64_t{1} << 40;  // any real dimension is far below this

const char* const kBertTypes[] = {"bert", "roberta", "xlm-roberta", "camembert", "distilbert", "mpnet", "electra"};
const char* const kLlamaTypes[] = {"llama", "mistral", "qwen2", "qwen3", "qwen3_moe", "phi3", "gemma", "gemma2", "gemma3_text"};

class Fields {
 public:
  Fields(const json& j, std::string source) : j_(j), source_(std::move(source)) {}

  [[noreturn]] void fail(const std::string& key, const std::string& msg) const {
    throw Error(ErrorKind::format, cat(source_, ": \"", key, "\" ", msg));
  }
  bool has(const std::string& key) const { return j_.contains(key); }
  const json* get(const std::string& key) const {
    auto it = j_.find(key);
    return it == j_.end() || it->is_null() ? nullptr : &*it;
  }
  std::optional<int64_t> opt_int(const std::string& key) const {
    const json* v = get(key);
    if (!v) return std::nullopt;
    if (!v->is_number_integer()) fail(key, cat("must be an integer, found ", v->dump()));
    return v->get<int64_t>();
  }
  int64_t size(const std::string& key, std::optional<int64_t> def) const {
    auto v = opt_int(key);
    if (!v && !def) fail(key, "is missing");
    int64_t x = v ? *v : *def;
    if (x <= 0 || x > kMaxSize) fail(key, cat("must be a positive size, found ", x));
    return x;
  }
  std::optional<double> opt_number(const std::string& key) const {
    const json* v = get(key);
    if (!v) return std::nullopt;
    if (!v->is_number()) fail(key, cat("must be a number, found ", v->dump()));
    return v->get<double>();
  }
  double number(const std::string& key, double def) const { return opt_number(key).value_or(def); }
  bool flag(const std::string& key, bool def) const {
    const json* v = get(key);
    if (!v) return def;
    if (!v->is_boolean()) fail(key, cat("must be true or false, found ", v->dump()));
    return v->get<bool>();
  }
  std::string str(const std::string& key, const std::string& def) const {
    const json* v = get(key);
    if (!v) return def;
    if (!v->is_string()) fail(key, cat("must be a string, found ", v->dump()));
    return v->get<std::string>();
  }

 private:
  const json& j_;
  std::string source_;  // by value: callers pass temporaries
};

HfRope parse_rope(const Fields& top, const std::string& source) {
  HfRope r;
  if (auto t = top.opt_number("rope_theta")) r.theta = *t;
  // transformers v5 moves rope settings into "rope_parameters", either one dict or one per
  // attention type ({"full_attention": {...}, "sliding_attention": {...}}); older files use
  // "rope_scaling" for everything but the base.
  for (const char* key : {"rope_scaling", "rope_parameters"}) {
    const json* v = top.get(key);
    if (!v) continue;
    if (!v->is_object()) top.fail(key, "must be an object");
    if (v->contains("full_attention") && (*v)["full_attention"].is_object()) v = &(*v)["full_attention"];
    Fields f(*v, cat(source, " ", key));
    if (auto t = f.opt_number("rope_theta")) r.theta = *t;
    std::string type = f.str("rope_type", f.str("type", ""));
    if (!type.empty()) r.type = type;
    if (auto x = f.opt_number("factor")) r.factor = *x;
    if (auto x = f.opt_number("low_freq_factor")) r.low_freq_factor = *x;
    if (auto x = f.opt_number("high_freq_factor")) r.high_freq_factor = *x;
    if (auto x = f.opt_int("original_max_position_embeddings")) r.original_max_position_embeddings = *x;
    if (auto x = f.opt_number("attention_factor")) r.attention_factor = *x;
    for (auto [name, out] : {std::pair{"long_factor", &r.long_factor}, {"short_factor", &r.short_factor}}) {
      const json* v2 = f.get(name);
      if (!v2) continue;
      if (!v2->is_array() || v2->size() > 4096) f.fail(name, "must be a list of numbers");
      for (const auto& x : *v2) {
        if (!x.is_number() || !(x.get<double>() > 0)) f.fail(name, cat("entries must be positive numbers, found ", x.dump()));
        out->push_back(x.get<double>());
      }
    }
  }
  if (!(r.theta > 0)) top.fail("rope_theta", cat("must be positive, found ", r.theta));
  return r;
}

void parse_bert(const Fields& f, HfConfig& c) {
  bool distil = c.model_type == "distilbert";
  // DistilBERT spells the same sizes differently.
  c.hidden_size = f.size(distil ? "dim" : "hidden_size", 768);
  c.num_hidden_layers = f.size(distil ? "n_layers" : "num_hidden_layers", distil ? 6 : 12);
  c.num_attention_heads = f.size(distil ? "n_heads" : "num_attention_heads", 12);
  c.intermediate_size = f.size(distil ? "hidden_dim" : "intermediate_size", 3072);
  c.hidden_act = f.str(distil ? "activation" : "hidden_act", "gelu");
  c.vocab_size = f.size("vocab_size", 30522);
  c.max_position_embeddings = f.size("max_position_embeddings", 512);
  c.type_vocab_size = distil ? 0 : f.opt_int("type_vocab_size").value_or(2);
  bool roberta_like = c.model_type == "roberta" || c.model_type == "xlm-roberta" || c.model_type == "camembert";
  c.pad_token_id = f.opt_int("pad_token_id").value_or(roberta_like ? 1 : 0);
  c.position_offset = roberta_like ? c.pad_token_id + 1 : 0;
  c.norm_eps = f.number("layer_norm_eps", 1e-12);
  c.position_embedding_type = f.str("position_embedding_type", "absolute");
  if (c.hidden_size % c.num_attention_heads != 0)
    f.fail("hidden_size", cat(c.hidden_size, " is not a multiple of num_attention_heads ", c.num_attention_heads));
  c.num_key_value_heads = c.num_attention_heads;
  c.head_dim = c.hidden_size / c.num_attention_heads;
  c.tie_word_embeddings = f.flag("tie_word_embeddings", true);
}

// Gemma's extras: GeGLU, query_pre_attn_scalar, soft-capping, which layers slide, the sliding
// layers' RoPE base. Defaults are transformers' Gemma*Config ones.
void parse_gemma(const Fields& f, HfConfig& c) {
  const bool g2 = c.model_type == "gemma2", g3 = c.model_type == "gemma3_text";
  // Gemma's activation is hidden_activation; transformers ignores hidden_act ("gelu" in the
  // original configs) and uses the tanh approximation.
  c.hidden_act = f.str("hidden_activation", "gelu_pytorch_tanh");
  if (c.hidden_act != "gelu_pytorch_tanh")
    f.fail("hidden_activation", cat("'", c.hidden_act, "' is not supported (Gemma models use gelu_pytorch_tanh)"));
  c.tie_word_embeddings = f.flag("tie_word_embeddings", true);
  if (!g2 && !g3) return;
  c.query_pre_attn_scalar = f.number("query_pre_attn_scalar", 256);
  if (!(*c.query_pre_attn_scalar > 0)) f.fail("query_pre_attn_scalar", "must be positive");
  auto cap = [&](const char* key, std::optional<double> def) -> std::optional<double> {
    const json* v = f.get(key);
    if (!v) return f.has(key) ? std::nullopt : def;  // an explicit null turns capping off
    double x = f.number(key, 0);
    if (!(x > 0)) f.fail(key, cat("must be positive or null, found ", x));
    return x;
  };
  c.attn_logit_softcapping = cap("attn_logit_softcapping", g2 ? std::optional<double>(50.0) : std::nullopt);
  c.final_logit_softcapping = cap("final_logit_softcapping", g2 ? std::optional<double>(30.0) : std::nullopt);
  c.sliding_window = f.size("sliding_window", 4096);
  if (const json* t = f.get("layer_types")) {
    if (!t->is_array() || static_cast<int64_t>(t->size()) != c.num_hidden_layers)
      f.fail("layer_types", cat("must list one type per layer (", c.num_hidden_layers, ")"));
    for (const auto& x : *t) {
      std::string s = x.is_string() ? x.get<std::string>() : "";
      if (s != "sliding_attention" && s != "full_attention")
        f.fail("layer_types", cat("entries must be sliding_attention or full_attention, found ", x.dump()));
      c.sliding_layers.push_back(s == "sliding_attention");
    }
  } else {
    // Gemma 2: every other layer from the first; Gemma 3: all but every sliding_window_pattern-th.
    int64_t pattern = g2 ? 2 : f.size("sliding_window_pattern", 6);
    for (int64_t i = 0; i < c.num_hidden_layers; ++i) c.sliding_layers.push_back((i + 1) % pattern != 0);
  }
  if (g3) {
    c.rope_local_theta = f.number("rope_local_base_freq", 10000.0);
    if (const json* rp = f.get("rope_parameters"); rp && rp->is_object() && rp->contains("sliding_attention")) {
      const json& sa = (*rp)["sliding_attention"];
      if (sa.is_object() && sa.contains("rope_theta") && sa["rope_theta"].is_number()) c.rope_local_theta = sa["rope_theta"].get<double>();
    }
    if (!(*c.rope_local_theta > 0)) f.fail("rope_local_base_freq", "must be positive");
  }
}

// Qwen3-MoE's experts (Qwen3MoeConfig's defaults): layer l is sparse unless it is listed in
// mlp_only_layers or (l + 1) is not a multiple of decoder_sparse_step.
void parse_moe(const Fields& f, HfConfig& c) {
  c.num_experts = f.size("num_experts", 128);
  c.num_experts_per_tok = f.size("num_experts_per_tok", 8);
  if (c.num_experts_per_tok > c.num_experts)
    f.fail("num_experts_per_tok", cat(c.num_experts_per_tok, " exceeds num_experts ", c.num_experts));
  c.moe_intermediate_size = f.size("moe_intermediate_size", 768);
  c.norm_topk_prob = f.flag("norm_topk_prob", false);
  int64_t step = f.size("decoder_sparse_step", 1);
  std::vector<bool> dense_only(static_cast<size_t>(c.num_hidden_layers), false);
  if (const json* m = f.get("mlp_only_layers")) {
    if (!m->is_array()) f.fail("mlp_only_layers", "must be a list of layer indices");
    for (const auto& x : *m) {
      if (!x.is_number_integer() || x.get<int64_t>() < 0 || x.get<int64_t>() >= c.num_hidden_layers)
        f.fail("mlp_only_layers", cat("entries must be layer indices below ", c.num_hidden_layers, ", found ", x.dump()));
      dense_only[static_cast<size_t>(x.get<int64_t>())] = true;
    }
  }
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) c.moe_layers.push_back(!dense_only[static_cast<size_t>(l)] && (l + 1) % step == 0);
}

void parse_llama(const Fields& f, const std::string& source, HfConfig& c) {
  bool qwen = c.model_type == "qwen2" || c.model_type == "qwen3" || c.model_type == "qwen3_moe";
  bool gemma = c.model_type.compare(0, 5, "gemma") == 0;
  c.vocab_size = f.size("vocab_size", qwen ? 151936 : gemma ? (c.model_type == "gemma3_text" ? 262208 : 256000) : 32000);
  c.hidden_size = f.size("hidden_size", 4096);
  c.intermediate_size = f.size("intermediate_size", qwen ? 22016 : 11008);
  c.num_hidden_layers = f.size("num_hidden_layers", 32);
  c.num_attention_heads = f.size("num_attention_heads", 32);
  c.num_key_value_heads = f.size("num_key_value_heads", c.num_attention_heads);
  std::optional<int64_t> def_head = c.hidden_size % c.num_attention_heads == 0
                                        ? std::optional<int64_t>(c.hidden_size / c.num_attention_heads)
                                        : std::nullopt;
  if (c.model_type == "qwen3" && !f.opt_int("head_dim")) def_head = 128;
  if (gemma && !f.opt_int("head_dim")) def_head = 256;
  c.head_dim = f.size("head_dim", def_head);
  if (c.num_attention_heads % c.num_key_value_heads != 0)
    f.fail("num_key_value_heads", cat(c.num_key_value_heads, " does not divide num_attention_heads ",
                                      c.num_attention_heads));
  c.max_position_embeddings = f.size("max_position_embeddings", qwen ? 32768 : 2048);
  c.hidden_act = f.str("hidden_act", "silu");
  c.norm_eps = f.number("rms_norm_eps", 1e-6);
  c.rope = parse_rope(f, source);
  c.tie_word_embeddings = f.flag("tie_word_embeddings", false);
  c.attention_bias = c.model_type == "qwen2" ? true : f.flag("attention_bias", false);
  c.qk_norm = c.model_type == "qwen3" || c.model_type == "qwen3_moe" || c.model_type == "gemma3_text";
  // Phi-3 rotates every dimension (Phi-4-mini's partial rotary is another model)
  if (c.model_type == "phi3")
    if (const json* p = f.get("partial_rotary_factor"); p && !p->is_null() && (!p->is_number() || p->get<double>() != 1.0))
      f.fail("partial_rotary_factor", "a partial rotary embedding is not supported (phi3 rotates the whole head)");
  // Phi-3 keeps the pretrained context beside the extended one (LongRoPE's short/long switch)
  if (c.model_type == "phi3" && !c.rope.original_max_position_embeddings)
    if (auto x = f.opt_int("original_max_position_embeddings")) c.rope.original_max_position_embeddings = *x;
  // Mistral and Phi-3 attend through their sliding window whenever the config gives one.
  bool sliding = f.flag("use_sliding_window", c.model_type == "mistral" || c.model_type == "phi3");
  if (sliding)
    if (auto w = f.opt_int("sliding_window")) c.sliding_window = *w;
  c.bos_token_id = f.opt_int("bos_token_id");
  if (const json* e = f.get("eos_token_id")) {
    if (e->is_number_integer()) c.eos_token_ids.push_back(e->get<int64_t>());
    else if (e->is_array())
      for (const auto& x : *e) {
        if (!x.is_number_integer()) f.fail("eos_token_id", "must be an integer or a list of integers");
        c.eos_token_ids.push_back(x.get<int64_t>());
      }
    else f.fail("eos_token_id", "must be an integer or a list of integers");
  }
  if (gemma) parse_gemma(f, c);
  if (c.model_type == "qwen3_moe") parse_moe(f, c);
}

}  // namespace

const char* hf_family_name(HfFamily f) { return f == HfFamily::bert ? "bert" : "llama"; }

HfConfig parse_hf_config(const std::string& text, const std::string& source) {
  json j = parse_json_checked(text, source, kMaxConfigBytes, 32);
  if (!j.is_object()) throw Error(ErrorKind::format, cat(source, ": config.json must be a JSON object"));
  Fields f(j, source);
  HfConfig c;
  c.model_type = f.str("model_type", "");
  if (const json* a = f.get("architectures")) {
    if (!a->is_array()) f.fail("architectures", "must be a list of strings");
    for (const auto& x : *a) {
      if (!x.is_string()) f.fail("architectures", "must be a list of strings");
      c.architectures.push_back(x.get<std::string>());
    }
  }
  if (c.model_type.empty()) f.fail("model_type", "is missing; RLX needs it to pick the architecture");
  auto in = [&](const auto& list) {
    return std::find_if(std::begin(list), std::end(list), [&](const char* t) { return c.model_type == t; }) !=
           std::end(list);
  };
  // "dtype" is the transformers v5 name of "torch_dtype".
  c.dtype = f.str("dtype", f.str("torch_dtype", ""));
  if (in(kBertTypes)) {
    c.family = HfFamily::bert;
    parse_bert(f, c);
  } else if (in(kLlamaTypes)) {
    c.family = HfFamily::llama;
    parse_llama(f, source, c);
  } else {
    throw Error(ErrorKind::unsupported,
                cat(source, ": model_type '", c.model_type, "' is not supported yet; RLX builds ",
                    "bert, roberta, xlm-roberta, camembert, distilbert, mpnet, electra, llama, mistral, qwen2, qwen3, qwen3_moe, phi3, ",
                    "gemma, gemma2 and gemma3_text", c.model_type == "gemma3" ? " (a Gemma 3 vision-language checkpoint: its text model alone is gemma3_text)" : ""));
  }
  c.raw = std::move(j);
  return c;
}

HfConfig read_hf_config(const std::string& path) { return parse_hf_config(read_text_file(path, kMaxConfigBytes), path); }

nlohmann::json hf_config_json(const HfConfig& c) {
  json j = {{"model_type", c.model_type},
            {"family", hf_family_name(c.family)},
            {"architectures", c.architectures},
            {"vocab_size", c.vocab_size},
            {"hidden_size", c.hidden_size},
            {"intermediate_size", c.intermediate_size},
            {"num_hidden_layers", c.num_hidden_layers},
            {"num_attention_heads", c.num_attention_heads},
            {"num_key_value_heads", c.num_key_value_heads},
            {"head_dim", c.head_dim},
            {"max_position_embeddings", c.max_position_embeddings},
            {"hidden_act", c.hidden_act},
            {"norm_eps", c.norm_eps},
            {"dtype", c.dtype}};
  if (c.family == HfFamily::llama) {
    j["rope_theta"] = c.rope.theta;
    j["rope_type"] = c.rope.type;
    if (c.rope.factor != 1.0) j["rope_factor"] = c.rope.factor;
    j["tie_word_embeddings"] = c.tie_word_embeddings;
    j["attention_bias"] = c.attention_bias;
    j["qk_norm"] = c.qk_norm;
    if (c.sliding_window) j["sliding_window"] = *c.sliding_window;
    if (!c.sliding_layers.empty()) j["sliding_layers"] = c.sliding_layers;
    if (c.query_pre_attn_scalar) j["query_pre_attn_scalar"] = *c.query_pre_attn_scalar;
    if (c.attn_logit_softcapping) j["attn_logit_softcapping"] = *c.attn_logit_softcapping;
    if (c.final_logit_softcapping) j["final_logit_softcapping"] = *c.final_logit_softcapping;
    if (c.rope_local_theta) j["rope_local_theta"] = *c.rope_local_theta;
    if (c.num_experts) {
      j["num_experts"] = c.num_experts;
      j["num_experts_per_tok"] = c.num_experts_per_tok;
      j["moe_intermediate_size"] = c.moe_intermediate_size;
      j["norm_topk_prob"] = c.norm_topk_prob;
      j["moe_layers"] = c.moe_layers;
    }
    if (c.bos_token_id) j["bos_token_id"] = *c.bos_token_id;
    j["eos_token_ids"] = c.eos_token_ids;
  } else {
    j["type_vocab_size"] = c.type_vocab_size;
    j["pad_token_id"] = c.pad_token_id;
    j["position_offset"] = c.position_offset;
    j["position_embedding_type"] = c.position_embedding_type;
  }
  return j;
}

}  // namespace rlx::formats
