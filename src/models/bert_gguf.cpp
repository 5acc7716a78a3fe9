#include "models/bert_gguf.h"

#include <cstring>

#include "formats/gguf.h"
#include "formats/weight_source.h"
#include "models/bert_weights.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::models {

namespace {

using formats::GgufFile;
using formats::GgufValue;

// Hugging Face's BertModel name (canonical, no prefix) → llama.cpp's.
std::string gguf_bert_name(const std::string& hf) {
  static const std::pair<const char*, const char*> kTop[] = {
      {"embeddings.word_embeddings.weight", "token_embd.weight"},
      {"embeddings.position_embeddings.weight", "position_embd.weight"},
      {"embeddings.token_type_embeddings.weight", "token_types.weight"},
      {"embeddings.LayerNorm.weight", "token_embd_norm.weight"},
      {"embeddings.LayerNorm.bias", "token_embd_norm.bias"},
  };
  static const std::pair<const char*, const char*> kLayer[] = {
      {"attention.self.query.", "attn_q."},        {"attention.self.key.", "attn_k."},
      {"attention.self.value.", "attn_v."},        {"attention.output.dense.", "attn_output."},
      {"attention.output.LayerNorm.", "attn_output_norm."}, {"intermediate.dense.", "ffn_up."},
      {"output.dense.", "ffn_down."},              {"output.LayerNorm.", "layer_output_norm."},
  };
  for (const auto& [h, g] : kTop)
    if (hf == h) return g;
  const std::string p = "encoder.layer.";
  if (hf.compare(0, p.size(), p) != 0) return {};
  size_t dot = hf.find('.', p.size());
  if (dot == std::string::npos) return {};
  std::string layer = hf.substr(p.size(), dot - p.size()), rest = hf.substr(dot + 1);
  for (const auto& [h, g] : kLayer) {
    std::string hs = h;
    if (rest.compare(0, hs.size(), hs) == 0) return "blk." + layer + "." + g + rest.substr(hs.size());
  }
  return {};
}

class BertGgufSource : public formats::WeightSource {
 public:
  explicit BertGgufSource(const GgufFile& f) : f_(f) {}
  const std::string& path() const override { return f_.path; }
  const char* format() const override { return "gguf"; }
  const formats::TensorView* find(const std::string& name) const override {
    std::string g = gguf_bert_name(name);
    return g.empty() ? nullptr : f_.find_tensor(g);
  }
  std::string stored_name(const std::string& name) const override {
    std::string g = gguf_bert_name(name);
    return g.empty() ? name : g;
  }
  size_t count() const override { return f_.tensors.size(); }
  const std::string& stored_name_at(size_t i) const override { return f_.tensors[i].name; }

 private:
  const GgufFile& f_;
};

int64_t key_size(const GgufFile& f, const std::string& key, std::optional<int64_t> def = std::nullopt) {
  const GgufValue* v = f.find(key);
  if (!v) {
    if (def) return *def;
    throw Error(ErrorKind::format, cat(f.path, ": GGUF key ", key, " is missing"));
  }
  auto x = v->as_int();
  if (!x || *x <= 0 || *x > (int64_t{1} << 32)) throw Error(ErrorKind::format, cat(f.path, ": GGUF key ", key, " must be a positive size, found ", v->summary()));
  return *x;
}

}  // namespace

BertModel load_bert_gguf(const std::string& path) {
  GgufFile f = formats::read_gguf(path);
  const GgufValue* arch = f.find("general.architecture");
  if (!arch || !arch->as_string()) throw Error(ErrorKind::format, cat(path, ": no general.architecture in the GGUF metadata"));
  if (*arch->as_string() != "bert")
    throw Error(ErrorKind::unsupported, cat(path, ": GGUF architecture '", *arch->as_string(), "' is not a BERT encoder (RLX embeds with \"bert\")"));
  BertModel m;
  m.dir = path;
  BertSpec& s = m.spec;
  s.hidden_size = key_size(f, "bert.embedding_length");
  s.num_layers = key_size(f, "bert.block_count");
  s.intermediate_size = key_size(f, "bert.feed_forward_length");
  s.num_heads = key_size(f, "bert.attention.head_count");
  s.max_position_embeddings = key_size(f, "bert.context_length", 512);
  s.type_vocab_size = key_size(f, "tokenizer.ggml.token_type_count", 2);
  if (const GgufValue* e = f.find("bert.attention.layer_norm_epsilon"))
    if (auto x = e->as_double()) s.layer_norm_eps = *x;
  const formats::TensorView* emb = f.find_tensor("token_embd.weight");
  if (!emb || emb->shape.size() != 2) throw Error(ErrorKind::format, cat(path, ": no 2-D token_embd.weight"));
  s.vocab_size = emb->shape[0];
  if (const formats::TensorView* pe = f.find_tensor("position_embd.weight"); pe && pe->shape.size() == 2) s.max_position_embeddings = pe->shape[0];
  if (const formats::TensorView* tt = f.find_tensor("token_types.weight"); tt && tt->shape.size() == 2) s.type_vocab_size = tt->shape[0];
  validate_bert_spec(s);
  // llama.cpp's pooling types: 0 none, 1 mean, 2 cls, 3 last, 4 rank
  int64_t pooling = 1;
  if (const GgufValue* p = f.find("bert.pooling_type"))
    if (auto x = p->as_int()) pooling = *x;
  if (pooling != 1 && pooling != 2)
    throw Error(ErrorKind::unsupported, cat(path, ": bert.pooling_type ", pooling, " is not supported (1 mean and 2 cls are)"));
  m.layout.transformer_dir = path;
  m.layout.pooling.modes = {pooling == 1 ? PoolingMode::mean : PoolingMode::cls};
  m.layout.pooling.normalize = true;
  m.layout.description = cat("GGUF bert.pooling_type ", pooling == 1 ? "mean" : "cls", ", L2-normalized");
  BertGgufSource source(f);
  m.weights = load_bert_weights(source, s);
  m.max_tokens = s.max_tokens();
  return m;
}

