// The weights of a BERT encoder by canonical name (see bert_weight_shapes), as f32 tensors whose
// shapes have been checked: read from a weight source (safetensors: one file or shards, with or without a
// "bert." / "roberta." prefix, LayerNorm gamma/beta or weight/bias), or seeded random values
// for benchmarks.
#pragma once
#include <cstdint>
#include <map>
#include <string>

#include "formats/weight_source.h"
#include "models/bert_spec.h"
#include "rlx/tensor.h"

namespace rlx::models {

using BertWeights = std::map<std::string, Tensor>;

// From any container (formats/weight_source.h): f32 weights are zero-copy views of the mapping;
// f16/bf16 ones are converted to f32. Throws rlx::Error(format) naming the file and the tensor
// that is missing or has the wrong shape.
BertWeights load_bert_weights(const formats::WeightSource& source, const BertSpec& spec);

// The prefix the checkpoint puts before the canonical names: "", "bert.", "roberta." …
std::string bert_weight_prefix(const formats::WeightSource& source, const BertSpec& spec);

// Deterministic values for `seed`: matrices and embeddings uniform with standard deviation
// `stddev`, LayerNorm scales 1 and shifts 0, biases small. Only for timing and tests.
BertWeights random_bert_weights(const BertSpec& spec, uint64_t seed, double stddev = 0.05);

}  // namespace rlx::models
