#include "models/decoder_shape.h"

namespace rlx::models {

dist::DecoderShape decoder_shape(const LlamaSpec& s, std::string name) {
  dist::DecoderShape m;
  m.name = std::move(name);
  m.vocab = s.vocab_size;
  m.hidden = s.hidden_size;
  m.intermediate = s.intermediate_size;
  m.layers = s.num_layers;
  m.heads = s.num_heads;
  m.kv_heads = s.num_kv_heads;
  m.head_dim = s.head_dim;
  m.tied_embeddings = s.tie_word_embeddings;
  m.qk_norm = s.qk_norm;
  return m;
}

}  // namespace rlx::models
