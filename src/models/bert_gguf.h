// BERT-family embedding models as GGUF files (llama.cpp's "bert" architecture: BGE, MiniLM,
// nomic-style BERTs converted for llama.cpp): tensors by llama.cpp's names, the pooling it
// records, and the WordPiece vocabulary in its phantom-space form (text/gguf_tokenizer.h).
#pragma once
#include <string>

#include "models/bert.h"
#include "text/tokenizer.h"

namespace rlx::models {

// The model in a .gguf file: spec from bert.* keys, weights (f32, f16 or bf16 tensors as
// stored, converted to f32), pooling from bert.pooling_type (mean or cls) and L2-normalized
// vectors (llama.cpp's default for embeddings: the file does not say). Throws rlx::Error naming
// the file and key for what is missing, (unsupported) for other architectures and poolings.
BertModel load_bert_gguf(const std::string& path);

// Writes `model` in llama.cpp's layout, with its WordPiece tokenizer as tokenizer.ggml.*
// metadata (the special tokens it names become control tokens); f32 tensors.
void write_bert_gguf(const std::string& path, const BertModel& model, const text::Tokenizer& tokenizer);

}  // namespace rlx::models
