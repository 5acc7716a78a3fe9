#include "models/bert_weights.h"

#include <cmath>

#include "formats/quant.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::models {

namespace {

const char* const kWordEmbeddings = "embeddings.word_embeddings.weight";

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Older BERT checkpoints name LayerNorm parameters gamma/beta; transformers renames them on load.
std::vector<std::string> candidate_names(const std::string& prefix, const std::string& name) {
  std::vector<std::string> out = {prefix + name};
  if (name.find("LayerNorm.") == std::string::npos) return out;
  if (ends_with(name, ".weight")) out.push_back(prefix + name.substr(0, name.size() - 7) + ".gamma");
  if (ends_with(name, ".bias")) out.push_back(prefix + name.substr(0, name.size() - 5) + ".beta");
  return out;
}

Tensor to_f32(const formats::TensorView& v) {
  if (v.type == formats::WeightType::f32) return formats::to_tensor(v);
  return formats::dequantize(v);
}

// splitmix64: fast, and the same numbers on every platform (std distributions are not).
struct SplitMix {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  float uniform() { return static_cast<float>(next() >> 40) * (1.0f / 16777216.0f); }  // [0, 1)
};

}  // namespace

std::string bert_weight_prefix(const formats::WeightSource& model, const BertSpec& spec) {
  for (const std::string& p : {std::string(), std::string("bert."), std::string("roberta."), spec.model_type + ".",
                               std::string("model.")})
    if (model.find(p + kWordEmbeddings)) return p;
  std::vector<std::string> some;
  for (size_t i = 0; i < model.count() && i < 5; ++i) some.push_back(model.stored_name_at(i));
  throw Error(ErrorKind::format, cat(model.path(), ": no '", kWordEmbeddings, "' with any known prefix (none, bert., roberta.); ",
                                     "found ", model.count(), " tensors such as ", join(some, ", ")));
}

BertWeights load_bert_weights(const formats::WeightSource& model, const BertSpec& spec) {
  std::string prefix = bert_weight_prefix(model, spec);
  BertWeights w;
  for (const auto& [name, shape] : bert_weight_shapes(spec)) {
    const formats::TensorView* v = nullptr;
    for (const std::string& n : candidate_names(prefix, name))
      if ((v = model.find(n))) break;
    if (!v) throw Error(ErrorKind::format, cat(model.path(), ": tensor '", prefix + name, "' is missing (config.json describes ",
                                               spec.num_layers, " layers of hidden size ", spec.hidden_size, ")"));
    if (v->shape != shape)
      throw Error(ErrorKind::format, cat(model.path(), ": tensor '", v->name, "' has shape [", join(v->shape, ","),
                                         "], config.json implies [", join(shape, ","), "]"));
    if (!formats::can_dequantize(v->type))
      throw Error(ErrorKind::unsupported, cat(model.path(), ": tensor '", v->name, "' is stored as ", v->type_name(),
                                              ", which RLX cannot convert to f32"));
    w[name] = to_f32(*v);
  }
  return w;
}

BertWeights random_bert_weights(const BertSpec& spec, uint64_t seed, double stddev) {
  SplitMix rng{seed};
  // A uniform on [-a, a) has standard deviation a/√3.
  const float a = static_cast<float>(stddev * std::sqrt(3.0));
  BertWeights w;
  for (const auto& [name, shape] : bert_weight_shapes(spec)) {
    Tensor t = Tensor::zeros(DType::f32, shape);
    float* p = t.data_as<float>();
    int64_t n = t.numel();
    bool norm = name.find("LayerNorm") != std::string::npos;
    if (norm && ends_with(name, ".weight")) {
      for (int64_t i = 0; i < n; ++i) p[i] = 1.0f;
    } else if (!norm) {
      float scale = ends_with(name, ".bias") ? 0.1f * a : a;
      for (int64_t i = 0; i < n; ++i) p[i] = (2.0f * rng.uniform() - 1.0f) * scale;
    }
    w[name] = t;
  }
  return w;
}

}  // namespace rlx::models
