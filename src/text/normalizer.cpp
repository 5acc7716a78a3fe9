#include "text/normalizer.h"

#include <vector>

#include "rlx/error.h"
#include "text/byte_level.h"
#include "text/precompiled.h"
#include "util/base64.h"
#include "text/regex.h"
#include "text/unicode.h"
#include "text/utf8.h"
#include "util/strings.h"

namespace rlx::text {

namespace {

class BertNormalizer : public Normalizer {
 public:
  explicit BertNormalizer(const BertNormalizerOptions& o)
      : clean_text_(o.clean_text),
        chinese_(o.handle_chinese_chars),
        strip_accents_(o.strip_accents.value_or(o.lowercase)),
        lowercase_(o.lowercase) {}

  // Same order as tokenizers: clean, CJK spacing, strip accents (NFD first), lowercase.
  std::string normalize(std::string_view text) const override {
    std::string s;
    s.reserve(text.size());
    for (size_t i = 0; i < text.size();) {
      char32_t c = utf8_next(text, i);
      if (clean_text_) {
        if (c == 0 || c == 0xfffd || is_bert_control(c)) continue;
        if (is_bert_whitespace(c)) c = ' ';
      }
      if (chinese_ && is_chinese_char(c)) {
        s += ' ';
        utf8_append(s, c);
        s += ' ';
      } else {
        utf8_append(s, c);
      }
    }
    if (strip_accents_) {
      std::string d = text::normalize(s, NormalForm::nfd);
      s.clear();
      for (size_t i = 0; i < d.size();) {
        char32_t c = utf8_next(d, i);
        if (!is_nonspacing_mark(c)) utf8_append(s, c);
      }
    }
    if (lowercase_) s = lowercase(s);
    return s;
  }

 private:
  bool clean_text_, chinese_, strip_accents_, lowercase_;
};

class UnicodeNormalizer : public Normalizer {
 public:
  explicit UnicodeNormalizer(NormalForm f) : form_(f) {}
  std::string normalize(std::string_view text) const override { return text::normalize(text, form_); }

 private:
  NormalForm form_;
};

class LowercaseNormalizer : public Normalizer {
 public:
  std::string normalize(std::string_view text) const override { return lowercase(text); }
};

class StripAccentsNormalizer : public Normalizer {
 public:
  // StripAccents only drops combining marks; tokenizer.json pairs it with NFD to remove accents.
  std::string normalize(std::string_view text) const override {
    std::string s;
    for (size_t i = 0; i < text.size();) {
      char32_t c = utf8_next(text, i);
      if (!is_combining_mark(c)) utf8_append(s, c);
    }
    return s;
  }
};

class StripNormalizer : public Normalizer {
 public:
  StripNormalizer(bool left, bool right) : left_(left), right_(right) {}
  std::string normalize(std::string_view text) const override {
    size_t b = 0, e = text.size();
    if (left_) {
      while (b < e) {
        size_t i = b;
        if (!is_whitespace(utf8_next(text, i))) break;
        b = i;
      }
    }
    if (right_) {
      while (e > b) {
        size_t start = e - 1;
        while (start > b && (static_cast<unsigned char>(text[start]) & 0xc0) == 0x80) --start;
        size_t i = start;
        if (!is_whitespace(utf8_next(text, i))) break;
        e = start;
      }
    }
    return std::string(text.substr(b, e - b));
  }

 private:
  bool left_, right_;
};

class ReplaceNormalizer : public Normalizer {
 public:
  ReplaceNormalizer(Pattern pattern, std::string content) : pattern_(std::move(pattern)), content_(std::move(content)) {}
  std::string normalize(std::string_view text) const override {
    std::string out;
    size_t prev = 0;
    for (auto [b, e] : pattern_.find_all(text)) {
      out.append(text.substr(prev, b - prev));
      out += content_;
      prev = e;
    }
    out.append(text.substr(prev));
    return out;
  }

 private:
  Pattern pattern_;
  std::string content_;
};

class PrependNormalizer : public Normalizer {
 public:
  explicit PrependNormalizer(std::string p) : prepend_(std::move(p)) {}
  std::string normalize(std::string_view text) const override {
    return text.empty() ? std::string() : prepend_ + std::string(text);
  }

