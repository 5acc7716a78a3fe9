#include "text/decoder.h"

#include <cctype>
#include <cstdlib>

#include "rlx/error.h"
#include "text/byte_level.h"
#include "text/normalizer.h"
#include "text/utf8.h"
#include "util/strings.h"

namespace rlx::text {

std::string Decoder::decode(std::vector<std::string> tokens) const {
  std::string out;
  for (const auto& t : decode_chain(std::move(tokens))) out += t;
  return out;
}

namespace {

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
}

class ByteLevelDecoder : public Decoder {
 public:
  // All tokens become one byte string; a token with a character outside the byte table (an added
  // token such as "<|im_end|>" written plainly) contributes its own UTF-8 bytes.
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override {
    std::string bytes;
    for (const auto& t : tokens) {
      std::string mapped;
      bool ok = true;
      for (size_t i = 0; i < t.size() && ok;) {
        int b = unicode_to_byte(utf8_next(t, i));
        if (b < 0) ok = false;
        else mapped += static_cast<char>(b);
      }
      bytes += ok ? mapped : t;
    }
    return {utf8_lossy(bytes)};
  }
};

class WordPieceDecoder : public Decoder {
 public:
  WordPieceDecoder(std::string prefix, bool cleanup) : prefix_(std::move(prefix)), cleanup_(cleanup) {}
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override {
    for (size_t i = 0; i < tokens.size(); ++i) {
      std::string& t = tokens[i];
      if (i != 0) {
        if (starts_with(t, prefix_)) {
          size_t at = t.find(prefix_);
          t.erase(at, prefix_.size());
        } else {
          t = " " + t;
        }
      }
      if (cleanup_) cleanup(t);
    }
    return tokens;
  }

  // tokenizers' wordpiece cleanup: undo the spaces BERT's splitting put before punctuation.
  static void cleanup(std::string& s) {
    replace_all(s, " .", ".");
    replace_all(s, " ?", "?");
    replace_all(s, " !", "!");
    replace_all(s, " ,", ",");
    replace_all(s, " ' ", "'");
    replace_all(s, " n't", "n't");
    replace_all(s, " 'm", "'m");
    replace_all(s, " do not", " don't");
    replace_all(s, " 's", "'s");
    replace_all(s, " 've", "'ve");
    replace_all(s, " 're", "'re");
  }

 private:
  std::string prefix_;
  bool cleanup_;
};

class ByteFallbackDecoder : public Decoder {
 public:
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override {
    std::vector<std::string> out;
    std::string pending;
    auto flush = [&] {
      if (pending.empty()) return;
      if (utf8_invalid_at(pending) == std::string::npos)
        out.push_back(pending);
      else
        for (size_t i = 0; i < pending.size(); ++i) out.push_back("\xef\xbf\xbd");
      pending.clear();
    };
    for (auto& t : tokens) {
      if (t.size() == 6 && starts_with(t, "<0x") && t[5] == '>' && std::isxdigit(static_cast<unsigned char>(t[3])) &&
          std::isxdigit(static_cast<unsigned char>(t[4]))) {
        pending += static_cast<char>(std::strtol(t.substr(3, 2).c_str(), nullptr, 16));
      } else {
        flush();
        out.push_back(std::move(t));
      }
    }
    flush();
    return out;
  }
};

class FuseDecoder : public Decoder {
 public:
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override {
    std::string all;
    for (const auto& t : tokens) all += t;
    return {all};
  }
};

class StripDecoder : public Decoder {
 public:
  StripDecoder(std::string content, size_t start, size_t stop) : content_(std::move(content)), start_(start), stop_(stop) {}
  // Removes up to start_ leading and stop_ trailing copies of the content character.
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override {
    for (auto& t : tokens) {
      size_t b = 0, e = t.size();
      for (size_t n = 0; n < start_ && t.compare(b, content_.size(), content_) == 0 && b < e; ++n) b += content_.size();
      for (size_t n = 0; n < stop_ && e >= b + content_.size() && t.compare(e - content_.size(), content_.size(), content_) == 0; ++n)
        e -= content_.size();
      t = t.substr(b, e - b);
    }
    return tokens;
  }

