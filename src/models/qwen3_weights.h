// Llama-family specs and weights from Hugging Face directories (config.json + safetensors) and
// GGUF files (llama.cpp names and metadata), seeded random weights for benchmarks, and a GGUF
// writer that stores a model the way llama.cpp's converter does.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "formats/gguf.h"
#include "formats/hf_config.h"
#include "formats/safetensors.h"
#include "formats/weight_source.h"
#include "models/k_quant_mix.h"
#include "models/qwen3.h"

namespace rlx::models {

// config.json → spec. Throws rlx::Error(unsupported) for RoPE scalings RLX does not implement.
LlamaSpec llama_spec_from_hf(const formats::HfConfig& config, const std::string& source);
// general.architecture qwen3/qwen2/llama and its {arch}.* keys; tensors decide tying, biases
// and QK-norm; llama files get interleaved RoPE (see LlamaSpec::rope_interleaved).
LlamaSpec llama_spec_from_gguf(const formats::GgufFile& file);

// The weights from any container, by their Hugging Face names. `precision`: "as-stored" keeps
// quantized, F16 and BF16 matrices packed as the file holds them (GGUF's way; F32 ones dense);
// "f32" or "bf16" makes every matrix and the embedding dense in that type (bf16 checkpoints stay
// zero-copy, others are rounded; quantized tensors are refused). Norms and biases are f32.
// Throws rlx::Error(format) naming a missing tensor (by the file's own name) or a wrong shape.
LlamaWeights load_llama_weights(const formats::WeightSource& source, const LlamaSpec& spec, const std::string& precision);

// Deterministic weights for `seed` (matrices uniform with standard deviation `stddev`, norms 1),
// dense in `dtype` (f32 or bf16).
LlamaWeights random_llama_weights(const LlamaSpec& spec, uint64_t seed, DType dtype, double stddev = 0.02);
// The same values as random_llama_weights(spec, seed, f32) for one tensor (for writers that
// stream tensors one at a time).
std::vector<float> random_llama_tensor(const LlamaSpec& spec, uint64_t seed, const std::string& name, int64_t numel, double stddev = 0.02);

struct GgufExportOptions {
  formats::WeightType matrix_type = formats::WeightType::q8_0;  // F32 F16 BF16 Q8_0 Q4_0 Q4_1 Q5_0 Q5_1 Q4_K Q5_K Q6_K
  KQuantMix k_quant_mix = KQuantMix::none;  // a llama.cpp mix on top of matrix_type
  std::optional<std::string> tokenizer_json;     // tokenizer.json to store as tokenizer.ggml.*
  std::optional<std::string> chat_template;
  std::string name = "rlx";
  // Importance of each matrix's columns by Hugging Face tensor name (llama_matmul_importance):
  // quantized with importance-weighted fits. Matrices without an entry are quantized plainly.
  const std::map<std::string, std::vector<float>>* importance = nullptr;
};
// Writes `weights` (dense) as a GGUF file with llama.cpp's tensor names and metadata. Matrices
// whose rows do not hold whole blocks of the type fall back to Q8_0, then F16 (as llama.cpp
// does); llama Q/K rows are permuted the way llama.cpp's converter permutes them.
void write_llama_gguf(const std::string& path, const LlamaSpec& spec, const LlamaWeights& weights, const GgufExportOptions& options);
// The same with weights produced one tensor at a time (no whole f32 model in memory).
void write_llama_gguf(const std::string& path, const LlamaSpec& spec,
                      const std::function<std::vector<float>(const std::string& name, const std::vector<int64_t>& shape)>& tensor,
                      const GgufExportOptions& options);

}  // namespace rlx::models
