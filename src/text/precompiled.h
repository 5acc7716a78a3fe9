// SentencePiece's precompiled normalization (the `precompiled_charsmap` of T5, XLM-R, ALBERT,
// mT5 … models; Hugging Face's `Precompiled` normalizer, GGUF's tokenizer.ggml.precompiled_charsmap):
// a double-array trie (darts-clone) from UTF-8 sequences to offsets into a blob of
// NUL-terminated replacements. Applied as tokenizers applies it: per extended grapheme cluster
// shorter than 6 bytes, the replacement of the cluster's shortest prefix in the trie; otherwise
// code point by code point, unchanged where the trie has none.
#pragma once
#include <memory>
#include <string>

#include "text/normalizer.h"

namespace rlx::text {

// `charsmap`: the raw bytes ([u32 trie bytes][trie units][replacements]). Throws
// rlx::Error(format) naming `where` when the sizes do not add up or the replacements are not UTF-8.
std::unique_ptr<Normalizer> make_precompiled_normalizer(const std::string& charsmap, const std::string& where);

}  // namespace rlx::text