 private:
  std::string prepend_;
};

class ByteLevelNormalizer : public Normalizer {
 public:
  std::string normalize(std::string_view text) const override { return bytes_to_byte_level(text); }
};

class SequenceNormalizer : public Normalizer {
 public:
  explicit SequenceNormalizer(std::vector<std::unique_ptr<Normalizer>> items) : items_(std::move(items)) {}
  std::string normalize(std::string_view text) const override {
    std::string s(text);
    for (const auto& n : items_) s = n->normalize(s);
    return s;
  }

 private:
  std::vector<std::unique_ptr<Normalizer>> items_;
};

}  // namespace

std::unique_ptr<Normalizer> make_bert_normalizer(const BertNormalizerOptions& options) {
  return std::make_unique<BertNormalizer>(options);
}

std::unique_ptr<Normalizer> make_nfc_normalizer() { return std::make_unique<UnicodeNormalizer>(NormalForm::nfc); }

Pattern pattern_from_json(const Json& j, const std::string& where) {
  if (const Json* s = json_member(j, "String"); s && s->is_string()) return Pattern::literal(s->get<std::string>());
  if (const Json* r = json_member(j, "Regex"); r && r->is_string()) return Pattern::regex(r->get<std::string>(), where);
  json_fail(where, cat("expected {\"String\": …} or {\"Regex\": …}, found ", j.dump()));
}

std::unique_ptr<Normalizer> normalizer_from_json(const Json& j, const std::string& where) {
  std::string type = json_string(j, "type", where);
  if (type == "BertNormalizer") {
    BertNormalizerOptions o;
    o.clean_text = json_bool(j, "clean_text", true, where);
    o.handle_chinese_chars = json_bool(j, "handle_chinese_chars", true, where);
    o.strip_accents = json_opt_bool(j, "strip_accents", where);
    o.lowercase = json_bool(j, "lowercase", true, where);
    return make_bert_normalizer(o);
  }
  if (type == "NFC") return std::make_unique<UnicodeNormalizer>(NormalForm::nfc);
  if (type == "NFD") return std::make_unique<UnicodeNormalizer>(NormalForm::nfd);
  if (type == "NFKC") return std::make_unique<UnicodeNormalizer>(NormalForm::nfkc);
  if (type == "NFKD") return std::make_unique<UnicodeNormalizer>(NormalForm::nfkd);
  if (type == "Lowercase") return std::make_unique<LowercaseNormalizer>();
  if (type == "StripAccents") return std::make_unique<StripAccentsNormalizer>();
  if (type == "Strip")
    return std::make_unique<StripNormalizer>(json_bool(j, "strip_left", true, where), json_bool(j, "strip_right", true, where));
  if (type == "Prepend") return std::make_unique<PrependNormalizer>(json_string(j, "prepend", where));
  if (type == "ByteLevel") return std::make_unique<ByteLevelNormalizer>();
  if (type == "Replace") {
    return std::make_unique<ReplaceNormalizer>(pattern_from_json(json_required(j, "pattern", where), where + ".pattern"),
                                               json_string(j, "content", where));
  }
  if (type == "Precompiled") {
    const Json& m = json_required(j, "precompiled_charsmap", where);
    if (!m.is_string()) json_fail(where, "field 'precompiled_charsmap': expected a base64 string");
    return make_precompiled_normalizer(base64_decode(m.get<std::string>(), where + ".precompiled_charsmap"), where);
  }
  if (type == "Sequence") {
    const Json& list = json_required(j, "normalizers", where);
    if (!list.is_array()) json_fail(where, "field 'normalizers': expected an array");
    std::vector<std::unique_ptr<Normalizer>> items;
    for (size_t i = 0; i < list.size(); ++i) items.push_back(normalizer_from_json(list[i], cat(where, ".normalizers[", i, "]")));
    return std::make_unique<SequenceNormalizer>(std::move(items));
  }
  throw Error(ErrorKind::unsupported,
              cat(where, ": normalizer type '", type,
                  "' is not supported (supported: BertNormalizer, NFC, NFD, NFKC, NFKD, Lowercase, StripAccents, Strip, "
                  "Replace, Prepend, ByteLevel, Precompiled, Sequence)"));
}

}  // namespace rlx::text
