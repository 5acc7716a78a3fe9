// Byte-pair encoding: split the word into characters, then repeatedly apply the best-ranked
// merge (leftmost on ties) — the priority-queue form of tokenizers' Word::merge_all.
#include <cstdio>
#include <queue>
#include <unordered_map>

#include "rlx/error.h"
#include "text/model.h"
#include "text/utf8.h"
#include "util/strings.h"

namespace rlx::text {

namespace {

uint64_t pair_key(int32_t a, int32_t b) { return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b); }

struct MergeRule {
  int32_t rank;
  int32_t new_id;
};

struct Symbol {
  int32_t id;
  int prev, next;
  size_t len;  // bytes; 0 marks a symbol merged into its left neighbour
};

struct Candidate {
  int32_t rank;
  size_t pos;
  int32_t new_id;
  bool operator<(const Candidate& o) const {  // min-heap on (rank, pos)
    return rank != o.rank ? rank > o.rank : pos > o.pos;
  }
};

class Bpe : public Model {
 public:
  Bpe(Vocab vocab, const std::vector<std::pair<std::string, std::string>>& merges, const BpeOptions& o,
      const std::string& where)
      : options_(o) {
    vocab_ = std::move(vocab);
    size_t prefix_len = o.continuing_subword_prefix ? o.continuing_subword_prefix->size() : 0;
    merges_.reserve(merges.size());
    for (size_t i = 0; i < merges.size(); ++i) {
      const auto& [a, b] = merges[i];
      auto ia = vocab_.find(a), ib = vocab_.find(b);
      if (!ia || !ib)
        throw Error(ErrorKind::format, cat(where, ": merge ", i, " ('", a, "' '", b, "') names token '", !ia ? a : b,
                                           "' which is not in the vocabulary"));
      std::string merged = a + (b.size() >= prefix_len ? b.substr(prefix_len) : std::string());
      auto im = vocab_.find(merged);
      if (!im)
        throw Error(ErrorKind::format, cat(where, ": merge ", i, " ('", a, "' '", b, "') produces '", merged,
                                           "' which is not in the vocabulary"));
      merges_[pair_key(*ia, *ib)] = {static_cast<int32_t>(i), *im};  // a repeated pair keeps its last rank
    }
    if (o.unk_token) unk_id_ = vocab_.find(*o.unk_token);
  }

  const char* type() const override { return "BPE"; }

  void tokenize(std::string_view word, std::vector<int32_t>& ids) const override {
    if (word.empty()) return;
    if (options_.ignore_merges)
      if (auto id = vocab_.find(word)) {
        ids.push_back(*id);
        return;
      }
    std::vector<Symbol> symbols = initial_symbols(word);
    merge_all(symbols);
    for (const auto& s : symbols)
      if (s.len) ids.push_back(s.id);
  }

 private:
  void add(std::vector<Symbol>& symbols, int32_t id, size_t len) const {
    int n = static_cast<int>(symbols.size());
    if (n) symbols.back().next = n;
    symbols.push_back({id, n - 1, -1, len});
  }

  std::vector<Symbol> initial_symbols(std::string_view word) const {
    std::vector<Symbol> symbols;
    symbols.reserve(word.size());
    // A pending unknown symbol (id, bytes), held back so consecutive ones can fuse.
    bool unk = false;
    int32_t unk_id = -1;
    size_t unk_len = 0;
    std::string s;
    for (size_t i = 0; i < word.size();) {
      size_t begin = i;
      utf8_next(word, i);
      size_t len = i - begin;
      s.clear();
      if (begin > 0 && options_.continuing_subword_prefix) s = *options_.continuing_subword_prefix;
      s.append(word.substr(begin, len));
      if (i == word.size() && options_.end_of_word_suffix) s += *options_.end_of_word_suffix;
      if (auto id = vocab_.find(s)) {
        if (unk) add(symbols, unk_id, unk_len), unk = false;
        add(symbols, *id, len);
        continue;
      }
      if (options_.byte_fallback) {
        std::vector<int32_t> bytes;
        for (unsigned char b : s) {
          char code[8];
          std::snprintf(code, sizeof code, "<0x%02X>", b);
          auto id = vocab_.find(code);
          if (!id) break;
          bytes.push_back(*id);
        }
        if (bytes.size() == s.size()) {
          for (int32_t id : bytes) add(symbols, id, 1);
          continue;
        }
      }
      if (options_.unk_token) {  // without an unknown token the character is dropped, as in tokenizers
        if (!unk_id_)
          throw Error(ErrorKind::format, cat("BPE unk_token '", *options_.unk_token, "' is not in the vocabulary"));
        if (unk && options_.fuse_unk) {
          unk_len += len;
        } else {
          if (unk) add(symbols, unk_id, unk_len);
          unk = true, unk_id = *unk_id_, unk_len = len;
        }
      }
    }
    if (unk) add(symbols, unk_id, unk_len);
    return symbols;
  }

  void merge_all(std::vector<Symbol>& symbols) const {
    std::priority_queue<Candidate> queue;
    for (size_t i = 0; i + 1 < symbols.size(); ++i)
      if (auto it = merges_.find(pair_key(symbols[i].id, symbols[i + 1].id)); it != merges_.end())
        queue.push({it->second.rank, i, it->second.new_id});
    while (!queue.empty()) {
      Candidate top = queue.top();
      queue.pop();
      Symbol& cur = symbols[top.pos];
      if (cur.len == 0 || cur.next == -1) continue;
      size_t next_pos = static_cast<size_t>(cur.next);
      Symbol right = symbols[next_pos];
      auto it = merges_.find(pair_key(cur.id, right.id));
      if (it == merges_.end() || it->second.new_id != top.new_id) continue;  // stale entry
      cur.id = top.new_id;
      cur.len += right.len;
      cur.next = right.next;
      symbols[next_pos].len = 0;
      if (right.next > -1 && static_cast<size_t>(right.next) < symbols.size()) symbols[right.next].prev = static_cast<int>(top.pos);
      if (cur.prev >= 0) {
        const Symbol& prev = symbols[cur.prev];
        if (auto m = merges_.find(pair_key(prev.id, cur.id)); m != merges_.end())
          queue.push({m->second.rank, static_cast<size_t>(cur.prev), m->second.new_id});
      }
      if (cur.next >= 0 && static_cast<size_t>(cur.next) < symbols.size()) {
        const Symbol& nxt = symbols[cur.next];
        if (auto m = merges_.find(pair_key(cur.id, nxt.id)); m != merges_.end())
          queue.push({m->second.rank, top.pos, m->second.new_id});
      }
    }
  }

  BpeOptions options_;
  std::unordered_map<uint64_t, MergeRule> merges_;
  std::optional<int32_t> unk_id_;
};

}  // namespace

std::unique_ptr<Model> make_bpe(Vocab vocab, const std::vector<std::pair<std::string, std::string>>& merges,
                                const BpeOptions& options, const std::string& where) {
  return std::make_unique<Bpe>(std::move(vocab), merges, options, where);
}

}  // namespace rlx::text
