#include "text/jinja/lexer.h"

#include <cctype>
#include <cstdlib>

#include "rlx/error.h"
#include "text/utf8.h"
#include "util/strings.h"

namespace rlx::text::jinja {

namespace {

enum class Tag { none, var, block, comment };

[[noreturn]] void fail(int line, const std::string& what) { throw Error(ErrorKind::parse, cat("chat template, line ", line, ": ", what)); }

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

class Lexer {
 public:
  explicit Lexer(const std::string& src) : src_(src) {}

  std::vector<Token> run() {
    size_t pos = 0;
    while (pos < src_.size()) {
      size_t start = find_tag(pos);
      Tag kind = Tag::none;
      char ctrl = 0;
      if (start != std::string::npos) {
        char c = src_[start + 1];
        kind = c == '{' ? Tag::var : c == '%' ? Tag::block : Tag::comment;
        if (start + 2 < src_.size() && (src_[start + 2] == '-' || src_[start + 2] == '+')) ctrl = src_[start + 2];
      }
      size_t text_end = start == std::string::npos ? src_.size() : start;
      emit_text(pos, text_end, kind, ctrl);
      if (start == std::string::npos) break;
      count_lines(pos, start);
      pos = start + 2 + (ctrl ? 1 : 0);
      if (kind == Tag::comment) {
        size_t close = src_.find("#}", pos);
        if (close == std::string::npos) fail(line_, "unterminated comment");
        prev_right_ = close > pos && (src_[close - 1] == '-' || src_[close - 1] == '+') ? src_[close - 1] : 0;
        prev_tag_ = Tag::comment;
        count_lines(pos, close);
        pos = close + 2;
        continue;
      }
      if (kind == Tag::block && is_raw(pos)) {
        pos = raw_block(pos);
        continue;
      }
      out_.push_back({kind == Tag::var ? Token::Kind::var_begin : Token::Kind::block_begin, {}, 0, 0, line_});
      pos = inside(pos, kind);
    }
    out_.push_back({Token::Kind::end, {}, 0, 0, line_});
    return std::move(out_);
  }

 private:
  const std::string& src_;
  std::vector<Token> out_;
  int line_ = 1;
  Tag prev_tag_ = Tag::none;
  char prev_right_ = 0;  // the previous tag's closing control: '-', '+' or 0

  size_t find_tag(size_t from) const {
    for (size_t p = src_.find('{', from); p != std::string::npos && p + 1 < src_.size(); p = src_.find('{', p + 1))
      if (src_[p + 1] == '{' || src_[p + 1] == '%' || src_[p + 1] == '#') return p;
    return std::string::npos;
  }

  void count_lines(size_t a, size_t b) {
    for (size_t k = a; k < b && k < src_.size(); ++k)
      if (src_[k] == '\n') ++line_;
  }

  // Text between the previous tag and the next one (of kind `next` with opening control
  // `ctrl`), trimmed as the two tags ask.
  void emit_text(size_t a, size_t b, Tag next, char ctrl) {
    std::string raw = src_.substr(a, b - a);
    std::string t = raw;
    // lstrip_blocks: the spaces and tabs between a line's start and a block or comment tag.
    if ((next == Tag::block || next == Tag::comment) && ctrl != '+' && ctrl != '-') {
      size_t nl = t.find_last_of('\n');
      size_t from = nl == std::string::npos ? 0 : nl + 1;
      bool line_start = nl != std::string::npos || (a == 0 && prev_tag_ == Tag::none);
      if (line_start && t.find_first_not_of(" \t", from) == std::string::npos) t.erase(from);
    }
    if (ctrl == '-') {
      size_t keep = t.size();
      while (keep > 0 && is_space(t[keep - 1])) --keep;
      t.erase(keep);
    }
    if (prev_right_ == '-') {
      size_t k = 0;
      while (k < t.size() && is_space(t[k])) ++k;
      t.erase(0, k);
    } else if ((prev_tag_ == Tag::block || prev_tag_ == Tag::comment) && prev_right_ != '+') {
      // trim_blocks: the first newline after a block or comment tag
      if (t.rfind("\r\n", 0) == 0) t.erase(0, 2);
      else if (!t.empty() && t[0] == '\n') t.erase(0, 1);
    }
    if (!t.empty()) out_.push_back({Token::Kind::text, std::move(t), 0, 0, line_});
  }

