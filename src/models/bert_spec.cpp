#include "models/bert_spec.h"

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::models {

namespace {

bool known_activation(const std::string& a) {
  return a == "gelu" || a == "gelu_new" || a == "gelu_pytorch_tanh" || a == "relu" || a == "silu" || a == "swish";
}

}  // namespace

BertSpec bert_spec_from_config(const formats::HfConfig& c, const std::string& source) {
  bool roberta_like = c.model_type == "roberta" || c.model_type == "xlm-roberta" || c.model_type == "camembert";
  if (c.model_type != "bert" && !roberta_like)
    throw Error(ErrorKind::unsupported,
                cat(source, ": model_type '", c.model_type,
                    "' is not a BERT layout RLX builds yet (supported: bert, roberta, xlm-roberta, camembert)"));
  if (c.position_embedding_type != "absolute")
    throw Error(ErrorKind::unsupported, cat(source, ": position_embedding_type '", c.position_embedding_type,
                                            "' is not supported (only \"absolute\")"));
  // ELECTRA-style checkpoints project a smaller embedding up to the hidden size.
  if (auto it = c.raw.find("embedding_size"); it != c.raw.end() && it->is_number_integer() &&
                                              it->get<int64_t>() != c.hidden_size)
    throw Error(ErrorKind::unsupported, cat(source, ": embedding_size ", it->get<int64_t>(), " differs from hidden_size ",
                                            c.hidden_size, "; embedding projections are not supported"));
  BertSpec s;
  s.model_type = c.model_type;
  s.vocab_size = c.vocab_size;
  s.hidden_size = c.hidden_size;
  s.num_layers = c.num_hidden_layers;
  s.num_heads = c.num_attention_heads;
  s.intermediate_size = c.intermediate_size;
  s.max_position_embeddings = c.max_position_embeddings;
  s.type_vocab_size = c.type_vocab_size;
  s.position_offset = c.position_offset;
  s.layer_norm_eps = c.norm_eps;
  s.activation = c.hidden_act;
  if (!known_activation(s.activation))
    throw Error(ErrorKind::unsupported, cat(source, ": hidden_act '", s.activation,
                                            "' is not supported (gelu, gelu_new, gelu_pytorch_tanh, relu, silu)"));
  validate_bert_spec(s);
  return s;
}

BertSpec minilm_l6_spec() {
  BertSpec s;
  s.vocab_size = 30522;
  s.hidden_size = 384;
  s.num_layers = 6;
  s.num_heads = 12;
  s.intermediate_size = 1536;
  return s;
}

void validate_bert_spec(const BertSpec& s) {
  auto positive = [](const char* field, int64_t v) {
    if (v <= 0) throw Error(ErrorKind::invalid_argument, cat("BERT spec: ", field, " must be positive, got ", v));
  };
  positive("vocab_size", s.vocab_size);
  positive("hidden_size", s.hidden_size);
  positive("num_layers", s.num_layers);
  positive("num_heads", s.num_heads);
  positive("intermediate_size", s.intermediate_size);
  positive("type_vocab_size", s.type_vocab_size);
  if (s.hidden_size % s.num_heads)
    throw Error(ErrorKind::invalid_argument,
                cat("BERT spec: hidden_size ", s.hidden_size, " is not a multiple of num_heads ", s.num_heads));
  if (s.position_offset < 0 || s.max_tokens() <= 0)
    throw Error(ErrorKind::invalid_argument, cat("BERT spec: max_position_embeddings ", s.max_position_embeddings,
                                                 " leaves no positions after the offset ", s.position_offset));
  if (!known_activation(s.activation))
    throw Error(ErrorKind::invalid_argument, cat("BERT spec: unknown activation '", s.activation, "'"));
}

std::vector<std::pair<std::string, std::vector<int64_t>>> bert_weight_shapes(const BertSpec& s) {
  const int64_t H = s.hidden_size, I = s.intermediate_size;
  std::vector<std::pair<std::string, std::vector<int64_t>>> w = {
      {"embeddings.word_embeddings.weight", {s.vocab_size, H}},
      {"embeddings.position_embeddings.weight", {s.max_position_embeddings, H}},
      {"embeddings.token_type_embeddings.weight", {s.type_vocab_size, H}},
      {"embeddings.LayerNorm.weight", {H}},
      {"embeddings.LayerNorm.bias", {H}},
  };
  for (int64_t l = 0; l < s.num_layers; ++l) {
    std::string p = cat("encoder.layer.", l, ".");
    for (const char* qkv : {"query", "key", "value"}) {
      w.push_back({cat(p, "attention.self.", qkv, ".weight"), {H, H}});
      w.push_back({cat(p, "attention.self.", qkv, ".bias"), {H}});
    }
    w.push_back({p + "attention.output.dense.weight", {H, H}});
    w.push_back({p + "attention.output.dense.bias", {H}});
    w.push_back({p + "attention.output.LayerNorm.weight", {H}});
    w.push_back({p + "attention.output.LayerNorm.bias", {H}});
    w.push_back({p + "intermediate.dense.weight", {I, H}});
    w.push_back({p + "intermediate.dense.bias", {I}});
    w.push_back({p + "output.dense.weight", {H, I}});
    w.push_back({p + "output.dense.bias", {H}});
    w.push_back({p + "output.LayerNorm.weight", {H}});
    w.push_back({p + "output.LayerNorm.bias", {H}});
  }
  return w;
}

}  // namespace rlx::models
