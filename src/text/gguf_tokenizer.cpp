#include "text/gguf_tokenizer.h"

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::text {

namespace {

// The Split regexes of the models' own tokenizer.json files.
const char* const kQwen2Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const char* const kLlama3Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

struct PreInfo {
  const char* name;
  const char* pattern;  // nullptr: GPT-2's ByteLevel regex
  bool nfc;             // Qwen2's tokenizer.json normalizes to NFC
  bool ignore_merges;   // Llama-3's BPE sets ignore_merges
};

const PreInfo kPres[] = {
    {"qwen2", kQwen2Pattern, true, false},
    {"deepseek-r1-qwen", kQwen2Pattern, true, false},
    {"llama-bpe", kLlama3Pattern, false, true},
    {"llama3", kLlama3Pattern, false, true},
    {"gpt-2", nullptr, false, false},
    {"gpt2", nullptr, false, false},
    {"default", nullptr, false, false},
};

const PreInfo* find_pre(const std::string& pre) {
  for (const auto& p : kPres)
    if (pre == p.name) return &p;
  return nullptr;
}

std::string known_pres() {
  std::vector<std::string> names;
  for (const auto& p : kPres) names.push_back(p.name);
  return join(names, ", ");
}

}  // namespace

std::optional<std::string> gguf_pre_tokenizer_regex(const std::string& pre) {
  const PreInfo* p = find_pre(pre);
  if (!p) return std::nullopt;
  return std::string(p->pattern ? p->pattern : kGpt2Pattern);
}

Tokenizer tokenizer_from_gguf(const GgufTokenizerData& d) {
  if (d.model != "gpt2")
    throw Error(ErrorKind::unsupported, cat("GGUF tokenizer.ggml.model '", d.model,
                                            "' is not supported (RLX reads byte-level BPE: \"gpt2\")"));
  std::string pre_name = d.pre.empty() ? "default" : d.pre;
  const PreInfo* pre = find_pre(pre_name);
  if (!pre)
    throw Error(ErrorKind::unsupported,
                cat("GGUF tokenizer.ggml.pre '", pre_name, "' is not supported (supported: ", known_pres(), ")"));
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
  if (pre->pattern) {
    std::vector<std::unique_ptr<PreTokenizer>> steps;
    steps.push_back(make_regex_split_pre_tokenizer(pre->pattern, SplitBehavior::isolated, false));
    steps.push_back(make_byte_level_pre_tokenizer(false, false));
    parts.pre_tokenizer = make_sequence_pre_tokenizer(std::move(steps));
  } else {
    parts.pre_tokenizer = make_byte_level_pre_tokenizer(false, true);
  }
  parts.decoder = make_byte_level_decoder();
  bool add_bos = d.add_bos.value_or(false) && d.bos_id;
  bool add_eos = d.add_eos.value_or(false) && d.eos_id;
  if (add_bos || add_eos) {
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
    parts.post_processor = make_template_processing(std::move(single), std::move(pair), std::move(specials));
  }
  Tokenizer tok(std::move(parts));
  SpecialTokenIds ids;
  ids.bos = d.bos_id;
  ids.eos = d.eos_id;
  ids.unk = d.unk_id;
  ids.pad = d.pad_id;
  tok.set_special_ids(ids);
  return tok;
}

}  // namespace rlx::text
