// Properties of the UTF-8 and Unicode helpers the tokenizers rest on.
#include <gtest/gtest.h>

#include "text/bert_unicode_tables.h"
#include "text/byte_level.h"
#include "text/unicode.h"
#include "text/utf8.h"

namespace rlx::text {
namespace {

TEST(Utf8, LossyKeepsValidTextAndRepairsEveryTruncation) {
  const std::string valid = "a\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80z";  // a é 中 😀 z
  EXPECT_EQ(utf8_lossy(valid), valid);
  EXPECT_EQ(utf8_invalid_at(valid), std::string::npos);
  for (size_t cut = 0; cut <= valid.size(); ++cut) {
    std::string repaired = utf8_lossy(valid.substr(0, cut));
    EXPECT_EQ(utf8_invalid_at(repaired), std::string::npos) << cut;
  }
  // A truncated sequence is one replacement character, not one per byte (maximal subparts).
  EXPECT_EQ(utf8_lossy("\xf0\x9f\x98"), "\xef\xbf\xbd");
  EXPECT_EQ(utf8_lossy("\xff\xfe"), "\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_EQ(utf8_invalid_at("\xed\xa0\x80"), 0u);  // a UTF-16 surrogate is not valid UTF-8
}

TEST(ByteLevel, TableIsABijectionOnBytes) {
  for (int b = 0; b < 256; ++b) {
    const std::string& s = byte_to_unicode(static_cast<unsigned char>(b));
    size_t i = 0;
    char32_t c = utf8_next(s, i);
    EXPECT_EQ(i, s.size());
    EXPECT_EQ(unicode_to_byte(c), b);
  }
  EXPECT_EQ(byte_to_unicode(' '), "\xc4\xa0");  // 'Ġ'
}

TEST(BertTables, RangesAreSortedAndDisjoint) {
  for (const CodeRangeTable* t : {&kBertPunctuationTable, &kBertOtherTable, &kBertNonspacingMarkTable, &kCombiningMarkTable}) {
    ASSERT_GT(t->size, 0u);
    for (size_t i = 0; i < t->size; ++i) {
      EXPECT_LE(t->ranges[i].first, t->ranges[i].last);
      if (i) EXPECT_LT(t->ranges[i - 1].last + 1, t->ranges[i].first);
    }
  }
}

}  // namespace
}  // namespace rlx::text
