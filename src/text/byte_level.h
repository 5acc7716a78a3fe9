// GPT-2's byte ↔ unicode table: every byte becomes a printable character so byte-level BPE
// vocabularies are plain strings ('Ġ' is the space byte, 'Ċ' the newline).
#pragma once
#include <string>
#include <string_view>

namespace rlx::text {

// UTF-8 of the character standing for byte b.
const std::string& byte_to_unicode(unsigned char b);
// The byte a character stands for, or -1 when it stands for none.
int unicode_to_byte(char32_t c);
// Every byte of s replaced by its character.
std::string bytes_to_byte_level(std::string_view s);

}  // namespace rlx::text
