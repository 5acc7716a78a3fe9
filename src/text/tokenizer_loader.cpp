#include "text/tokenizer_loader.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::text {

namespace fs = std::filesystem;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::io, cat(path, ": cannot open for reading"));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw Error(ErrorKind::io, cat(path, ": read failed"));
  return ss.str();
}

Json parse_json(const std::string& text, const std::string& source) {
  try {
    return Json::parse(text);
  } catch (const Json::exception& e) {  // parse errors and out-of-range numbers (1e999999) alike
    throw Error(ErrorKind::format, cat(source, ": not valid JSON: ", e.what()));
  }
}

std::vector<AddedToken> added_tokens_from_json(const Json& j, const std::string& where) {
  std::vector<AddedToken> out;
  if (!j.is_array()) json_fail(where, cat("expected an array, found ", j.type_name()));
  for (size_t i = 0; i < j.size(); ++i) {
    std::string at = cat(where, "[", i, "]");
    AddedToken t;
    t.content = json_string(j[i], "content", at);
    t.single_word = json_bool(j[i], "single_word", false, at);
    t.lstrip = json_bool(j[i], "lstrip", false, at);
    t.rstrip = json_bool(j[i], "rstrip", false, at);
    t.special = json_bool(j[i], "special", false, at);
    t.normalized = json_bool(j[i], "normalized", !t.special, at);
    out.push_back(std::move(t));
  }
  return out;
}

Direction direction_from_json(const Json& j, const std::string& where) {
  auto d = json_opt_string(j, "direction", where).value_or("Right");
  if (d == "Right") return Direction::right;
  if (d == "Left") return Direction::left;
  json_fail(where, cat("field 'direction': expected Left or Right, found ", json_quote(d)));
}

void apply_truncation_padding(Tokenizer& tok, const Json& root, const std::string& source) {
  if (const Json* t = json_member(root, "truncation")) {
    std::string where = source + ": truncation";
    TruncationOptions o;
    o.max_length = static_cast<size_t>(json_int(*t, "max_length", 512, where));
    o.direction = direction_from_json(*t, where);
    auto s = json_opt_string(*t, "strategy", where).value_or("LongestFirst");
    if (s == "LongestFirst") o.strategy = TruncationStrategy::longest_first;
    else if (s == "OnlyFirst") o.strategy = TruncationStrategy::only_first;
    else if (s == "OnlySecond") o.strategy = TruncationStrategy::only_second;
    else json_fail(where, cat("field 'strategy': unknown value ", json_quote(s)));
    tok.set_truncation(o);
  }
  if (const Json* p = json_member(root, "padding")) {
    std::string where = source + ": padding";
    PaddingOptions o;
    if (const Json* s = json_member(*p, "strategy"); s && s->is_object()) {
      o.length = static_cast<size_t>(json_int(*s, "Fixed", 0, where));
    }
    o.direction = direction_from_json(*p, where);
    o.pad_to_multiple_of = static_cast<size_t>(json_int(*p, "pad_to_multiple_of", 0, where));
    o.pad_id = static_cast<int32_t>(json_int(*p, "pad_id", 0, where));
    o.pad_type_id = static_cast<int32_t>(json_int(*p, "pad_type_id", 0, where));
    o.pad_token = json_opt_string(*p, "pad_token", where).value_or("[PAD]");
    tok.set_padding(o);
  }
}

Tokenizer tokenizer_from_root(const Json& root, const std::string& source) {
  if (!root.is_object()) json_fail(source, "expected a JSON object");
  Tokenizer::Parts parts;
  parts.model = model_from_json(json_required(root, "model", source), source + ": model");
  if (const Json* n = json_member(root, "normalizer")) parts.normalizer = normalizer_from_json(*n, source + ": normalizer");
  if (const Json* p = json_member(root, "pre_tokenizer")) parts.pre_tokenizer = pre_tokenizer_from_json(*p, source + ": pre_tokenizer");
  if (const Json* p = json_member(root, "post_processor")) parts.post_processor = post_processor_from_json(*p, source + ": post_processor");
  if (const Json* d = json_member(root, "decoder")) parts.decoder = decoder_from_json(*d, source + ": decoder");
  if (const Json* a = json_member(root, "added_tokens")) parts.added_tokens = added_tokens_from_json(*a, source + ": added_tokens");
  Tokenizer tok(std::move(parts));
  apply_truncation_padding(tok, root, source);
  return tok;
}

