#include "text/post_processor.h"

#include <map>

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::text {

namespace {

class BertProcessing : public PostProcessor {
 public:
  BertProcessing(std::string cls, int32_t cls_id, std::string sep, int32_t sep_id)
      : cls_(std::move(cls)), sep_(std::move(sep)), cls_id_(cls_id), sep_id_(sep_id) {}
  size_t added_tokens(bool is_pair) const override { return is_pair ? 3 : 2; }
  std::vector<Encoding> process(std::vector<Encoding> encodings, bool add_special) const override {
    if (!add_special) return encodings;
    std::vector<Encoding> out;
    Encoding first;
    first.push(cls_id_, cls_, 0, true);
    for (auto& t : encodings[0].type_ids) t = 0;
    first.append(encodings[0]);
    first.push(sep_id_, sep_, 0, true);
    out.push_back(std::move(first));
    if (encodings.size() > 1) {
      Encoding second = std::move(encodings[1]);
      for (auto& t : second.type_ids) t = 1;
      second.push(sep_id_, sep_, 1, true);
      out.push_back(std::move(second));
    }
    return out;
  }

 private:
  std::string cls_, sep_;
  int32_t cls_id_, sep_id_;
};

class TemplateProcessing : public PostProcessor {
 public:
  TemplateProcessing(std::vector<TemplatePiece> single, std::vector<TemplatePiece> pair,
                     std::map<std::string, TemplateSpecialToken> specials)
      : single_(std::move(single)), pair_(std::move(pair)), specials_(std::move(specials)) {}

  size_t added_tokens(bool is_pair) const override {
    size_t n = 0;
    for (const auto& p : is_pair ? pair_ : single_)
      if (!p.is_sequence) n += specials_.at(p.special).ids.size();
    return n;
  }

  std::vector<Encoding> process(std::vector<Encoding> encodings, bool add_special) const override {
    const auto& pieces = encodings.size() > 1 ? pair_ : single_;
    std::vector<Encoding> out;
    for (const auto& p : pieces) {
      if (p.is_sequence) {
        if (static_cast<size_t>(p.sequence) >= encodings.size())
          throw Error(ErrorKind::invalid_argument, "the post-processor template names $B but only one sequence was given");
        Encoding e = encodings[p.sequence];
        for (auto& t : e.type_ids) t = p.type_id;  // the template decides the segment, even without specials
        out.push_back(std::move(e));
      } else if (add_special) {
        const auto& s = specials_.at(p.special);
        Encoding e;
        for (size_t i = 0; i < s.ids.size(); ++i) e.push(s.ids[i], s.tokens[i], p.type_id, true);
        out.push_back(std::move(e));
      }
    }
    return out;
  }

 private:
  std::vector<TemplatePiece> single_, pair_;
  std::map<std::string, TemplateSpecialToken> specials_;
};

// ByteLevel's post-processing only trims offsets, which RLX does not track.
class PassThrough : public PostProcessor {
 public:
  size_t added_tokens(bool) const override { return 0; }
  std::vector<Encoding> process(std::vector<Encoding> encodings, bool) const override { return encodings; }
};

class SequenceProcessing : public PostProcessor {
 public:
  explicit SequenceProcessing(std::vector<std::unique_ptr<PostProcessor>> items) : items_(std::move(items)) {}
  size_t added_tokens(bool is_pair) const override {
    size_t n = 0;
    for (const auto& p : items_) n += p->added_tokens(is_pair);
    return n;
  }
  std::vector<Encoding> process(std::vector<Encoding> encodings, bool add_special) const override {
    for (const auto& p : items_) encodings = p->process(std::move(encodings), add_special);
    return encodings;
  }

 private:
  std::vector<std::unique_ptr<PostProcessor>> items_;
};

std::pair<std::string, int32_t> token_and_id(const Json& j, const char* key, const std::string& where) {
  const Json& v = json_required(j, key, where);
  if (!v.is_array() || v.size() != 2 || !v[0].is_string() || !v[1].is_number_integer())
    json_fail(where, cat("field '", key, "': expected [\"token\", id], found ", v.dump()));
  return {v[0].get<std::string>(), v[1].get<int32_t>()};
}

std::vector<TemplatePiece> template_from_json(const Json& j, const std::string& where) {
  if (!j.is_array()) json_fail(where, cat("expected an array of template pieces, found ", j.type_name()));
  std::vector<TemplatePiece> out;
  for (size_t i = 0; i < j.size(); ++i) {
    std::string at = cat(where, "[", i, "]");
    TemplatePiece p;
    if (const Json* s = json_member(j[i], "Sequence")) {
      p.is_sequence = true;
      std::string id = json_string(*s, "id", at);
      if (id != "A" && id != "B") json_fail(at, cat("sequence id must be A or B, found ", json_quote(id)));
      p.sequence = id == "A" ? 0 : 1;
      p.type_id = static_cast<int32_t>(json_int(*s, "type_id", 0, at));
    } else if (const Json* t = json_member(j[i], "SpecialToken")) {
      p.special = json_string(*t, "id", at);
      p.type_id = static_cast<int32_t>(json_int(*t, "type_id", 0, at));
    } else {
      json_fail(at, cat("expected {\"Sequence\": …} or {\"SpecialToken\": …}, found ", j[i].dump()));
    }
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace

std::unique_ptr<PostProcessor> make_bert_processing(std::string cls, int32_t cls_id, std::string sep, int32_t sep_id) {
  return std::make_unique<BertProcessing>(std::move(cls), cls_id, std::move(sep), sep_id);
}

std::unique_ptr<PostProcessor> make_template_processing(
    std::vector<TemplatePiece> single, std::vector<TemplatePiece> pair,
    std::vector<std::pair<std::string, TemplateSpecialToken>> special_tokens) {
  std::map<std::string, TemplateSpecialToken> specials(special_tokens.begin(), special_tokens.end());
  for (const auto* pieces : {&single, &pair})
    for (const auto& p : *pieces)
      if (!p.is_sequence && !specials.count(p.special))
        throw Error(ErrorKind::format, cat("post-processor template names special token '", p.special,
                                           "' which is missing from its special_tokens"));
  return std::make_unique<TemplateProcessing>(std::move(single), std::move(pair), std::move(specials));
}

std::unique_ptr<PostProcessor> post_processor_from_json(const Json& j, const std::string& where) {
  std::string type = json_string(j, "type", where);
  if (type == "BertProcessing") {
    auto [sep, sep_id] = token_and_id(j, "sep", where);
    auto [cls, cls_id] = token_and_id(j, "cls", where);
    return make_bert_processing(cls, cls_id, sep, sep_id);
  }
  if (type == "TemplateProcessing") {
    auto single = template_from_json(json_required(j, "single", where), where + ".single");
    auto pair = template_from_json(json_required(j, "pair", where), where + ".pair");
    std::vector<std::pair<std::string, TemplateSpecialToken>> specials;
    if (const Json* st = json_member(j, "special_tokens")) {
      for (auto it = st->begin(); it != st->end(); ++it) {
        std::string at = cat(where, ".special_tokens[", json_quote(it.key()), "]");
        TemplateSpecialToken s;
        const Json& ids = json_required(*it, "ids", at);
        const Json& tokens = json_required(*it, "tokens", at);
        if (!ids.is_array() || !tokens.is_array() || ids.size() != tokens.size())
          json_fail(at, "expected arrays 'ids' and 'tokens' of equal length");
        for (size_t i = 0; i < ids.size(); ++i) {
          if (!ids[i].is_number_integer() || !tokens[i].is_string()) json_fail(at, "ids must be integers and tokens strings");
          s.ids.push_back(ids[i].get<int32_t>());
          s.tokens.push_back(tokens[i].get<std::string>());
        }
        specials.emplace_back(it.key(), std::move(s));
      }
    }
    return make_template_processing(std::move(single), std::move(pair), std::move(specials));
  }
  if (type == "ByteLevel") return std::make_unique<PassThrough>();
  if (type == "Sequence") {
    const Json& list = json_required(j, "processors", where);
    if (!list.is_array()) json_fail(where, "field 'processors': expected an array");
    std::vector<std::unique_ptr<PostProcessor>> items;
    for (size_t i = 0; i < list.size(); ++i) items.push_back(post_processor_from_json(list[i], cat(where, ".processors[", i, "]")));
    return std::make_unique<SequenceProcessing>(std::move(items));
  }
  throw Error(ErrorKind::unsupported, cat(where, ": post-processor type '", type,
                                          "' is not supported (supported: BertProcessing, TemplateProcessing, ByteLevel, Sequence)"));
}

}  // namespace rlx::text
