#define PCRE2_CODE_UNIT_WIDTH 8
#include "text/regex.h"

#include <pcre2.h>

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::text {

namespace {

// Unicode White_Space, which \s means in Oniguruma and Rust's regex; PCRE2's \s also takes
// U+180E (in its horizontal-space list), so the class is spelled out.
constexpr const char* kWhiteSpace =
    R"(\t\n\x{0B}\f\r\x{20}\x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000})";

// Rewrites \s and \S (outside classes) to the White_Space class; everything else is copied.
std::string to_pcre2(std::string_view p) {
  std::string out;
  bool in_class = false;
  for (size_t i = 0; i < p.size();) {
    char c = p[i];
    if (c == '\\' && i + 1 < p.size()) {
      char d = p[i + 1];
      if (d == 's') out += in_class ? std::string(kWhiteSpace) : cat("[", kWhiteSpace, "]");
      else if (d == 'S' && !in_class) out += cat("[^", kWhiteSpace, "]");
      else out.append(p.substr(i, 2));
      i += 2;
      continue;
    }
    out += c;
    ++i;
    if (!in_class && c == '[') {
      in_class = true;
      if (i < p.size() && p[i] == '^') out += p[i++];
      if (i < p.size() && p[i] == ']') out += p[i++];  // a leading ']' is literal
    } else if (in_class && c == '[' && i < p.size() && p[i] == ':') {
      size_t end = p.find(":]", i);  // a POSIX class such as [:alpha:]
      if (end != std::string_view::npos) {
        out.append(p.substr(i, end + 2 - i));
        i = end + 2;
      }
    } else if (in_class && c == ']') {
      in_class = false;
    }
  }
  return out;
}

}  // namespace

struct Regex::Impl {
  pcre2_code* code = nullptr;
  ~Impl() {
    if (code) pcre2_code_free(code);
  }
};

Regex::Regex(std::string_view pattern, std::string_view where) : pattern_(pattern), impl_(std::make_unique<Impl>()) {
  int err = 0;
  PCRE2_SIZE offset = 0;
  std::string translated = to_pcre2(pattern);
  impl_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(translated.data()), translated.size(),
                              PCRE2_UTF | PCRE2_UCP | PCRE2_NO_UTF_CHECK, &err, &offset, nullptr);
  if (!impl_->code) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(err, msg, sizeof msg);
    throw Error(ErrorKind::invalid_argument, cat(where, ": regex '", pattern, "' does not compile at offset ", offset,
                                                 ": ", reinterpret_cast<const char*>(msg)));
  }
  // JIT is only a speed-up; without it matching still works.
  pcre2_jit_compile(impl_->code, PCRE2_JIT_COMPLETE);
}

Regex::~Regex() = default;
Regex::Regex(Regex&&) noexcept = default;
Regex& Regex::operator=(Regex&&) noexcept = default;

std::vector<std::pair<size_t, size_t>> Regex::find_all(std::string_view text) const {
  std::vector<std::pair<size_t, size_t>> out;
  pcre2_match_data* md = pcre2_match_data_create_from_pattern(impl_->code, nullptr);
  if (!md) throw Error(ErrorKind::out_of_memory, "regex match data allocation failed");
  size_t pos = 0;
  while (pos <= text.size()) {
    int rc = pcre2_match(impl_->code, reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), pos,
                         PCRE2_NO_UTF_CHECK, md, nullptr);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) {
      pcre2_match_data_free(md);
      PCRE2_UCHAR msg[256];
      pcre2_get_error_message(rc, msg, sizeof msg);
      throw Error(ErrorKind::runtime, cat("regex '", pattern_, "' failed: ", reinterpret_cast<const char*>(msg)));
    }
    PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
    size_t b = ov[0], e = ov[1];
    out.emplace_back(b, e);
    if (e > b) {
      pos = e;
    } else {  // an empty match: step over one character so the scan moves on
      pos = e + 1;
      while (pos < text.size() && (static_cast<unsigned char>(text[pos]) & 0xc0) == 0x80) ++pos;
    }
  }
  pcre2_match_data_free(md);
  return out;
}

Pattern Pattern::literal(std::string s) {
  Pattern p;
  p.literal_ = std::move(s);
  return p;
}

Pattern Pattern::regex(std::string_view pattern, std::string_view where) {
  Pattern p;
  p.regex_ = std::make_shared<const Regex>(pattern, where);
  return p;
}

std::vector<std::pair<size_t, size_t>> Pattern::find_all(std::string_view text) const {
  if (regex_) return regex_->find_all(text);
  std::vector<std::pair<size_t, size_t>> out;
  if (literal_.empty()) return out;
  for (size_t at = text.find(literal_); at != std::string_view::npos; at = text.find(literal_, at + literal_.size()))
    out.emplace_back(at, at + literal_.size());
  return out;
}

}  // namespace rlx::text
