// The tokenizer a GGUF file describes in its tokenizer.ggml.* metadata: the keys read and
// type-checked (a wrong type is a format error naming the key), then text/gguf_tokenizer.h
// builds it. Depends only on the GGUF reader and the text layer, so a fuzz target can link it
// without the rest of the library.
#pragma once
#include <memory>

#include "formats/gguf.h"
#include "text/tokenizer.h"

namespace rlx::models {

// Null when the file has no tokenizer.ggml.model.
std::shared_ptr<text::Tokenizer> gguf_tokenizer(const formats::GgufFile& f);

}  // namespace rlx::models