// A special token in tokenizer_config.json / special_tokens_map.json: "text" or {"content": …}.
std::optional<std::string> special_token_text(const Json& cfg, const char* key) {
  const Json* v = json_member(cfg, key);
  if (!v) return std::nullopt;
  if (v->is_string()) return v->get<std::string>();
  if (v->is_object())
    if (const Json* c = json_member(*v, "content"); c && c->is_string()) return c->get<std::string>();
  return std::nullopt;
}

std::optional<Json> read_optional_json(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return std::nullopt;
  return parse_json(read_file(path.string()), path.string());
}

void apply_config(Tokenizer& tok, const Json& config, const Json& special_map) {
  SpecialTokenIds ids = tok.special_ids();
  auto resolve = [&](const char* key, std::optional<int32_t>& slot) {
    auto text = special_token_text(config, key);
    if (!text) text = special_token_text(special_map, key);
    if (text)
      if (auto id = tok.token_to_id(*text)) slot = id;
  };
  resolve("bos_token", ids.bos);
  resolve("eos_token", ids.eos);
  resolve("pad_token", ids.pad);
  resolve("unk_token", ids.unk);
  resolve("cls_token", ids.cls);
  resolve("sep_token", ids.sep);
  resolve("mask_token", ids.mask);
  tok.set_special_ids(ids);
  // transformers writes int(1e30) when a model sets no limit: treat huge values as none.
  if (const Json* m = json_member(config, "model_max_length"); m && m->is_number()) {
    double v = m->get<double>();
    if (v > 0 && v <= 1e9) tok.set_model_max_length(static_cast<size_t>(v));
  }
}

// WordPiece models fall back on BERT's token names when the config does not name them.
void default_bert_specials(Tokenizer& tok) {
  SpecialTokenIds ids = tok.special_ids();
  auto fill = [&](std::optional<int32_t>& slot, const char* name) {
    if (!slot) slot = tok.token_to_id(name);
  };
  fill(ids.unk, "[UNK]");
  fill(ids.cls, "[CLS]");
  fill(ids.sep, "[SEP]");
  fill(ids.pad, "[PAD]");
  fill(ids.mask, "[MASK]");
  tok.set_special_ids(ids);
}

}  // namespace

Tokenizer tokenizer_from_json(std::string_view json_text, const std::string& source) {
  return tokenizer_from_root(parse_json(std::string(json_text), source), source);
}

Tokenizer load_tokenizer_json(const std::string& path) { return tokenizer_from_json(read_file(path), path); }

Tokenizer load_bert_vocab(const std::string& vocab_path, const BertVocabOptions& o) {
  std::string text = read_file(vocab_path);
  Vocab vocab;
  // Like BertTokenizer's load_vocab: a line is a token with only its "\n" removed.
  int32_t id = 0;
  for (size_t pos = 0; pos < text.size(); ++id) {
    size_t nl = text.find('\n', pos);
    size_t end = nl == std::string::npos ? text.size() : nl;
    vocab.add(text.substr(pos, end - pos), id);
    pos = nl == std::string::npos ? text.size() : nl + 1;
  }
  if (vocab.size() == 0) throw Error(ErrorKind::format, cat(vocab_path, ": the vocabulary is empty"));
  auto require = [&](const std::string& token, const char* role) {
    auto found = vocab.find(token);
    if (!found)
      throw Error(ErrorKind::format, cat(vocab_path, ": ", role, " '", token, "' is not in the vocabulary"));
    return *found;
  };
  int32_t cls_id = require(o.cls_token, "cls_token"), sep_id = require(o.sep_token, "sep_token");

  Tokenizer::Parts parts;
  BertNormalizerOptions n;
  n.handle_chinese_chars = o.tokenize_chinese_chars;
  n.strip_accents = o.strip_accents;
  n.lowercase = o.do_lower_case;
  parts.normalizer = make_bert_normalizer(n);
  parts.pre_tokenizer = make_bert_pre_tokenizer();
  WordPieceOptions w;
  w.unk_token = o.unk_token;
  w.max_input_chars_per_word = o.max_input_chars_per_word;
  std::vector<std::string> specials = {o.pad_token, o.unk_token, o.cls_token, o.sep_token, o.mask_token};
  for (const auto& s : specials)
    if (vocab.find(s)) parts.added_tokens.push_back({s, false, false, false, false, true});
  parts.model = make_wordpiece(std::move(vocab), w);
  parts.post_processor = make_template_processing(
      {{false, 0, o.cls_token, 0}, {true, 0, "", 0}, {false, 0, o.sep_token, 0}},
      {{false, 0, o.cls_token, 0}, {true, 0, "", 0}, {false, 0, o.sep_token, 0}, {true, 1, "", 1}, {false, 0, o.sep_token, 1}},
      {{o.cls_token, {{cls_id}, {o.cls_token}}}, {o.sep_token, {{sep_id}, {o.sep_token}}}});
  parts.decoder = make_wordpiece_decoder("##", true);
  Tokenizer tok(std::move(parts));
  default_bert_specials(tok);
  return tok;
}

