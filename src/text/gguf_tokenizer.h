// A byte-level BPE tokenizer from GGUF tokenizer metadata (llama.cpp's tokenizer.ggml.* keys).
// Plain vectors in, so this does not depend on the GGUF reader.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "text/tokenizer.h"

namespace rlx::text {

// llama.cpp's token types (tokenizer.ggml.token_type).
enum class GgufTokenType : int32_t { undefined = 0, normal = 1, unknown = 2, control = 3, user_defined = 4, unused = 5, byte = 6 };

struct GgufTokenizerData {
  std::string model;                // tokenizer.ggml.model: "gpt2" (byte-level BPE), "llama" (SentencePiece BPE), "bert" (WordPiece), "t5" (Unigram)
  std::string pre;                  // tokenizer.ggml.pre: "qwen2", "llama-bpe", "gpt-2", …
  std::vector<std::string> tokens;  // tokenizer.ggml.tokens, index = id
  std::vector<std::string> merges;  // tokenizer.ggml.merges, "a b" in rank order
  std::vector<int32_t> token_type;  // tokenizer.ggml.token_type (may be empty: all normal)
  std::vector<float> scores;        // tokenizer.ggml.scores (SentencePiece: the merge priorities)
  std::optional<bool> add_space_prefix;  // tokenizer.ggml.add_space_prefix (SentencePiece; default true)
  std::string precompiled_charsmap;      // tokenizer.ggml.precompiled_charsmap (Unigram, "t5"): its bytes
  std::optional<bool> remove_extra_whitespaces;  // tokenizer.ggml.remove_extra_whitespaces (default true)
  std::optional<int32_t> bos_id, eos_id, eot_id, unk_id, pad_id;
  std::optional<int32_t> cls_id, sep_id, mask_id;  // tokenizer.ggml.cls_token_id, seperator_token_id (sic), mask_token_id
  std::optional<bool> add_bos, add_eos;  // tokenizer.ggml.add_bos_token / add_eos_token
};

// Control tokens become special added tokens and user-defined ones plain added tokens, as in the
// Hugging Face files GGUF converters read. "llama" (SentencePiece BPE: Llama 2, Mistral, Gemma,
// Phi-3…) becomes the tokenizer.json transformers' LlamaConverter makes of the same model: merges
// rebuilt from the pieces and their scores as SentencePieceExtractor does, "▁" for spaces (and
// one in front), byte fallback. "bert" (WordPiece: BERT, BGE, MiniLM…) undoes llama.cpp's
// phantom-space vocabulary ("▁word" is a word start, "piece" a "##piece" continuation) and
// becomes BERT's tokenizer: lowercasing when the vocabulary has no upper-case letter (GGUF does
// not record do_lower_case), [CLS] A [SEP]. "t5" (SentencePiece Unigram: T5, mT5, XLM-R-style)
// becomes T5Converter's tokenizer.json: the precompiled charsmap, space runs collapsed, Metaspace,
// the pieces' scores, $A </s>. Throws rlx::Error(unsupported) for other models or
// an unknown `pre`, naming the supported ones.
Tokenizer tokenizer_from_gguf(const GgufTokenizerData& data);

// The pre-tokenizer regex for a tokenizer.ggml.pre name, or nullopt when unknown.
std::optional<std::string> gguf_pre_tokenizer_regex(const std::string& pre);
// Every tokenizer.ggml.pre value RLX reads (a byte-level BPE's pre-tokenization).
std::vector<std::string> gguf_pre_tokenizer_names();

}  // namespace rlx::text
