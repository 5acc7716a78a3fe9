#include "text/gguf_tokenizer.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "rlx/error.h"
#include "text/json_fields.h"
#include "text/normalizer.h"
#include "text/post_processor.h"
#include "text/precompiled.h"
#include "util/base64.h"
#include "text/tokenizer_loader.h"
#include "text/pre_tokenizer.h"
#include "text/decoder.h"
#include "text/utf8.h"
#include "util/strings.h"

namespace rlx::text {

namespace {

// The Split regexes of the models' own tokenizer.json files.
const char* const kQwen2Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const char* const kLlama3Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
// GPT-2's ByteLevel regex, as the Split step of models that put digits (or more) first
const char* const kGpt2Split = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
const char* const kGpt4oPattern =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const char* const kBloomPattern = R"( ?[^(\s|.,!?…。，、।۔،)]+)";
// Three ranges end in Greek letters NFC would rewrite (ώ ΐ Ί): escapes keep DeepSeek's code points.
const char* const kDeepseekLetters =
    R"(\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-\x{1F7D}ᾀ-ᾴᾶ-ᾼιῂ-ῄῆ-ῌῐ-\x{1FD3}ῖ-\x{1FDB}ῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤΩℨK-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+)";
const char* const kCjk = R"([一-龥ࠀ-一가-퟿]+)";

// A byte-level BPE's pre-tokenization as llama.cpp names it (tokenizer.ggml.pre): the Split
// regexes its model's tokenizer.json applies in turn (each isolates its matches within what
// the previous ones left), then ByteLevel without its own regex; none: GPT-2's ByteLevel.
struct PreInfo {
  std::vector<const char*> names;
  std::vector<const char*> patterns;
  bool nfc = false;            // the tokenizer.json normalizes to NFC first (Qwen)
  bool ignore_merges = false;  // the BPE model sets ignore_merges (Llama 3 and kin)
};

const std::vector<PreInfo>& pres() {
  static const std::vector<PreInfo> table = {
      {{"qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "megrez"}, {kQwen2Pattern}, true, false},
      {{"stablelm2", "hunyuan", "solar-open", "grok-2"}, {kQwen2Pattern}, false, false},
      {{"qwen35"},
       {R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"},
       true, false},
      {{"llama-bpe", "llama3", "llama-v3", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2", "dbrx", "smaug-bpe"}, {kLlama3Pattern}, false, true},
      {{"gpt-2", "gpt2", "default", "phi-2", "mpt", "olmo", "jais", "jina-es", "jina-de", "jina-v2-es", "jina-v2-de", "jina-v1-en", "jina-v2-code",
        "roberta-bpe", "gigachat", "a.x-4.0", "mellum", "modern-bert", "exaone4", "trillion", "granite-docling"},
       {}},
      {{"starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b", "mellum2"}, {R"(\p{N})", kGpt2Split}},
      {{"deepseek-llm"}, {"[\r\n]", kDeepseekLetters, R"(\s?[!-/:-~！-／：-～‘-‟　-。]+)", R"(\s+$)", kCjk, R"(\p{N}+)"}},
      {{"deepseek-coder"}, {"[\r\n]", R"(\s?\p{L}+)", R"(\s?\p{P}+)", kCjk, R"(\p{N})"}},
      {{"deepseek-v3", "hunyuan-dense", "joyai-llm"},
       {R"(\p{N}{1,3})", R"([一-龥぀-ゟ゠-ヿ]+)",
        R"([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"}},
      {{"falcon"}, {R"([\p{P}\$\+<=>\^~\|]+)", R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))", "[0-9][0-9][0-9]"}},
      {{"glm4", "chatglm-bpe"}, {R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"}},
      {{"tekken"},
       {R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)"}},
      {{"gpt-4o", "llama4", "kanana2", "minimax-m2"}, {kGpt4oPattern}},
      {{"tiny_aya", "cohere2moe"}, {R"(\d{1,3}(?=(?:\d{3})*\b))", kGpt4oPattern}},
      {{"bloom", "poro-chat", "gpt3-finnish"}, {kBloomPattern}},
      {{"viking"}, {kBloomPattern, R"(\p{N})"}},
      {{"seed-coder"}, {R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+|\s+(?!\S)|\s+)"}},
      {{"bailingmoe", "bailingmoe2", "llada-moe"}, {R"('(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]++[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+)"}},
      {{"minicpm5"}, {R"(\p{N}{1,3})", R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}+| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"}, false, true},
      {{"superbpe"}, {R"(\p{N}+)", R"((?=(\d{3})+(?!\d)))"}},
      {{"exaone-moe"}, {R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?(?:\p{L}\p{M}*(?: \p{L}\p{M}*)*)+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]?|\s*[\r\n]|\s+(?!\S)|\s+)"}},
  };
  return table;
}

const PreInfo* find_pre(const std::string& pre) {
  for (const auto& p : pres())
    for (const char* n : p.names)
      if (pre == n) return &p;
  return nullptr;
}

std::string known_pres() {
  std::vector<std::string> names;
  for (const auto& p : pres())
    for (const char* n : p.names) names.push_back(n);
  return join(names, ", ");
}

}  // namespace

std::optional<std::string> gguf_pre_tokenizer_regex(const std::string& pre) {
  const PreInfo* p = find_pre(pre);
  if (!p) return std::nullopt;
  if (p->patterns.size() > 1) return std::nullopt;  // a sequence of splits, not one regex
  return std::string(p->patterns.empty() ? kGpt2Pattern : p->patterns[0]);
}

std::vector<std::string> gguf_pre_tokenizer_names() {
  std::vector<std::string> names;
  for (const auto& p : pres())
    for (const char* n : p.names) names.push_back(n);
  return names;
}

namespace {

// The ids and token types must fit the token list.
void check_layout(const GgufTokenizerData& d) {
  if (!d.token_type.empty() && d.token_type.size() != d.tokens.size())
    throw Error(ErrorKind::format, cat("GGUF tokenizer.ggml.token_type has ", d.token_type.size(),
                                       " entries but tokenizer.ggml.tokens has ", d.tokens.size()));
  auto check_id = [&](const std::optional<int32_t>& id, const char* key) {
    if (id && (*id < 0 || static_cast<size_t>(*id) >= d.tokens.size()))
      throw Error(ErrorKind::format, cat("GGUF ", key, " = ", *id, " is outside the ", d.tokens.size(), " tokens"));
  };
  check_id(d.bos_id, "tokenizer.ggml.bos_token_id");
  check_id(d.eos_id, "tokenizer.ggml.eos_token_id");
  check_id(d.eot_id, "tokenizer.ggml.eot_token_id");
  check_id(d.unk_id, "tokenizer.ggml.unknown_token_id");
  check_id(d.pad_id, "tokenizer.ggml.padding_token_id");
  check_id(d.cls_id, "tokenizer.ggml.cls_token_id");
  check_id(d.sep_id, "tokenizer.ggml.seperator_token_id");
  check_id(d.mask_id, "tokenizer.ggml.mask_token_id");
}

// BOS/EOS around each sequence as tokenizer.ggml.add_*_token ask.
std::unique_ptr<PostProcessor> bos_eos_template(const GgufTokenizerData& d, bool add_bos, bool add_eos) {
  std::vector<TemplatePiece> single, pair;
  std::vector<std::pair<std::string, TemplateSpecialToken>> specials;
  const std::string bos = add_bos ? d.tokens[*d.bos_id] : "", eos = add_eos ? d.tokens[*d.eos_id] : "";
  if (add_bos) specials.push_back({bos, {{*d.bos_id}, {bos}}});
  if (add_eos && eos != bos) specials.push_back({eos, {{*d.eos_id}, {eos}}});
  for (int s = 0; s < 2; ++s) {
    if (add_bos) pair.push_back({false, 0, bos, s});
    pair.push_back({true, s, "", s});
    if (add_eos) pair.push_back({false, 0, eos, s});
  }
  if (add_bos) single.push_back({false, 0, bos, 0});
  single.push_back({true, 0, "", 0});
  if (add_eos) single.push_back({false, 0, eos, 0});
  return make_template_processing(std::move(single), std::move(pair), std::move(specials));
}

void set_special_ids(Tokenizer& tok, const GgufTokenizerData& d) {
  SpecialTokenIds ids;
  ids.bos = d.bos_id;
  ids.eos = d.eos_id;
  ids.unk = d.unk_id;
  ids.pad = d.pad_id;
  tok.set_special_ids(ids);
}

GgufTokenType type_of(const GgufTokenizerData& d, size_t i) {
  return d.token_type.empty() ? GgufTokenType::normal : static_cast<GgufTokenType>(d.token_type[i]);
}

// transformers' SentencePieceExtractor: every split of every piece into two pieces, ordered
// locally by the parts' ids, then all (stably) by the whole piece's score, highest first.
std::vector<std::pair<std::string, std::string>> sentencepiece_merges(const GgufTokenizerData& d) {
  std::unordered_map<std::string, int32_t> id_of;
  for (size_t i = 0; i < d.tokens.size(); ++i) id_of.emplace(d.tokens[i], static_cast<int32_t>(i));
  struct Merge {
    int32_t left, right;
    float score;
  };
  std::vector<Merge> all, local;
  for (size_t i = 0; i < d.tokens.size(); ++i) {
    const std::string& piece = d.tokens[i];
    local.clear();
    size_t at = 0;
    utf8_next(piece, at);  // a split after each code point but the last
    while (at < piece.size()) {
      auto l = id_of.find(piece.substr(0, at)), r = id_of.find(piece.substr(at));
      if (l != id_of.end() && r != id_of.end()) local.push_back({l->second, r->second, d.scores[i]});
      utf8_next(piece, at);
    }
    std::sort(local.begin(), local.end(), [](const Merge& a, const Merge& b) { return a.left != b.left ? a.left < b.left : a.right < b.right; });
    all.insert(all.end(), local.begin(), local.end());
  }
  std::stable_sort(all.begin(), all.end(), [](const Merge& a, const Merge& b) { return a.score > b.score; });
  std::vector<std::pair<std::string, std::string>> out;
  out.reserve(all.size());
  for (const Merge& m : all) out.emplace_back(d.tokens[static_cast<size_t>(m.left)], d.tokens[static_cast<size_t>(m.right)]);
  return out;
}

// SentencePiece BPE, laid out as LlamaConverter's tokenizer.json: Prepend("▁") + Replace(" ",
// "▁") normalizer, no pre-tokenizer, byte fallback, and the decoder that undoes them.
Tokenizer sentencepiece_from_gguf(const GgufTokenizerData& d) {
  if (d.scores.size() != d.tokens.size())
    throw Error(ErrorKind::format, cat("GGUF tokenizer.ggml.scores has ", d.scores.size(), " entries but tokenizer.ggml.tokens has ",
                                       d.tokens.size(), " (a SentencePiece tokenizer merges by score)"));
  for (const std::string& t : d.tokens)
    if (utf8_invalid_at(t) != std::string::npos) throw Error(ErrorKind::format, cat("GGUF tokenizer.ggml.tokens holds invalid UTF-8: ", json_quote(t)));
  Tokenizer::Parts parts;
  Vocab vocab;
  bool bytes = false;
  std::optional<std::string> unk = d.unk_id ? std::optional<std::string>(d.tokens[*d.unk_id]) : std::nullopt;
  for (size_t i = 0; i < d.tokens.size(); ++i) {
    vocab.add(d.tokens[i], static_cast<int32_t>(i));
    GgufTokenType type = type_of(d, i);
    bytes = bytes || type == GgufTokenType::byte;
    if (type == GgufTokenType::unknown && !unk) unk = d.tokens[i];
    // <unk> and the control tokens are special added tokens in transformers' file too
    if (type == GgufTokenType::control || type == GgufTokenType::unknown || type == GgufTokenType::user_defined)
      parts.added_tokens.push_back({d.tokens[i], false, false, false, false, type != GgufTokenType::user_defined});
  }
  BpeOptions bpe;
  bpe.unk_token = unk;
  bpe.fuse_unk = true;
  bpe.byte_fallback = bytes;
  parts.model = make_bpe(std::move(vocab), sentencepiece_merges(d), bpe, "GGUF tokenizer.ggml.tokens/scores");
  bool prefix = d.add_space_prefix.value_or(true);
  Json normalizers = Json::array();
  if (prefix) normalizers.push_back({{"type", "Prepend"}, {"prepend", "\u2581"}});
  normalizers.push_back({{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "\u2581"}});
  parts.normalizer = normalizer_from_json({{"type", "Sequence"}, {"normalizers", normalizers}}, "GGUF SentencePiece normalizer");
  Json decoders = Json::array({{{"type", "Replace"}, {"pattern", {{"String", "\u2581"}}}, {"content", " "}}, {{"type", "ByteFallback"}}, {{"type", "Fuse"}}});
  if (prefix) decoders.push_back({{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}});
  parts.decoder = decoder_from_json({{"type", "Sequence"}, {"decoders", decoders}}, "GGUF SentencePiece decoder");
  // SentencePiece models start with BOS unless the file says otherwise (llama.cpp's default too)
  bool add_bos = d.add_bos.value_or(true) && d.bos_id;
  bool add_eos = d.add_eos.value_or(false) && d.eos_id;
  if (add_bos || add_eos) parts.post_processor = bos_eos_template(d, add_bos, add_eos);
  Tokenizer tok(std::move(parts));
  set_special_ids(tok, d);
  return tok;
}

// SentencePiece Unigram as T5Converter writes its tokenizer.json: Precompiled(charsmap) and
// Replace(" {2,}", " ") normalizers, Metaspace ("always" when the model adds a dummy prefix,
// split), the pieces with their scores, and </s> appended unless the file says otherwise.
Tokenizer unigram_from_gguf(const GgufTokenizerData& d) {
  if (d.scores.size() != d.tokens.size())
    throw Error(ErrorKind::format, cat("GGUF tokenizer.ggml.scores has ", d.scores.size(), " entries but tokenizer.ggml.tokens has ", d.tokens.size(),
                                       " (a Unigram model needs a score per piece)"));
  Json vocab = Json::array();
  std::optional<int32_t> unk = d.unk_id;
  Json added = Json::array();
  for (size_t i = 0; i < d.tokens.size(); ++i) {
    if (utf8_invalid_at(d.tokens[i]) != std::string::npos) throw Error(ErrorKind::format, cat("GGUF tokenizer.ggml.tokens holds invalid UTF-8: ", json_quote(d.tokens[i])));
    if (!std::isfinite(d.scores[i])) throw Error(ErrorKind::format, cat("GGUF tokenizer.ggml.scores[", i, "] is not finite"));
    vocab.push_back(Json::array({d.tokens[i], d.scores[i]}));
    GgufTokenType type = type_of(d, i);
    if (type == GgufTokenType::unknown && !unk) unk = static_cast<int32_t>(i);
    if (type == GgufTokenType::control || type == GgufTokenType::unknown || type == GgufTokenType::user_defined)
      added.push_back({{"id", i}, {"content", d.tokens[i]}, {"single_word", false}, {"lstrip", false}, {"rstrip", false}, {"normalized", false},
                       {"special", type != GgufTokenType::user_defined}});
  }
  const bool prefix = d.add_space_prefix.value_or(true);
  Json normalizers = Json::array();
  if (!d.precompiled_charsmap.empty()) normalizers.push_back({{"type", "Precompiled"}, {"precompiled_charsmap", base64_encode(d.precompiled_charsmap)}});
  if (d.remove_extra_whitespaces.value_or(true)) normalizers.push_back({{"type", "Replace"}, {"pattern", {{"Regex", " {2,}"}}}, {"content", " "}});
  Json meta = {{"type", "Metaspace"}, {"replacement", "\u2581"}, {"prepend_scheme", prefix ? "always" : "never"}, {"split", true}};
  meta["replacement"] = "▁";
  Json model = {{"type", "Unigram"}, {"vocab", vocab}, {"byte_fallback", false}};
  if (unk) model["unk_id"] = *unk;
  Json tj = {{"version", "1.0"}, {"added_tokens", added}, {"normalizer", normalizers.empty() ? Json() : Json{{"type", "Sequence"}, {"normalizers", normalizers}}},
             {"pre_tokenizer", meta}, {"decoder", meta}, {"model", model}};
  if (d.add_eos.value_or(true) && d.eos_id) {  // T5's "$A </s>" (and "$A </s> $B </s>")
    const std::string& eos = d.tokens[static_cast<size_t>(*d.eos_id)];
    Json a = {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}, b = {{"Sequence", {{"id", "B"}, {"type_id", 0}}}};
    Json e = {{"SpecialToken", {{"id", eos}, {"type_id", 0}}}};
    tj["post_processor"] = {{"type", "TemplateProcessing"}, {"single", Json::array({a, e})}, {"pair", Json::array({a, e, b, e})},
                            {"special_tokens", {{eos, {{"id", eos}, {"ids", Json::array({*d.eos_id})}, {"tokens", Json::array({eos})}}}}}};
  }
  Tokenizer tok = tokenizer_from_json(tj.dump(), "GGUF t5 tokenizer");
  set_special_ids(tok, d);
  return tok;
}

// WordPiece as llama.cpp's converter stores it (phantom spaces), back to BERT's vocabulary.
Tokenizer wordpiece_from_gguf(const GgufTokenizerData& d) {
  const std::string phantom = "\u2581";
  Tokenizer::Parts parts;
  Vocab vocab;
  bool upper = false;
  for (size_t i = 0; i < d.tokens.size(); ++i) {
    const std::string& t = d.tokens[i];
    GgufTokenType type = type_of(d, i);
    std::string piece;
    if (type == GgufTokenType::control) {
      piece = t;
      parts.added_tokens.push_back({t, false, false, false, false, true});
    } else if (t.compare(0, phantom.size(), phantom) == 0) {
      piece = t.substr(phantom.size());
    } else {
      piece = "##" + t;
    }
    if (type != GgufTokenType::control)
      for (char c : piece) upper = upper || (c >= 'A' && c <= 'Z');
    vocab.add(piece, static_cast<int32_t>(i));
  }
  auto id_or = [&](const std::optional<int32_t>& id, const char* name) -> int32_t {
    if (id) return *id;
    throw Error(ErrorKind::format, cat("GGUF WordPiece tokenizer without tokenizer.ggml.", name, " (BERT inputs are [CLS] A [SEP])"));
  };
  int32_t cls = id_or(d.cls_id ? d.cls_id : d.bos_id, "cls_token_id"), sep = id_or(d.sep_id ? d.sep_id : d.eos_id, "seperator_token_id");
  WordPieceOptions wp;
  if (d.unk_id) wp.unk_token = d.tokens[*d.unk_id];
  parts.model = make_wordpiece(std::move(vocab), wp);
  BertNormalizerOptions norm;
  norm.lowercase = !upper;  // an uncased vocabulary was made from lower-cased text
  parts.normalizer = make_bert_normalizer(norm);
  parts.pre_tokenizer = make_bert_pre_tokenizer();
  parts.post_processor = make_bert_processing(d.tokens[static_cast<size_t>(cls)], cls, d.tokens[static_cast<size_t>(sep)], sep);
  parts.decoder = make_wordpiece_decoder("##", true);
  Tokenizer tok(std::move(parts));
  SpecialTokenIds ids;
  ids.cls = cls;
  ids.sep = sep;
  ids.unk = d.unk_id;
  ids.pad = d.pad_id;
  ids.mask = d.mask_id;
  tok.set_special_ids(ids);
  return tok;
}

}  // namespace

Tokenizer tokenizer_from_gguf(const GgufTokenizerData& d) {
  if (d.model != "gpt2" && d.model != "llama" && d.model != "bert" && d.model != "t5")
    throw Error(ErrorKind::unsupported, cat("GGUF tokenizer.ggml.model '", d.model,
                                            "' is not supported (RLX reads \"gpt2\", byte-level BPE; \"llama\", SentencePiece BPE; \"bert\", WordPiece; "
                                            "\"t5\", SentencePiece Unigram)"));
  check_layout(d);
  if (d.model == "llama") return sentencepiece_from_gguf(d);
  if (d.model == "t5") return unigram_from_gguf(d);
  if (d.model == "bert") return wordpiece_from_gguf(d);
  std::string pre_name = d.pre.empty() ? "default" : d.pre;
  const PreInfo* pre = find_pre(pre_name);
  if (!pre)
    throw Error(ErrorKind::unsupported,
                cat("GGUF tokenizer.ggml.pre '", pre_name, "' is not supported (supported: ", known_pres(), ")"));

  Tokenizer::Parts parts;
  Vocab vocab;
  for (size_t i = 0; i < d.tokens.size(); ++i) vocab.add(d.tokens[i], static_cast<int32_t>(i));
  for (size_t i = 0; i < d.token_type.size(); ++i) {
    auto type = static_cast<GgufTokenType>(d.token_type[i]);
    if (type == GgufTokenType::control || type == GgufTokenType::user_defined)
      parts.added_tokens.push_back({d.tokens[i], false, false, false, false, type == GgufTokenType::control});
  }
  std::vector<std::pair<std::string, std::string>> merges;
  merges.reserve(d.merges.size());
  for (size_t i = 0; i < d.merges.size(); ++i) {
    const std::string& m = d.merges[i];
    size_t sp = m.find(' ');
    if (sp == std::string::npos || m.find(' ', sp + 1) != std::string::npos)
      throw Error(ErrorKind::format, cat("GGUF tokenizer.ggml.merges[", i, "]: expected \"a b\", found ", json_quote(m)));
    merges.emplace_back(m.substr(0, sp), m.substr(sp + 1));
  }
  BpeOptions bpe;
  bpe.ignore_merges = pre->ignore_merges;
  parts.model = make_bpe(std::move(vocab), merges, bpe, "GGUF tokenizer.ggml.merges");
  if (pre->nfc) parts.normalizer = make_nfc_normalizer();
  if (!pre->patterns.empty()) {
    std::vector<std::unique_ptr<PreTokenizer>> steps;
    for (const char* pattern : pre->patterns) steps.push_back(make_regex_split_pre_tokenizer(pattern, SplitBehavior::isolated, false));
    steps.push_back(make_byte_level_pre_tokenizer(false, false));
    parts.pre_tokenizer = make_sequence_pre_tokenizer(std::move(steps));
  } else {
    parts.pre_tokenizer = make_byte_level_pre_tokenizer(false, true);
  }
  parts.decoder = make_byte_level_decoder();
  bool add_bos = d.add_bos.value_or(false) && d.bos_id;
  bool add_eos = d.add_eos.value_or(false) && d.eos_id;
  if (add_bos || add_eos) parts.post_processor = bos_eos_template(d, add_bos, add_eos);
  Tokenizer tok(std::move(parts));
  set_special_ids(tok, d);
  return tok;
}

}  // namespace rlx::text
