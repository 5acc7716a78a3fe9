// Character classes of BERT's normalizer and pre-tokenizer and of StripAccents as Hugging Face
// `tokenizers` sees them (generated tables; see bert_unicode_tables.cpp).
#pragma once
#include <cstddef>

namespace rlx::text {

struct CodeRange {
  char32_t first, last;  // inclusive
};

struct CodeRangeTable {
  const CodeRange* ranges;  // sorted, disjoint
  size_t size;
  bool contains(char32_t c) const;
};

// Non-ASCII punctuation (BertPreTokenizer splits on these and on ASCII 33–47, 58–64, 91–96, 123–126).
extern const CodeRangeTable kBertPunctuationTable;
// "Other" characters (Cc, Cf, Co, Cs as of the crate's Unicode), dropped by clean_text.
extern const CodeRangeTable kBertOtherTable;
// Non-spacing marks (Mn) dropped after NFD when stripping accents.
extern const CodeRangeTable kBertNonspacingMarkTable;
// Combining marks (Mn, Mc, Me as of its crate's Unicode) dropped by the StripAccents normalizer.
extern const CodeRangeTable kCombiningMarkTable;

}  // namespace rlx::text