  bool is_raw(size_t pos) const {
    size_t p = pos;
    while (p < src_.size() && is_space(src_[p])) ++p;
    if (src_.compare(p, 3, "raw") != 0) return false;
    p += 3;
    if (p < src_.size() && (std::isalnum(static_cast<unsigned char>(src_[p])) || src_[p] == '_')) return false;
    while (p < src_.size() && is_space(src_[p])) ++p;
    if (p < src_.size() && (src_[p] == '-' || src_[p] == '+')) ++p;
    return src_.compare(p, 2, "%}") == 0;
  }

  // {% raw %}…{% endraw %}: the text in between, verbatim (but for the tags' own trimming).
  size_t raw_block(size_t pos) {
    size_t close = src_.find("%}", pos);
    // `-%}` strips what follows; trim_blocks does not apply after {% raw %} (jinja2's lexer).
    prev_right_ = src_[close - 1] == '-' ? '-' : 0;
    prev_tag_ = Tag::none;
    size_t body = close + 2;
    for (size_t p = src_.find("{%", body); p != std::string::npos; p = src_.find("{%", p + 2)) {
      size_t q = p + 2;
      char ctrl = q < src_.size() && (src_[q] == '-' || src_[q] == '+') ? src_[q++] : 0;
      while (q < src_.size() && is_space(src_[q])) ++q;
      if (src_.compare(q, 6, "endraw") != 0) continue;
      q += 6;
      while (q < src_.size() && is_space(src_[q])) ++q;
      char rctrl = q < src_.size() && (src_[q] == '-' || src_[q] == '+') ? src_[q++] : 0;
      if (src_.compare(q, 2, "%}") != 0) continue;
      emit_text(body, p, Tag::block, ctrl);
      count_lines(pos, q);
      prev_right_ = rctrl;
      prev_tag_ = Tag::block;
      return q + 2;
    }
    fail(line_, "{% raw %} without {% endraw %}");
  }

  // The tokens of one {{ }} or {% %} tag, up to and including its end.
  size_t inside(size_t pos, Tag kind) {
    int depth = 0;
    const char* close = kind == Tag::var ? "}}" : "%}";
    while (true) {
      while (pos < src_.size() && is_space(src_[pos])) {
        if (src_[pos] == '\n') ++line_;
        ++pos;
      }
      if (pos >= src_.size()) fail(line_, kind == Tag::var ? "unterminated {{" : "unterminated {%");
      char c = src_[pos];
      if (depth == 0) {
        char rctrl = 0;
        size_t p = pos;
        if ((c == '-' || c == '+') && src_.compare(pos + 1, 2, close) == 0) rctrl = c, ++p;
        if (src_.compare(p, 2, close) == 0) {
          out_.push_back({kind == Tag::var ? Token::Kind::var_end : Token::Kind::block_end, {}, 0, 0, line_});
          prev_right_ = rctrl;
          prev_tag_ = kind;
          return p + 2;
        }
      }
      if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        size_t e = pos;
        while (e < src_.size() && (std::isalnum(static_cast<unsigned char>(src_[e])) || src_[e] == '_')) ++e;
        out_.push_back({Token::Kind::name, src_.substr(pos, e - pos), 0, 0, line_});
        pos = e;
      } else if (std::isdigit(static_cast<unsigned char>(c))) {
        pos = number(pos);
      } else if (c == '\'' || c == '"') {
        pos = string(pos);
      } else {
        static const char* ops[] = {"//", "**", "==", "!=", "<=", ">=", "+", "-", "*", "/", "%", "~", "|", ".", ",", ":",
                                    "(", ")", "[", "]", "{", "}", "<", ">", "="};
        bool found = false;
        for (const char* op : ops) {
          size_t n = std::char_traits<char>::length(op);
          if (src_.compare(pos, n, op) == 0) {
            if (op[0] == '(' || op[0] == '[' || op[0] == '{') ++depth;
            if ((op[0] == ')' || op[0] == ']' || op[0] == '}') && n == 1) --depth;
            out_.push_back({Token::Kind::op, op, 0, 0, line_});
            pos += n;
            found = true;
            break;
          }
        }
        if (!found) fail(line_, cat("unexpected character '", std::string(1, c), "' in a tag"));
      }
    }
  }

