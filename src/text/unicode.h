// Character classes and normalization forms, each matching what Hugging Face `tokenizers` uses
// for the same step (Rust std for whitespace and case, generated tables for BERT's classes).
#pragma once
#include <string>
#include <string_view>

namespace rlx::text {

// Rust's char::is_whitespace: the White_Space property.
bool is_whitespace(char32_t c);
// BERT's whitespace: \t \n \r and White_Space.
inline bool is_bert_whitespace(char32_t c) { return c == '\t' || c == '\n' || c == '\r' || is_whitespace(c); }
// BERT's control characters: "other" categories except \t \n \r.
bool is_bert_control(char32_t c);
// BERT's punctuation: ASCII 33–47, 58–64, 91–96, 123–126 and the P* categories.
bool is_bert_punctuation(char32_t c);
bool is_nonspacing_mark(char32_t c);
// The combining marks the StripAccents normalizer removes.
bool is_combining_mark(char32_t c);
// The CJK ideograph blocks BERT surrounds with spaces.
bool is_chinese_char(char32_t c);
// The Rust regex class \w (Unicode): alphabetic, marks, decimal digits, connector punctuation.
bool is_word_char(char32_t c);
// Rust's char::is_numeric: Nd, Nl, No.
bool is_numeric(char32_t c);

enum class NormalForm { nfc, nfd, nfkc, nfkd };
std::string normalize(std::string_view s, NormalForm form);
// Full lowercase mapping per character (Rust's char::to_lowercase), no context rules.
std::string lowercase(std::string_view s);

}  // namespace rlx::text
