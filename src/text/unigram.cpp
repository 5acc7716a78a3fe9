// tokenizers' Unigram model: the segmentation of a word into vocabulary pieces with the highest
// total score, found left to right as its encode_optimized does (so ties resolve the same way:
// the first candidate to reach a position keeps it unless a later one is strictly better).
#include <algorithm>
#include <cstdio>
#include <limits>

#include "rlx/error.h"
#include "text/model.h"
#include "text/utf8.h"
#include "util/strings.h"

namespace rlx::text {

namespace {

// Below the least likely piece: what an unknown character costs (sentencepiece's kUnkPenalty).
constexpr double kUnkPenalty = 10.0;

class UnigramModel : public Model {
 public:
  UnigramModel(std::vector<std::pair<std::string, double>> pieces, const UnigramOptions& o, const std::string& where)
      : pieces_(std::move(pieces)), unk_id_(o.unk_id), byte_fallback_(o.byte_fallback) {
    if (pieces_.empty()) throw Error(ErrorKind::format, cat(where, ": a Unigram model needs at least one piece"));
    if (unk_id_ && (*unk_id_ < 0 || static_cast<size_t>(*unk_id_) >= pieces_.size()))
      throw Error(ErrorKind::format, cat(where, ": unk_id ", *unk_id_, " is outside the ", pieces_.size(), " pieces"));
    min_score_ = std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < pieces_.size(); ++i) {
      vocab_.add(pieces_[i].first, static_cast<int32_t>(i));
      min_score_ = std::min(min_score_, pieces_[i].second);
      max_len_ = std::max(max_len_, pieces_[i].first.size());
    }
  }
  const char* type() const override { return "Unigram"; }

  void tokenize(std::string_view word, std::vector<int32_t>& ids) const override {
    std::vector<std::string> tokens;
    tokenize_tokens(word, ids, tokens);
  }

  void tokenize_tokens(std::string_view word, std::vector<int32_t>& ids, std::vector<std::string>& tokens) const override {
    for (const std::string& piece : segment(word)) {
      if (auto id = vocab_.find(piece)) {
        ids.push_back(*id);
        tokens.push_back(piece);
        continue;
      }
      if (byte_fallback_) {  // every byte as <0xXX>, when the vocabulary has them all
        std::vector<int32_t> bytes;
        for (unsigned char b : piece) {
          char name[8];
          std::snprintf(name, sizeof name, "<0x%02X>", b);
          auto id = vocab_.find(name);
          if (!id) break;
          bytes.push_back(*id);
        }
        if (bytes.size() == piece.size()) {
          for (int32_t id : bytes) ids.push_back(id), tokens.push_back(*vocab_.token(id));
          continue;
        }
      }
      if (!unk_id_) throw Error(ErrorKind::invalid_argument, cat("Unigram: ", json_quote(piece), " is not in the vocabulary and the model has no unk_id"));
      ids.push_back(*unk_id_);
      tokens.push_back(piece);  // an unknown piece keeps its text
    }
  }

 private:
  struct Best {
    int32_t id = -1;
    double score = 0;
    int64_t starts_at = -1;
  };

  std::vector<std::string> segment(std::string_view s) const {
    const size_t n = s.size();
    const double unk_score = min_score_ - kUnkPenalty;
    std::vector<Best> best(n + 1);
    best[0].starts_at = 0;
    for (size_t at = 0; at < n;) {
      size_t next = at;
      utf8_next(s, next);
      const size_t mblen = next - at;
      const double here = best[at].score;
      bool single = false;
      for (size_t len = 1; len <= max_len_ && at + len <= n; ++len) {
        auto id = vocab_.find(s.substr(at, len));
        if (!id) continue;
        double cand = pieces_[static_cast<size_t>(*id)].second + here;
        Best& t = best[at + len];
        if (t.starts_at < 0 || cand > t.score) t = {*id, cand, static_cast<int64_t>(at)};
        single = single || len == mblen;
      }
      if (!single) {
        if (!unk_id_) throw Error(ErrorKind::invalid_argument, cat("Unigram: no piece covers ", json_quote(std::string(s.substr(at, mblen))), " and the model has no unk_id"));
        double cand = unk_score + here;
        Best& t = best[at + mblen];
        if (t.starts_at < 0 || cand > t.score) t = {*unk_id_, cand, static_cast<int64_t>(at)};
      }
      at = next;
    }
    // Back from the end; consecutive unknown pieces fuse into one (tokenizers' fuse_unk).
    std::vector<std::string> out;
    std::string unk;
    for (size_t end = n; end > 0;) {
      const Best& b = best[end];
      auto start = static_cast<size_t>(b.starts_at);
      if (unk_id_ && b.id == *unk_id_) {
        unk.insert(0, s.substr(start, end - start));
      } else {
        if (!unk.empty()) out.push_back(std::move(unk)), unk.clear();
        out.push_back(pieces_[static_cast<size_t>(b.id)].first);
      }
      end = start;
    }
    if (!unk.empty()) out.push_back(std::move(unk));
    std::reverse(out.begin(), out.end());
    return out;
  }

  std::vector<std::pair<std::string, double>> pieces_;
  std::optional<int32_t> unk_id_;
  bool byte_fallback_;
  double min_score_ = 0;
  size_t max_len_ = 0;
};

}  // namespace

std::unique_ptr<Model> make_unigram(std::vector<std::pair<std::string, double>> pieces, const UnigramOptions& options,
                                    const std::string& where) {
  return std::make_unique<UnigramModel>(std::move(pieces), options, where);
}

}  // namespace rlx::text