  size_t number(size_t pos) {
    size_t e = pos;
    bool is_float = false;
    while (e < src_.size() && (std::isdigit(static_cast<unsigned char>(src_[e])) || src_[e] == '_')) ++e;
    if (e + 1 < src_.size() && src_[e] == '.' && std::isdigit(static_cast<unsigned char>(src_[e + 1]))) {
      is_float = true;
      ++e;
      while (e < src_.size() && (std::isdigit(static_cast<unsigned char>(src_[e])) || src_[e] == '_')) ++e;
    }
    if (e < src_.size() && (src_[e] == 'e' || src_[e] == 'E')) {
      size_t f = e + 1;
      if (f < src_.size() && (src_[f] == '+' || src_[f] == '-')) ++f;
      if (f < src_.size() && std::isdigit(static_cast<unsigned char>(src_[f]))) {
        is_float = true;
        e = f;
        while (e < src_.size() && std::isdigit(static_cast<unsigned char>(src_[e]))) ++e;
      }
    }
    std::string text;
    for (size_t k = pos; k < e; ++k)
      if (src_[k] != '_') text += src_[k];
    Token t{is_float ? Token::Kind::number : Token::Kind::integer, {}, 0, 0, line_};
    if (is_float) t.d = std::strtod(text.c_str(), nullptr);
    else {
      errno = 0;
      t.i = std::strtoll(text.c_str(), nullptr, 10);
      if (errno == ERANGE) fail(line_, cat("integer ", text, " does not fit 64 bits"));
    }
    out_.push_back(t);
    return e;
  }

  size_t string(size_t pos) {
    char q = src_[pos];
    std::string s;
    size_t p = pos + 1;
    while (true) {
      if (p >= src_.size()) fail(line_, "unterminated string literal");
      char c = src_[p];
      if (c == q) break;
      if (c == '\n') ++line_;
      if (c != '\\' || p + 1 >= src_.size()) {
        s += c, ++p;
        continue;
      }
      char e = src_[p + 1];
      p += 2;
      switch (e) {
        case 'n': s += '\n'; break;
        case 't': s += '\t'; break;
        case 'r': s += '\r'; break;
        case '0': s += '\0'; break;
        case '\\': s += '\\'; break;
        case '\'': s += '\''; break;
        case '"': s += '"'; break;
        case '\n': break;  // a line continuation
        case 'x':
        case 'u':
        case 'U': {
          size_t n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
          if (p + n > src_.size()) fail(line_, "truncated escape in a string literal");
          std::string hex = src_.substr(p, n);
          char* end = nullptr;
          unsigned long cp = std::strtoul(hex.c_str(), &end, 16);
          if (end != hex.c_str() + n || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) fail(line_, cat("bad escape \\", std::string(1, e), hex));
          utf8_append(s, static_cast<char32_t>(cp));
          p += n;
          break;
        }
        default: s += '\\', s += e;  // Python keeps unknown escapes as written
      }
    }
    out_.push_back({Token::Kind::string, std::move(s), 0, 0, line_});
    return p + 1;
  }
};

}  // namespace

std::vector<Token> tokenize(const std::string& source) {
  if (size_t bad = utf8_invalid_at(source); bad != std::string::npos) throw Error(ErrorKind::parse, cat("chat template: invalid UTF-8 at byte ", bad));
  // jinja2 drops one trailing newline of the source (keep_trailing_newline=False).
  std::string src = source;
  if (src.size() >= 2 && src.compare(src.size() - 2, 2, "\r\n") == 0) src.resize(src.size() - 2);
  else if (!src.empty() && src.back() == '\n') src.pop_back();
  return Lexer(src).run();
}

}  // namespace rlx::text::jinja
