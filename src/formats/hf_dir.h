// What a Hugging Face model directory holds: config, weights, tokenizer and sentence-
// transformers files, found by their conventional names (only names are checked here; each
// file is validated by its own reader when opened).
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace rlx::formats {

struct HfTokenizerFiles {
  std::optional<std::string> tokenizer_json;       // tokenizers library (BPE, WordPiece …)
  std::optional<std::string> tokenizer_config;     // tokenizer_config.json: special tokens, chat template
  std::optional<std::string> special_tokens_map;   // special_tokens_map.json
  std::optional<std::string> vocab_txt;            // WordPiece vocabulary (BERT)
  std::optional<std::string> vocab_json;           // GPT-2 style BPE vocabulary
  std::optional<std::string> merges_txt;           // GPT-2 style BPE merges
  std::optional<std::string> sentencepiece_model;  // tokenizer.model / sentencepiece.bpe.model
  std::optional<std::string> added_tokens;         // added_tokens.json

  bool any() const;
};

struct HfDirectory {
  std::string path;
  std::optional<std::string> config;              // config.json
  std::optional<std::string> generation_config;   // generation_config.json
  std::optional<std::string> safetensors_index;   // *.safetensors.index.json
  std::vector<std::string> safetensors;           // *.safetensors, sorted
  std::vector<std::string> gguf;                  // *.gguf, sorted
  std::vector<std::string> pickles;               // pytorch_model*.bin, *.pt, *.pth: never loaded
  HfTokenizerFiles tokenizer;
  std::optional<std::string> sentence_transformers_modules;  // modules.json
  std::optional<std::string> pooling_config;                 // 1_Pooling/config.json

  // Paths relative to `path` of every file found, for listings.
  std::vector<std::string> listing() const;
};

// Throws rlx::Error(io) when `path` is not a readable directory.
HfDirectory scan_hf_directory(const std::string& path);

}  // namespace rlx::formats
