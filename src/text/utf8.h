// UTF-8 helpers. Input text must be valid UTF-8 (checked once at the API boundary); decoded
// bytes coming from byte-level tokens may not be, and are repaired like Rust's
// String::from_utf8_lossy so decoded text matches Hugging Face's byte for byte.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace rlx::text {

// Decodes the code point starting at s[i] and advances i. The text must be valid UTF-8.
char32_t utf8_next(std::string_view s, size_t& i);
void utf8_append(std::string& out, char32_t c);
size_t utf8_char_count(std::string_view s);

// Byte offset of the first invalid sequence, or npos when s is valid UTF-8.
size_t utf8_invalid_at(std::string_view s);
// Replaces each maximal ill-formed subsequence with U+FFFD (Rust's from_utf8_lossy).
std::string utf8_lossy(std::string_view bytes);

}  // namespace rlx::text
