// Jinja's lexer as Hugging Face configures it for chat templates: {{ }}, {% %}, {# #} with
// `-`/`+` whitespace control, trim_blocks (the first newline after a block or comment tag goes)
// and lstrip_blocks (spaces and tabs before a block or comment tag on its own line go), and
// {% raw %} blocks. The text between tags comes out with all that whitespace handling applied.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace rlx::text::jinja {

struct Token {
  enum class Kind {
    text,        // literal template text (s)
    var_begin,   // {{
    var_end,     // }}
    block_begin, // {%
    block_end,   // %}
    name,        // identifier or keyword (s)
    string,      // string literal, unescaped (s)
    integer,     // (i)
    number,      // float literal (d)
    op,          // punctuation and operators (s): ( ) [ ] { } . , : | ~ + - * / // % ** = == != < > <= >=
    end,         // end of the template
  };
  Kind kind;
  std::string s;
  int64_t i = 0;
  double d = 0;
  int line = 1;
};

// Throws rlx::Error(parse) naming the line of an unterminated tag or string, or a character
// that cannot start a token.
std::vector<Token> tokenize(const std::string& source);

}  // namespace rlx::text::jinja
