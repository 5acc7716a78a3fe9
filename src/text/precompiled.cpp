#include "text/precompiled.h"

#include <cstring>
#include <vector>

#include <utf8proc.h>

#include "rlx/error.h"
#include "text/utf8.h"
#include "util/strings.h"

namespace rlx::text {

namespace {

// darts-clone's 32-bit units: a label (the byte that leads here), an offset to the children,
// a flag for "a key ends here" (whose value sits in the unit the offset reaches).
struct Unit {
  uint32_t u;
  bool has_leaf() const { return (u >> 8) & 1; }
  uint32_t value() const { return u & 0x7fffffffu; }
  uint32_t label() const { return u & (0x80000000u | 0xffu); }
  uint32_t offset() const { return (u >> 10) << ((u & (1u << 9)) >> 6); }
};

class PrecompiledNormalizer : public Normalizer {
 public:
  PrecompiledNormalizer(const std::string& map, const std::string& where) {
    if (map.size() < 4) throw Error(ErrorKind::format, cat(where, ": precompiled_charsmap of ", map.size(), " bytes (truncated)"));
    uint32_t trie_bytes;
    std::memcpy(&trie_bytes, map.data(), 4);
    if (trie_bytes % 4 != 0 || trie_bytes > map.size() - 4 || trie_bytes == 0)
      throw Error(ErrorKind::format, cat(where, ": precompiled_charsmap's trie of ", trie_bytes, " bytes does not fit its ", map.size(), " bytes"));
    units_.resize(trie_bytes / 4);
    std::memcpy(units_.data(), map.data() + 4, trie_bytes);
    replacements_ = map.substr(4 + trie_bytes);
    if (size_t bad = utf8_invalid_at(replacements_); bad != std::string::npos)
      throw Error(ErrorKind::format, cat(where, ": precompiled_charsmap's replacements are not UTF-8 at byte ", bad));
  }

  std::string normalize(std::string_view text) const override {
    std::string out;
    out.reserve(text.size());
    // extended grapheme clusters, as the unicode-segmentation crate finds them
    size_t start = 0, i = 0;
    utf8proc_int32_t state = 0;
    char32_t prev = 0;
    while (i < text.size()) {
      size_t at = i;
      char32_t c = utf8_next(text, i);
      if (at > start && utf8proc_grapheme_break_stateful(static_cast<utf8proc_int32_t>(prev), static_cast<utf8proc_int32_t>(c), &state)) {
        cluster(text.substr(start, at - start), out);
        start = at;
      }
      prev = c;
    }
    if (start < text.size()) cluster(text.substr(start), out);
    return out;
  }

 private:
  void cluster(std::string_view g, std::string& out) const {
    if (g.size() < 6)
      if (const char* r = transform(g)) {
        out += r;
        return;
      }
    for (size_t i = 0; i < g.size();) {
      size_t at = i;
      utf8_next(g, i);
      std::string_view part = g.substr(at, i - at);
      if (const char* r = transform(part)) out += r;
      else out.append(part);
    }
  }

  // The replacement of the shortest prefix of `s` the trie holds, or null.
  const char* transform(std::string_view s) const {
    size_t node = 0;
    if (units_.empty()) return nullptr;
    node ^= Unit{units_[0]}.offset();
    for (unsigned char c : s) {
      if (c == 0) break;
      node ^= c;
      if (node >= units_.size()) return nullptr;
      Unit u{units_[node]};
      if (u.label() != c) return nullptr;
      node ^= u.offset();
      if (node >= units_.size()) return nullptr;
      if (u.has_leaf()) {
        uint32_t v = Unit{units_[node]}.value();
        if (v >= replacements_.size()) return nullptr;
        return replacements_.c_str() + v;  // NUL-terminated in the blob (or by the string's end)
      }
    }
    return nullptr;
  }

  std::vector<uint32_t> units_;
  std::string replacements_;
};

}  // namespace

std::unique_ptr<Normalizer> make_precompiled_normalizer(const std::string& charsmap, const std::string& where) {
  return std::make_unique<PrecompiledNormalizer>(charsmap, where);
}

}  // namespace rlx::text