Tokenizer load_tokenizer(const std::string& path) {
  std::error_code ec;
  fs::path p(path);
  if (!fs::exists(p, ec))
    throw Error(ErrorKind::io, cat(path, ": no such file or directory (expected a Hugging Face model directory or a tokenizer.json)"));
  fs::path dir = fs::is_directory(p, ec) ? p : p.parent_path();
  fs::path tokenizer_json = fs::is_directory(p, ec) ? dir / "tokenizer.json" : p;
  Json config = read_optional_json(dir / "tokenizer_config.json").value_or(Json::object());
  Json special_map = read_optional_json(dir / "special_tokens_map.json").value_or(Json::object());
  const std::string cfg_where = (dir / "tokenizer_config.json").string();
  auto given_bool = [&](const char* key) { return json_opt_bool(config, key, cfg_where); };

  if (fs::is_regular_file(tokenizer_json, ec)) {
    std::string source = tokenizer_json.string();
    Json root = parse_json(read_file(source), source);
    // transformers' BertTokenizerFast rebuilds the BertNormalizer from tokenizer_config.json's
    // options when they differ from tokenizer.json; do the same for the options it gives.
    if (Json* n = root.is_object() && root.contains("normalizer") ? &root["normalizer"] : nullptr;
        n && n->is_object() && n->value("type", "") == "BertNormalizer") {
      if (auto v = given_bool("do_lower_case")) (*n)["lowercase"] = *v;
      if (const Json* sa = json_member(config, "strip_accents"); sa && sa->is_boolean()) (*n)["strip_accents"] = *sa;
      if (auto v = given_bool("tokenize_chinese_chars")) (*n)["handle_chinese_chars"] = *v;
    }
    Tokenizer tok = tokenizer_from_root(root, source);
    if (std::string(tok.model_type()) == "WordPiece") default_bert_specials(tok);
    apply_config(tok, config, special_map);
    return tok;
  }
  fs::path vocab_txt = dir / "vocab.txt";
  if (fs::is_regular_file(vocab_txt, ec)) {
    BertVocabOptions o;
    if (auto v = given_bool("do_lower_case")) o.do_lower_case = *v;
    if (auto v = given_bool("strip_accents")) o.strip_accents = *v;
    if (auto v = given_bool("tokenize_chinese_chars")) o.tokenize_chinese_chars = *v;
    auto name = [&](const char* key, std::string& slot) {
      if (auto t = special_token_text(config, key)) slot = *t;
      else if (auto m = special_token_text(special_map, key)) slot = *m;
    };
    name("unk_token", o.unk_token);
    name("sep_token", o.sep_token);
    name("pad_token", o.pad_token);
    name("cls_token", o.cls_token);
    name("mask_token", o.mask_token);
    Tokenizer tok = load_bert_vocab(vocab_txt.string(), o);
    apply_config(tok, config, special_map);
    return tok;
  }
  throw Error(ErrorKind::io, cat(path, ": no tokenizer found (looked for ", tokenizer_json.string(), " and ",
                                 vocab_txt.string(), ")"));
}

}  // namespace rlx::text
