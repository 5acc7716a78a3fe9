// The tokens of the GLSL subset the kernel families write (identifiers, numbers, punctuation,
// whitespace and comments kept as they are), for the respellings into other languages
// (c_like.h, hlsl.h): a respelling rewrites tokens, so what it leaves alone prints unchanged.
#pragma once
#include <cctype>
#include <cstdint>
#include <string>
#include <vector>

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::backends::vulkan {

struct Tok {
  enum Kind : uint8_t { ident, number, punct, space } kind;
  std::string text;
};

inline std::vector<Tok> tokenize(const std::string& s) {
  std::vector<Tok> out;
  size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    size_t j = i + 1;
    if (std::isspace(static_cast<unsigned char>(c))) {
      while (j < s.size() && std::isspace(static_cast<unsigned char>(s[j])) && s[j - 1] != '\n') ++j;
      out.push_back({Tok::space, s.substr(i, j - i)});
    } else if (c == '/' && i + 1 < s.size() && s[i + 1] == '/') {
      j = s.find('\n', i);
      if (j == std::string::npos) j = s.size();
      out.push_back({Tok::space, s.substr(i, j - i)});
    } else if (c == '/' && i + 1 < s.size() && s[i + 1] == '*') {
      j = s.find("*/", i + 2);
      j = j == std::string::npos ? s.size() : j + 2;
      out.push_back({Tok::space, s.substr(i, j - i)});
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
      out.push_back({Tok::ident, s.substr(i, j - i)});
    } else if (std::isdigit(static_cast<unsigned char>(c)) || (c == '.' && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1])))) {
      // digits, a point, an exponent with its sign, suffixes; hex digits
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '.' ||
                              ((s[j] == '+' || s[j] == '-') && (s[j - 1] == 'e' || s[j - 1] == 'E') && !(s[i] == '0' && i + 1 < s.size() && (s[i + 1] == 'x' || s[i + 1] == 'X')))))
        ++j;
      out.push_back({Tok::number, s.substr(i, j - i)});
    } else {
      // two-character operators that matter here: -> (never in GLSL) and the rest pass as is
      out.push_back({Tok::punct, std::string(1, c)});
    }
    i = j;
  }
  return out;
}

// Walking a token list: the significant token after or before one, a token's text, the bracket
// that closes one. `lang` names the language in the error an unbalanced source gives.
struct TokenWalk {
  std::vector<Tok>& t;
  const char* lang;
  size_t next(size_t i) const {
    for (++i; i < t.size() && t[i].kind == Tok::space; ++i) {}
    return i;
  }
  size_t prev(size_t i) const {  // t.size() when there is none
    while (i > 0) {
      --i;
      if (t[i].kind != Tok::space) return i;
    }
    return t.size();
  }
  bool is(size_t i, const char* s) const { return i < t.size() && t[i].text == s; }
  size_t matching(size_t open) const;
};

inline bool is_float_literal(const std::string& n) {
  if (n.size() > 1 && n[0] == '0' && (n[1] == 'x' || n[1] == 'X')) return false;
  return n.find_first_of(".eE") != std::string::npos;
}

inline size_t TokenWalk::matching(size_t open) const {
  const std::string o = t[open].text, c = o == "(" ? ")" : o == "[" ? "]" : "}";
  int depth = 0;
  for (size_t i = open; i < t.size(); ++i) {
    if (t[i].kind != Tok::punct) continue;
    if (t[i].text == o) ++depth;
    else if (t[i].text == c && --depth == 0) return i;
  }
  throw Error(ErrorKind::internal, cat(lang, ": unbalanced kernel source"));
}

}  // namespace rlx::backends::vulkan
