// Importance matrices (llama.cpp's imatrix, RLX's own computation): for each matrix of a
// llama-family model, the mean square of the activation that multiplies each of its columns
// over a calibration text. A quantizer given these weighs each column's squared error by them,
// which estimates the error the matrix's *output* takes (formats/quant.h).
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "models/qwen3.h"

namespace rlx::quant {

struct ImportanceOptions {
  int64_t chunk = 512;          // tokens per independent sequence (each starts with an empty cache)
  std::string device = "cpu";
  std::function<void(int64_t done, int64_t total)> progress;  // tokens
};

// By Hugging Face weight name (every matmul of the layers; not the LM head, whose input is one
// row of the graph): one value per column. Throws rlx::Error when `ids` is empty.
std::map<std::string, std::vector<float>> llama_matmul_importance(const models::LlamaSpec& spec, const models::LlamaWeights& weights,
                                                                  const std::vector<int32_t>& ids, const ImportanceOptions& options = {});

}  // namespace rlx::quant
