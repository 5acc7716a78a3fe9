// Standard base64 (RFC 4648, with padding): the embeddings the server returns as base64, the
// precompiled charsmaps tokenizer.json stores.
#pragma once
#include <string>

namespace rlx {

std::string base64_encode(const std::string& bytes);
// Throws rlx::Error(format) naming `where` on a character outside the alphabet or bad padding.
std::string base64_decode(const std::string& text, const std::string& where);

}  // namespace rlx
