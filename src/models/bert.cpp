#include "models/bert.h"

#include "models/weight_block.h"

#include <filesystem>

#include "formats/hf_config.h"
#include "formats/safetensors.h"
#include "models/bert_gguf.h"
#include "models/pooling_graph.h"
#include "models/weight_block.h"
#include "ops/builder.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::models {

using ir::Attrs;
using ir::Op;
using ir::ValueId;

namespace {

// Added to the attention scores of padding keys. Finite (unlike -inf) so that even a row with
// no real token stays a number, and large enough that exp() of it is exactly 0.
constexpr double kMaskedScore = -1e30;

class BertEmitter {
 public:
  BertEmitter(ir::Graph& g, const BertSpec& spec, const BertWeights& w) : b_(g), spec_(spec), w_(w) {}

  ValueId weight(const std::string& name) {
    auto it = w_.find(name);
    if (it == w_.end()) throw Error(ErrorKind::invalid_argument, cat("BERT graph: weight '", name, "' was not provided"));
    return b_.constant(it->second);
  }
  ValueId linear(const std::string& name, ValueId x) {
    return b_.emit1(Op::linear, {x, weight(name + ".weight"), weight(name + ".bias")});
  }
  ValueId layer_norm(const std::string& name, ValueId x) {
    return b_.emit1(Op::layer_norm, {x, weight(name + ".weight"), weight(name + ".bias")},
                    Attrs{{"eps", spec_.layer_norm_eps}});
  }
  ValueId activation(ValueId x) {
    const std::string& a = spec_.activation;
    Op op = a == "gelu" ? Op::gelu : a == "relu" ? Op::relu : (a == "silu" || a == "swish") ? Op::silu : Op::gelu_tanh;
    return b_.emit1(op, {x});
  }

  // word + token type + position embeddings (Hugging Face's order of addition), then LayerNorm
  ValueId embeddings(ValueId ids, ValueId types, const Dim& S) {
    b_.set_context("embeddings", "");
    ValueId x = b_.emit1(Op::embedding, {weight("embeddings.word_embeddings.weight"), ids});
    x = b_.add(x, b_.emit1(Op::embedding, {weight("embeddings.token_type_embeddings.weight"), types}));
    Dim off(spec_.position_offset);
    ValueId pos = b_.slice_axis(weight("embeddings.position_embeddings.weight"), 0, off, S + off);  // [S, H]
    x = b_.add(x, pos);
    return layer_norm("embeddings.LayerNorm", x);
  }

  // [B, S, H] → [B, heads, S, head_dim]
  ValueId split_heads(ValueId x, const Dim& B, const Dim& S) {
    return b_.transpose(b_.reshape(x, {B, S, Dim(spec_.num_heads), Dim(spec_.head_dim())}), {0, 2, 1, 3});
  }

  ValueId layer(int64_t l, ValueId x, ValueId bias, const Dim& B, const Dim& S) {
    std::string p = cat("encoder.layer.", l, ".");
    b_.set_context(p + "attention", "");
    ValueId q = split_heads(linear(p + "attention.self.query", x), B, S);
    ValueId k = split_heads(linear(p + "attention.self.key", x), B, S);
    ValueId v = split_heads(linear(p + "attention.self.value", x), B, S);
    ValueId a = b_.emit1(Op::attention, {q, k, v, bias}, Attrs{{"mask", std::string("additive")}});
    a = b_.reshape(b_.transpose(a, {0, 2, 1, 3}), {B, S, Dim(spec_.hidden_size)});
    x = layer_norm(p + "attention.output.LayerNorm", b_.add(linear(p + "attention.output.dense", a), x));
    b_.set_context(p + "ffn", "");
    ValueId h = activation(linear(p + "intermediate.dense", x));
    return layer_norm(p + "output.LayerNorm", b_.add(linear(p + "output.dense", h), x));
  }

