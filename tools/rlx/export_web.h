// The sentence-embedding page `rlx export --target webgpu` adds for a BERT model directory.
#pragma once
#include <map>
#include <string>

#include "models/bert.h"
#include "text/tokenizer.h"

namespace rlx::cli {

// index.html (embeds what is typed and shows cosine similarities), wordpiece.js (BERT's tokenizer
// in JavaScript) and wordpiece.json (the vocabulary and the normalizer's settings, read off
// `tok`; its truncation is `max_tokens`). Throws when the tokenizer is not WordPiece.
std::map<std::string, std::string> sentence_page_files(const text::Tokenizer& tok, const std::string& model_name, int64_t max_tokens);

}  // namespace rlx::cli
