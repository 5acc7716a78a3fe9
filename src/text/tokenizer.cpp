#include "text/tokenizer.h"

#include "rlx/error.h"
#include "text/decode_stream.h"
#include "text/utf8.h"
#include "util/strings.h"

namespace rlx::text {

Tokenizer::Tokenizer(Parts parts)
    : normalizer_(std::move(parts.normalizer)),
      pre_tokenizer_(std::move(parts.pre_tokenizer)),
      model_(std::move(parts.model)),
      post_processor_(std::move(parts.post_processor)),
      decoder_(std::move(parts.decoder)),
      added_tokens_(std::move(parts.added_tokens)) {
  if (!model_) throw Error(ErrorKind::invalid_argument, "a tokenizer needs a model (WordPiece or BPE)");
  added_.add(added_tokens_, *model_, normalizer_.get());
}

Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

void Tokenizer::set_normalizer(std::unique_ptr<Normalizer> normalizer) {
  normalizer_ = std::move(normalizer);
  added_ = AddedVocabulary();
  added_.add(added_tokens_, *model_, normalizer_.get());
}

namespace {

void check_utf8(std::string_view text) {
  size_t bad = utf8_invalid_at(text);
  if (bad != std::string_view::npos)
    throw Error(ErrorKind::invalid_argument, cat("text is not valid UTF-8 (byte ", bad, " of ", text.size(), ")"));
}

}  // namespace

Encoding Tokenizer::encode_sequence(std::string_view text, int32_t type_id) const {
  check_utf8(text);
  Encoding enc;
  std::vector<int32_t> ids;
  auto emit_added = [&](const TextSplit& s) { enc.push(s.id, std::string(s.text), type_id, false); };
  for (const TextSplit& raw : added_.split_raw(text)) {
    if (raw.id >= 0) {
      emit_added(raw);
      continue;
    }
    std::string normalized = normalizer_ ? normalizer_->normalize(raw.text) : std::string(raw.text);
    for (const TextSplit& part : added_.split_normalized(normalized)) {
      if (part.id >= 0) {
        emit_added(part);
        continue;
      }
      std::vector<std::string> words;
      if (!part.text.empty()) words.emplace_back(part.text);
      // at the start of the input: the first raw piece, and the first part of its normalized text
      bool at_start = raw.text.data() == text.data() && part.text.data() == normalized.data();
      if (pre_tokenizer_) pre_tokenizer_->pre_tokenize_at(words, at_start);
      std::vector<std::string> toks;
      for (const auto& w : words) {
        ids.clear();
        toks.clear();
        model_->tokenize_tokens(w, ids, toks);
        for (size_t i = 0; i < ids.size(); ++i) enc.push(ids[i], std::move(toks[i]), type_id, false);
      }
    }
  }
  return enc;
}

Encoding Tokenizer::post_process(Encoding a, std::optional<Encoding> b, bool add_special_tokens) const {
  if (truncation_) {
    size_t added = add_special_tokens && post_processor_ ? post_processor_->added_tokens(b.has_value()) : 0;
    if (added > truncation_->max_length)
      throw Error(ErrorKind::invalid_argument, cat("max_length ", truncation_->max_length, " leaves no room: the ",
                                                   added, " special tokens alone exceed it"));
    truncate_encodings(a, b ? &*b : nullptr, truncation_->max_length - added, *truncation_);
  }
  std::vector<Encoding> parts;
  parts.push_back(std::move(a));
  if (b) parts.push_back(std::move(*b));
  if (post_processor_) parts = post_processor_->process(std::move(parts), add_special_tokens);
  Encoding out;
  for (const auto& p : parts) out.append(p);
  return out;
}

Encoding Tokenizer::encode(std::string_view text, bool add_special_tokens) const {
  Encoding e = post_process(encode_sequence(text, 0), std::nullopt, add_special_tokens);
  if (padding_ && padding_->length) {
    std::vector<Encoding> one{std::move(e)};
    pad_encodings(one, *padding_);
    return std::move(one[0]);
  }
  return e;
}

Encoding Tokenizer::encode_pair(std::string_view first, std::string_view second, bool add_special_tokens) const {
  Encoding e = post_process(encode_sequence(first, 0), encode_sequence(second, 1), add_special_tokens);
  if (padding_ && padding_->length) {
    std::vector<Encoding> one{std::move(e)};
    pad_encodings(one, *padding_);
    return std::move(one[0]);
  }
  return e;
}

std::vector<Encoding> Tokenizer::encode_batch(const std::vector<std::string>& texts, bool add_special_tokens) const {
  std::vector<Encoding> out;
  out.reserve(texts.size());
  for (const auto& t : texts) out.push_back(post_process(encode_sequence(t, 0), std::nullopt, add_special_tokens));
  if (padding_) pad_encodings(out, *padding_);
  return out;
}

std::vector<Encoding> Tokenizer::encode_pair_batch(const std::vector<std::pair<std::string, std::string>>& pairs,
                                                   bool add_special_tokens) const {
  std::vector<Encoding> out;
  out.reserve(pairs.size());
  for (const auto& [a, b] : pairs)
    out.push_back(post_process(encode_sequence(a, 0), encode_sequence(b, 1), add_special_tokens));
  if (padding_) pad_encodings(out, *padding_);
  return out;
}

std::string Tokenizer::decode(const std::vector<int32_t>& ids, bool skip_special_tokens) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (int32_t id : ids) {
    if (const std::string* t = added_.decode_form(id)) {
      if (skip_special_tokens && added_.is_special(*t)) continue;
      tokens.push_back(*t);
    } else if (const std::string* tok = model_->vocab().token(id)) {
      if (skip_special_tokens && added_.is_special(*tok)) continue;
      tokens.push_back(*tok);
    }  // unknown ids are skipped, as tokenizers does
  }
  if (decoder_) return decoder_->decode(std::move(tokens));
  return join(tokens, " ");
}

DecodeStream Tokenizer::decode_stream(bool skip_special_tokens) const { return DecodeStream(*this, skip_special_tokens); }

std::optional<int32_t> Tokenizer::token_to_id(std::string_view token) const {
  if (auto id = added_.id_of(token)) return id;
  return model_->vocab().find(token);
}

std::optional<std::string> Tokenizer::id_to_token(int32_t id) const {
  if (const std::string* t = added_.decode_form(id)) return *t;
  if (const std::string* tok = model_->vocab().token(id)) return *tok;
  return std::nullopt;
}

bool Tokenizer::is_special_id(int32_t id) const {
  const AddedToken* t = added_.token_of(id);
  return t && added_.is_special(t->content);
}

size_t Tokenizer::vocab_size(bool with_added_tokens) const {
  if (!with_added_tokens) return model_->vocab().size();
  size_t n = model_->vocab().size();
  for (const auto& [id, t] : added_.by_id())
    if (!model_->vocab().token(id)) ++n;
  return n;
}

}  // namespace rlx::text
