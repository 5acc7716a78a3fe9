#include "models/gguf_tokenizer_metadata.h"

#include <climits>
#include <cstring>

#include "rlx/error.h"
#include "text/gguf_tokenizer.h"
#include "util/strings.h"

namespace rlx::models {

using formats::GgufFile;
using formats::GgufValue;

namespace {

std::optional<int32_t> gguf_id(const GgufFile& f, const char* key) {
  const GgufValue* v = f.find(key);
  if (!v) return std::nullopt;
  auto x = v->as_int();
  if (!x || *x < 0 || *x > INT32_MAX) throw Error(ErrorKind::format, cat(f.path, ": ", key, " must be a token id, found ", v->summary()));
  return static_cast<int32_t>(*x);
}

std::vector<std::string> gguf_strings(const GgufFile& f, const char* key) {
  const GgufValue* v = f.find(key);
  if (!v) return {};
  const formats::GgufArray* a = v->as_array();
  if (!a || a->elem != formats::GgufType::string) throw Error(ErrorKind::format, cat(f.path, ": ", key, " must be an array of strings"));
  return a->strings;
}

}  // namespace

std::shared_ptr<text::Tokenizer> gguf_tokenizer(const GgufFile& f) {
  const GgufValue* model = f.find("tokenizer.ggml.model");
  if (!model || !model->as_string()) return nullptr;
  text::GgufTokenizerData d;
  d.model = *model->as_string();
  if (const GgufValue* pre = f.find("tokenizer.ggml.pre"); pre && pre->as_string()) d.pre = *pre->as_string();
  d.tokens = gguf_strings(f, "tokenizer.ggml.tokens");
  d.merges = gguf_strings(f, "tokenizer.ggml.merges");
  if (const GgufValue* tt = f.find("tokenizer.ggml.token_type")) {
    const formats::GgufArray* a = tt->as_array();
    if (!a || a->elem != formats::GgufType::i32) throw Error(ErrorKind::format, cat(f.path, ": tokenizer.ggml.token_type must be an array of int32"));
    d.token_type.resize(a->raw.size() / 4);
    std::memcpy(d.token_type.data(), a->raw.data(), d.token_type.size() * 4);
  }
  if (const GgufValue* sc = f.find("tokenizer.ggml.scores")) {
    const formats::GgufArray* a = sc->as_array();
    if (!a || a->elem != formats::GgufType::f32) throw Error(ErrorKind::format, cat(f.path, ": tokenizer.ggml.scores must be an array of float32"));
    d.scores.resize(a->raw.size() / 4);
    std::memcpy(d.scores.data(), a->raw.data(), d.scores.size() * 4);
  }
  if (const GgufValue* v = f.find("tokenizer.ggml.add_space_prefix"); v && std::holds_alternative<bool>(v->v)) d.add_space_prefix = std::get<bool>(v->v);
  if (const GgufValue* v = f.find("tokenizer.ggml.remove_extra_whitespaces"); v && std::holds_alternative<bool>(v->v))
    d.remove_extra_whitespaces = std::get<bool>(v->v);
  if (const GgufValue* v = f.find("tokenizer.ggml.precompiled_charsmap")) {
    const formats::GgufArray* a = v->as_array();
    if (!a || (a->elem != formats::GgufType::u8 && a->elem != formats::GgufType::i8))
      throw Error(ErrorKind::format, cat(f.path, ": tokenizer.ggml.precompiled_charsmap must be an array of bytes"));
    d.precompiled_charsmap.assign(a->raw.begin(), a->raw.end());
  }
  d.bos_id = gguf_id(f, "tokenizer.ggml.bos_token_id");
  d.eos_id = gguf_id(f, "tokenizer.ggml.eos_token_id");
  d.eot_id = gguf_id(f, "tokenizer.ggml.eot_token_id");
  d.unk_id = gguf_id(f, "tokenizer.ggml.unknown_token_id");
  d.pad_id = gguf_id(f, "tokenizer.ggml.padding_token_id");
  d.cls_id = gguf_id(f, "tokenizer.ggml.cls_token_id");
  d.sep_id = gguf_id(f, "tokenizer.ggml.seperator_token_id");  // llama.cpp's spelling
  d.mask_id = gguf_id(f, "tokenizer.ggml.mask_token_id");
  for (auto [key, out] : {std::pair{"tokenizer.ggml.add_bos_token", &d.add_bos}, {"tokenizer.ggml.add_eos_token", &d.add_eos}})
    if (const GgufValue* v = f.find(key); v && std::holds_alternative<bool>(v->v)) *out = std::get<bool>(v->v);
  auto tok = std::make_shared<text::Tokenizer>(text::tokenizer_from_gguf(d));
  text::SpecialTokenIds ids = tok->special_ids();
  if (d.bos_id) ids.bos = d.bos_id;
  if (d.eos_id) ids.eos = d.eos_id;
  tok->set_special_ids(ids);
  return tok;
}

}  // namespace rlx::models