  // mask i64[B, S] → f32[B, 1, 1, S]: 0 for tokens, kMaskedScore for padding
  ValueId mask_bias(ValueId mask, const Dim& B, const Dim& S) {
    b_.set_context("attention_mask", "");
    ValueId pad = b_.sub(b_.scalar(DType::f32, 1.0), b_.cast(mask, DType::f32));
    return b_.reshape(b_.mul(pad, b_.scalar(DType::f32, kMaskedScore)), {B, Dim(1), Dim(1), S});
  }

  ops::Builder& builder() { return b_; }

 private:
  ops::Builder b_;
  const BertSpec& spec_;
  const BertWeights& w_;
};

}  // namespace

int64_t pooled_dim(const BertSpec& spec, const PoolingSpec& pooling) {
  return spec.hidden_size * static_cast<int64_t>(pooling.modes.size());
}

ir::Graph build_bert_graph(const BertSpec& spec, const PoolingSpec& pooling, const BertWeights& weights,
                           const BertGraphOptions& options) {
  validate_bert_spec(spec);
  if (pooling.modes.empty()) throw Error(ErrorKind::invalid_argument, "BERT graph: the pooling spec names no mode");
  ir::Graph g;
  g.name = spec.model_type;
  Dim B = Dim::symbol("B"), S = Dim::symbol("S");
  ValueId ids = g.add_input({DType::i64, {B, S}}, "input_ids");
  ValueId mask = g.add_input({DType::i64, {B, S}}, "attention_mask");
  ValueId types = g.add_input({DType::i64, {B, S}}, "token_type_ids");
  BertEmitter e(g, spec, weights);
  ValueId x = e.embeddings(ids, types, S);
  ValueId bias = e.mask_bias(mask, B, S);
  for (int64_t l = 0; l < spec.num_layers; ++l) x = e.layer(l, x, bias, B, S);
  e.builder().set_context("pooling", "");
  ValueId pooled = emit_pooling(e.builder(), x, mask, pooling);
  g.value(pooled).name = "sentence_embedding";
  std::vector<ValueId> outs = {pooled};
  if (options.hidden_states) {
    g.value(x).name = "last_hidden_state";
    outs.push_back(x);
  }
  g.set_outputs(outs);
  return g;
}

BertModel load_bert(const std::string& dir) {
  namespace fs = std::filesystem;
  if (dir.size() > 5 && dir.compare(dir.size() - 5, 5, ".gguf") == 0) return load_bert_gguf(dir);
  if (!fs::is_directory(dir))
    throw Error(ErrorKind::io, cat(dir, ": not a directory (expected a Hugging Face or sentence-transformers model directory)"));
  BertModel m;
  m.dir = dir;
  m.layout = read_sentence_layout(dir);
  std::string config = (fs::path(m.layout.transformer_dir) / "config.json").string();
  if (!fs::exists(config)) throw Error(ErrorKind::io, cat(m.layout.transformer_dir, ": no config.json"));
  m.spec = bert_spec_from_config(formats::read_hf_config(config), config);
  formats::SafetensorsModel st = formats::open_safetensors_model(m.layout.transformer_dir);
  formats::SafetensorsSource source(st);
  m.weight_prefix = bert_weight_prefix(source, m.spec);
  m.weights = load_bert_weights(source, m.spec);
  copy_weights_to_one_block(m.weights, cat("the weights of ", dir));
  if (m.layout.pooling.dimension && *m.layout.pooling.dimension != m.spec.hidden_size)
    throw Error(ErrorKind::format, cat(dir, ": the pooling config's word_embedding_dimension ", *m.layout.pooling.dimension,
                                       " differs from the model's hidden_size ", m.spec.hidden_size));
  m.max_tokens = m.spec.max_tokens();
  if (m.layout.max_seq_length) m.max_tokens = std::min(m.max_tokens, *m.layout.max_seq_length);
  return m;
}

}  // namespace rlx::models
