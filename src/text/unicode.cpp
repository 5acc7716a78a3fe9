#include "text/unicode.h"

#include <utf8proc.h>

#include <algorithm>
#include <cstdlib>

#include "rlx/error.h"
#include "text/bert_unicode_tables.h"
#include "text/utf8.h"
#include "util/strings.h"

namespace rlx::text {

bool CodeRangeTable::contains(char32_t c) const {
  const CodeRange* end = ranges + size;
  const CodeRange* it = std::upper_bound(ranges, end, c, [](char32_t v, const CodeRange& r) { return v < r.first; });
  return it != ranges && c <= (it - 1)->last;
}

bool is_whitespace(char32_t c) {
  switch (c) {
    case 0x09: case 0x0a: case 0x0b: case 0x0c: case 0x0d: case 0x20: case 0x85: case 0xa0:
    case 0x1680: case 0x2028: case 0x2029: case 0x202f: case 0x205f: case 0x3000:
      return true;
    default:
      return c >= 0x2000 && c <= 0x200a;
  }
}

bool is_bert_control(char32_t c) {
  if (c == '\t' || c == '\n' || c == '\r') return false;
  return kBertOtherTable.contains(c);
}

bool is_bert_punctuation(char32_t c) {
  if (c < 0x80) return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126);
  return kBertPunctuationTable.contains(c);
}

bool is_nonspacing_mark(char32_t c) { return kBertNonspacingMarkTable.contains(c); }

bool is_combining_mark(char32_t c) { return kCombiningMarkTable.contains(c); }

bool is_chinese_char(char32_t c) {
  return (c >= 0x4e00 && c <= 0x9fff) || (c >= 0x3400 && c <= 0x4dbf) || (c >= 0x20000 && c <= 0x2a6df) ||
         (c >= 0x2a700 && c <= 0x2b73f) || (c >= 0x2b740 && c <= 0x2b81f) || (c >= 0x2b920 && c <= 0x2ceaf) ||
         (c >= 0xf900 && c <= 0xfaff) || (c >= 0x2f800 && c <= 0x2fa1f);
}

bool is_word_char(char32_t c) {
  if (c < 0x80) return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  if (c == 0x200c || c == 0x200d) return true;  // Join_Control
  // Other_Alphabetic symbols: circled and squared Latin letters.
  if ((c >= 0x24b6 && c <= 0x24e9) || (c >= 0x1f130 && c <= 0x1f149) || (c >= 0x1f150 && c <= 0x1f169) ||
      (c >= 0x1f170 && c <= 0x1f189))
    return true;
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(c))) {
    case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL: case UTF8PROC_CATEGORY_LT: case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO: case UTF8PROC_CATEGORY_MN: case UTF8PROC_CATEGORY_MC: case UTF8PROC_CATEGORY_ME:
    case UTF8PROC_CATEGORY_ND: case UTF8PROC_CATEGORY_NL: case UTF8PROC_CATEGORY_PC:
      return true;
    default:
      return false;
  }
}

bool is_numeric(char32_t c) {
  auto cat = utf8proc_category(static_cast<utf8proc_int32_t>(c));
  return cat == UTF8PROC_CATEGORY_ND || cat == UTF8PROC_CATEGORY_NL || cat == UTF8PROC_CATEGORY_NO;
}

std::string normalize(std::string_view s, NormalForm form) {
  if (s.empty()) return {};
  int options = UTF8PROC_STABLE;
  switch (form) {
    case NormalForm::nfc: options |= UTF8PROC_COMPOSE; break;
    case NormalForm::nfd: options |= UTF8PROC_DECOMPOSE; break;
    case NormalForm::nfkc: options |= UTF8PROC_COMPOSE | UTF8PROC_COMPAT; break;
    case NormalForm::nfkd: options |= UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT; break;
  }
  utf8proc_uint8_t* out = nullptr;
  utf8proc_ssize_t n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(s.data()),
                                    static_cast<utf8proc_ssize_t>(s.size()), &out,
                                    static_cast<utf8proc_option_t>(options));
  if (n < 0)
    throw Error(ErrorKind::invalid_argument, cat("Unicode normalization failed: ", utf8proc_errmsg(n)));
  std::string result(reinterpret_cast<const char*>(out), static_cast<size_t>(n));
  std::free(out);
  return result;
}

std::string lowercase(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    char32_t c = utf8_next(s, i);
    if (c < 0x80) {
      out += static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
    } else if (c == 0x130) {
      out += "i\xcc\x87";  // the one unconditional multi-character lowercase mapping
    } else {
      utf8_append(out, static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c))));
    }
  }
  return out;
}

}  // namespace rlx::text
