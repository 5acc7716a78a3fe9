// The "model" object of tokenizer.json.
#include "rlx/error.h"
#include "text/model.h"
#include "util/strings.h"

namespace rlx::text {

namespace {

Vocab vocab_from_json(const Json& j, const std::string& where) {
  const Json& v = json_required(j, "vocab", where);
  if (!v.is_object()) json_fail(where, cat("field 'vocab': expected an object {token: id}, found ", v.type_name()));
  Vocab vocab;
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (!it.value().is_number_integer() || it.value().get<int64_t>() < 0 || it.value().get<int64_t>() > INT32_MAX)
      json_fail(where, cat("vocab[", json_quote(it.key()), "]: expected a non-negative 32-bit id, found ", it.value().dump()));
    vocab.add(it.key(), static_cast<int32_t>(it.value().get<int64_t>()));
  }
  return vocab;
}

// Both forms: ["a b", …] (a single space separates the halves) and [["a", "b"], …].
std::vector<std::pair<std::string, std::string>> merges_from_json(const Json& j, const std::string& where) {
  std::vector<std::pair<std::string, std::string>> merges;
  const Json* m = json_member(j, "merges");
  if (!m) return merges;
  if (!m->is_array()) json_fail(where, cat("field 'merges': expected an array, found ", m->type_name()));
  merges.reserve(m->size());
  for (size_t i = 0; i < m->size(); ++i) {
    const Json& e = (*m)[i];
    if (e.is_string()) {
      const std::string& s = e.get_ref<const std::string&>();
      size_t sp = s.find(' ');
      if (sp == std::string::npos || s.find(' ', sp + 1) != std::string::npos)
        json_fail(where, cat("merges[", i, "]: expected two tokens separated by one space, found ", json_quote(s)));
      merges.emplace_back(s.substr(0, sp), s.substr(sp + 1));
    } else if (e.is_array() && e.size() == 2 && e[0].is_string() && e[1].is_string()) {
      merges.emplace_back(e[0].get<std::string>(), e[1].get<std::string>());
    } else {
      json_fail(where, cat("merges[", i, "]: expected \"a b\" or [\"a\", \"b\"], found ", e.dump()));
    }
  }
  return merges;
}

}  // namespace

std::unique_ptr<Model> model_from_json(const Json& j, const std::string& where) {
  // Older files omit "type"; the fields then tell the model apart.
  std::string type;
  if (auto t = json_opt_string(j, "type", where)) type = *t;
  else if (json_member(j, "merges")) type = "BPE";
  else if (json_member(j, "max_input_chars_per_word")) type = "WordPiece";

  if (type == "WordPiece") {
    WordPieceOptions o;
    o.unk_token = json_opt_string(j, "unk_token", where).value_or("[UNK]");
    o.continuing_subword_prefix = json_opt_string(j, "continuing_subword_prefix", where).value_or("##");
    int64_t max_chars = json_int(j, "max_input_chars_per_word", 100, where);
    if (max_chars < 0) json_fail(where, cat("field 'max_input_chars_per_word': expected >= 0, found ", max_chars));
    o.max_input_chars_per_word = static_cast<size_t>(max_chars);
    return make_wordpiece(vocab_from_json(j, where), o);
  }
  if (type == "BPE") {
    BpeOptions o;
    o.unk_token = json_opt_string(j, "unk_token", where);
    o.continuing_subword_prefix = json_opt_string(j, "continuing_subword_prefix", where);
    o.end_of_word_suffix = json_opt_string(j, "end_of_word_suffix", where);
    o.fuse_unk = json_bool(j, "fuse_unk", false, where);
    o.byte_fallback = json_bool(j, "byte_fallback", false, where);
    o.ignore_merges = json_bool(j, "ignore_merges", false, where);
    if (const Json* d = json_member(j, "dropout"); d && !(d->is_number() && d->get<double>() == 0.0))
      throw Error(ErrorKind::unsupported, cat(where, ": BPE dropout ", d->dump(), " is a training option; RLX tokenizes deterministically (set it to null)"));
    return make_bpe(vocab_from_json(j, where), merges_from_json(j, where), o, where);
  }
  if (type == "Unigram" || (type.empty() && json_member(j, "vocab") && json_member(j, "vocab")->is_array())) {
    const Json& v = json_required(j, "vocab", where);
    if (!v.is_array()) json_fail(where, cat("field 'vocab': expected an array [[piece, score], …], found ", v.type_name()));
    std::vector<std::pair<std::string, double>> pieces;
    pieces.reserve(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      const Json& e = v[i];
      if (!e.is_array() || e.size() != 2 || !e[0].is_string() || !e[1].is_number())
        json_fail(where, cat("vocab[", i, "]: expected [piece, score], found ", e.dump().substr(0, 80)));
      pieces.emplace_back(e[0].get<std::string>(), e[1].get<double>());
    }
    UnigramOptions o;
    if (const Json* u = json_member(j, "unk_id"); u && !u->is_null()) {
      if (!u->is_number_integer()) json_fail(where, cat("field 'unk_id': expected an integer or null, found ", u->dump()));
      o.unk_id = static_cast<int32_t>(u->get<int64_t>());
    }
    o.byte_fallback = json_bool(j, "byte_fallback", false, where);
    return make_unigram(std::move(pieces), o, where);
  }
  throw Error(ErrorKind::unsupported, cat(where, ": model type '", type, "' is not supported (supported: WordPiece, BPE, Unigram)"));
}

}  // namespace rlx::text