 private:
  std::string content_;
  size_t start_, stop_;
};

class ReplaceDecoder : public Decoder {
 public:
  ReplaceDecoder(Pattern p, std::string content) : pattern_(std::move(p)), content_(std::move(content)) {}
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override {
    for (auto& t : tokens) {
      std::string out;
      size_t prev = 0;
      for (auto [b, e] : pattern_.find_all(t)) {
        out.append(t, prev, b - prev);
        out += content_;
        prev = e;
      }
      out.append(t, prev, std::string::npos);
      t = std::move(out);
    }
    return tokens;
  }

 private:
  Pattern pattern_;
  std::string content_;
};

// tokenizers' Metaspace decoder: the replacement becomes ' ', except in the first token, where
// it is dropped (the space the pre-tokenizer prepended) — every one of them, as tokenizers does.
class MetaspaceDecoder : public Decoder {
 public:
  MetaspaceDecoder(std::string replacement, bool prepend) : rep_(std::move(replacement)), prepend_(prepend) {}
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override {
    for (size_t i = 0; i < tokens.size(); ++i) {
      std::string out;
      const std::string& t = tokens[i];
      for (size_t k = 0; k < t.size();) {
        if (t.compare(k, rep_.size(), rep_) == 0) {
          if (!(i == 0 && prepend_)) out += ' ';
          k += rep_.size();
        } else {
          out += t[k++];
        }
      }
      tokens[i] = std::move(out);
    }
    return tokens;
  }

 private:
  std::string rep_;
  bool prepend_;
};

class SequenceDecoder : public Decoder {
 public:
  explicit SequenceDecoder(std::vector<std::unique_ptr<Decoder>> items) : items_(std::move(items)) {}
  std::vector<std::string> decode_chain(std::vector<std::string> tokens) const override {
    for (const auto& d : items_) tokens = d->decode_chain(std::move(tokens));
    return tokens;
  }

 private:
  std::vector<std::unique_ptr<Decoder>> items_;
};

}  // namespace

std::unique_ptr<Decoder> make_byte_level_decoder() { return std::make_unique<ByteLevelDecoder>(); }

std::unique_ptr<Decoder> make_wordpiece_decoder(std::string prefix, bool cleanup) {
  return std::make_unique<WordPieceDecoder>(std::move(prefix), cleanup);
}

std::unique_ptr<Decoder> decoder_from_json(const Json& j, const std::string& where) {
  std::string type = json_string(j, "type", where);
  if (type == "ByteLevel") return make_byte_level_decoder();
  if (type == "WordPiece")
    return make_wordpiece_decoder(json_opt_string(j, "prefix", where).value_or("##"), json_bool(j, "cleanup", true, where));
  if (type == "ByteFallback") return std::make_unique<ByteFallbackDecoder>();
  if (type == "Fuse") return std::make_unique<FuseDecoder>();
  if (type == "Strip") {
    int64_t start = json_int(j, "start", 0, where), stop = json_int(j, "stop", 0, where);
    if (start < 0 || stop < 0) json_fail(where, "fields 'start' and 'stop' must be >= 0");
    return std::make_unique<StripDecoder>(json_string(j, "content", where), start, stop);
  }
  if (type == "Replace")
    return std::make_unique<ReplaceDecoder>(pattern_from_json(json_required(j, "pattern", where), where + ".pattern"),
                                            json_string(j, "content", where));
  if (type == "Metaspace") {
    std::string scheme = json_opt_string(j, "prepend_scheme", where).value_or(json_bool(j, "add_prefix_space", true, where) ? "always" : "never");
    return std::make_unique<MetaspaceDecoder>(json_opt_string(j, "replacement", where).value_or("\u2581"), scheme != "never");
  }
  if (type == "Sequence") {
    const Json& list = json_required(j, "decoders", where);
    if (!list.is_array()) json_fail(where, "field 'decoders': expected an array");
    std::vector<std::unique_ptr<Decoder>> items;
    for (size_t i = 0; i < list.size(); ++i) items.push_back(decoder_from_json(list[i], cat(where, ".decoders[", i, "]")));
    return std::make_unique<SequenceDecoder>(std::move(items));
  }
  throw Error(ErrorKind::unsupported, cat(where, ": decoder type '", type,
                                          "' is not supported (supported: ByteLevel, WordPiece, ByteFallback, Fuse, Strip, Replace, Metaspace, Sequence)"));
}

}  // namespace rlx::text