void write_bert_gguf(const std::string& path, const BertModel& m, const text::Tokenizer& tokenizer) {
  const BertSpec& s = m.spec;
  if (m.layout.pooling.modes.size() != 1 || (m.layout.pooling.modes[0] != PoolingMode::mean && m.layout.pooling.modes[0] != PoolingMode::cls))
    throw Error(ErrorKind::unsupported, "GGUF holds one pooling, mean or cls");
  if (s.position_offset != 0) throw Error(ErrorKind::unsupported, "GGUF's bert architecture has no RoBERTa position offset");
  if (std::string(tokenizer.model_type()) != "WordPiece") throw Error(ErrorKind::unsupported, "a BERT GGUF carries a WordPiece tokenizer");
  formats::GgufWriter gw;
  auto u32 = [](int64_t v) { return GgufValue(static_cast<uint32_t>(v)); };
  gw.set("general.architecture", std::string("bert"));
  gw.set("bert.context_length", u32(s.max_position_embeddings));
  gw.set("bert.embedding_length", u32(s.hidden_size));
  gw.set("bert.feed_forward_length", u32(s.intermediate_size));
  gw.set("bert.block_count", u32(s.num_layers));
  gw.set("bert.attention.head_count", u32(s.num_heads));
  gw.set("bert.attention.layer_norm_epsilon", static_cast<float>(s.layer_norm_eps));
  gw.set("bert.attention.causal", false);
  gw.set("bert.pooling_type", u32(m.layout.pooling.modes[0] == PoolingMode::mean ? 1 : 2));
  gw.set("tokenizer.ggml.token_type_count", u32(s.type_vocab_size));
  // The WordPiece vocabulary in llama.cpp's phantom-space form: special tokens as they are,
  // "##piece" as "piece", every other token after a "▁".
  const text::SpecialTokenIds& sp = tokenizer.special_ids();
  std::vector<std::string> tokens(static_cast<size_t>(s.vocab_size));
  std::vector<int32_t> types(tokens.size(), 1);
  for (int64_t i = 0; i < s.vocab_size; ++i) {
    auto t = tokenizer.id_to_token(static_cast<int32_t>(i));
    if (!t) throw Error(ErrorKind::invalid_argument, cat("GGUF export: the tokenizer has no token ", i, " of the model's ", s.vocab_size));
    tokens[static_cast<size_t>(i)] = t->rfind("##", 0) == 0 ? t->substr(2) : "\u2581" + *t;
  }
  for (auto [id, key] : {std::pair{sp.cls, "tokenizer.ggml.cls_token_id"}, {sp.sep, "tokenizer.ggml.seperator_token_id"},
                         {sp.unk, "tokenizer.ggml.unknown_token_id"}, {sp.pad, "tokenizer.ggml.padding_token_id"},
                         {sp.mask, "tokenizer.ggml.mask_token_id"}}) {
    if (!id || *id < 0 || *id >= s.vocab_size) continue;
    tokens[static_cast<size_t>(*id)] = *tokenizer.id_to_token(*id);
    types[static_cast<size_t>(*id)] = 3;
    gw.set(key, u32(*id));
  }
  // llama.cpp starts a WordPiece input with its BOS (defaulting to bert-base's [CLS], 101):
  // name the model's own [CLS] so any vocabulary gets it
  if (sp.cls) gw.set("tokenizer.ggml.bos_token_id", u32(*sp.cls));
  gw.set("tokenizer.ggml.model", std::string("bert"));
  gw.set("tokenizer.ggml.tokens", formats::gguf_array(tokens));
  gw.set("tokenizer.ggml.token_type", formats::gguf_array_of(formats::GgufType::i32, types));
  for (const auto& [name, shape] : bert_weight_shapes(s)) {
    auto it = m.weights.find(name);
    if (it == m.weights.end()) throw Error(ErrorKind::invalid_argument, cat("GGUF export: weight '", name, "' is missing"));
    Tensor c = it->second.contiguous();
    std::vector<double> d = c.to_f64();
    std::vector<float> v(d.begin(), d.end());
    gw.add_tensor_f32(gguf_bert_name(name), shape, v.data(), formats::WeightType::f32);
  }
  gw.write(path);
}

}  // namespace rlx::models
