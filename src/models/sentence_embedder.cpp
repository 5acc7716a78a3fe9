#include "models/sentence_embedder.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <numeric>

#include "rlx/error.h"
#include "models/qwen3_model.h"
#include "text/tokenizer_loader.h"
#include "util/strings.h"

namespace rlx::models {

namespace {

CompiledModel compile_for(const BertModel& m, const std::string& device, const SessionOptions& options) {
  return Session(device, options).compile(Graph(std::make_shared<ir::Graph>(m.graph())));
}

// Like sentence-transformers: the tokenizer truncates to the model's limit (max_seq_length, or
// the tokenizer's model_max_length, never past the position table) and never pads on its own
// (tokenizer.json may ship Fixed padding); batches are padded here.
void configure_tokenizer(text::Tokenizer& tok, const BertModel& m) {
  size_t limit = static_cast<size_t>(m.max_tokens);
  if (!m.layout.max_seq_length && tok.model_max_length()) limit = std::min(limit, *tok.model_max_length());
  text::TruncationOptions t;
  t.max_length = limit;
  tok.set_truncation(t);
  tok.set_padding(std::nullopt);
}

// Padded lengths are rounded up to a multiple of 16 (within the model's limit): the compiled
// model keeps one specialization per input shape, so a corpus of every length would otherwise
// compile and hold hundreds of them. Padding is masked, so the vectors do not change.
int64_t bucket_length(int64_t n, int64_t limit) { return std::min(std::max<int64_t>(16, (n + 15) / 16 * 16), std::max(n, limit)); }

}  // namespace

SentenceEmbedder SentenceEmbedder::open(const std::string& dir, const std::string& device, const SessionOptions& options) {
  BertModel m = load_bert(dir);
  bool gguf = dir.size() > 5 && dir.compare(dir.size() - 5, 5, ".gguf") == 0;
  if (gguf) {  // the WordPiece vocabulary the file carries
    std::shared_ptr<text::Tokenizer> tok = load_gguf_tokenizer(dir);
    return SentenceEmbedder(std::move(m), std::move(*tok), device, options);
  }
  text::Tokenizer tok = text::load_tokenizer(m.layout.transformer_dir);
  return SentenceEmbedder(std::move(m), std::move(tok), device, options);
}

SentenceEmbedder::SentenceEmbedder(BertModel model, text::Tokenizer tokenizer, const std::string& device,
                                   const SessionOptions& options)
    : model_(std::move(model)), tokenizer_(std::move(tokenizer)), compiled_(compile_for(model_, device, options)) {
  configure_tokenizer(tokenizer_, model_);
  if (tokenizer_.special_ids().pad) pad_id_ = *tokenizer_.special_ids().pad;
}

Tensor SentenceEmbedder::run(const Tensor& ids, const Tensor& mask, const Tensor& types) const {
  for (const Tensor* t : {&ids, &mask, &types})
    if (t->dtype() != DType::i64 || t->rank() != 2 || t->shape() != ids.shape())
      throw Error(ErrorKind::invalid_argument, "SentenceEmbedder::run: input_ids, attention_mask and token_type_ids must all be i64[B, S]");
  int64_t S = ids.shape()[1];
  if (S > model_.spec.max_tokens())
    throw Error(ErrorKind::invalid_argument, cat("sequence of ", S, " tokens exceeds the model's ", model_.spec.max_tokens(),
                                                 " positions"));
  // Out-of-range ids would index past the embedding table: reject them here with a clear message.
  const int64_t* p = ids.contiguous().data_as<int64_t>();
  for (int64_t i = 0; i < ids.numel(); ++i)
    if (p[i] < 0 || p[i] >= model_.spec.vocab_size)
      throw Error(ErrorKind::invalid_argument, cat("token id ", p[i], " is outside the vocabulary [0, ", model_.spec.vocab_size, ")"));
  return compiled_.run({ids, mask, types})[0];
}

Tensor SentenceEmbedder::embed(const std::vector<std::string>& texts, size_t batch,
                               const std::function<void(size_t, size_t)>& progress) const {
  std::vector<text::Encoding> enc;
  enc.reserve(texts.size());
  for (const auto& t : texts) enc.push_back(tokenizer_.encode(t, true));
  std::vector<Row> rows;
  rows.reserve(enc.size());
  for (const auto& e : enc) rows.push_back({&e.ids, &e.type_ids});
  return embed_rows(rows, batch, progress);
}

Tensor SentenceEmbedder::embed_ids(const std::vector<std::vector<int32_t>>& ids, size_t batch) const {
  std::vector<Row> rows;
  rows.reserve(ids.size());
  for (const auto& r : ids) {
    if (r.empty()) throw Error(ErrorKind::invalid_argument, "SentenceEmbedder::embed_ids: a row has no tokens");
    rows.push_back({&r, nullptr});
  }
  return embed_rows(rows, batch, {});
}

Tensor SentenceEmbedder::embed_rows(const std::vector<Row>& rows, size_t batch,
                                    const std::function<void(size_t, size_t)>& progress) const {
  if (batch == 0) throw Error(ErrorKind::invalid_argument, "batch size must be at least 1");
  const int64_t D = dim();
  Tensor out = Tensor::zeros(DType::f32, {static_cast<int64_t>(rows.size()), D});
  // Longest first, stable: batches of similar lengths pad little.
  std::vector<size_t> order(rows.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return rows[a].ids->size() > rows[b].ids->size(); });
  for (size_t start = 0; start < order.size(); start += batch) {
    size_t n = std::min(batch, order.size() - start);
    int64_t S = bucket_length(static_cast<int64_t>(rows[order[start]].ids->size()), model_.spec.max_tokens());
    int64_t B = static_cast<int64_t>(n);
    Tensor ids = Tensor::zeros(DType::i64, {B, S}), mask = Tensor::zeros(DType::i64, {B, S}),
           types = Tensor::zeros(DType::i64, {B, S});
    int64_t *pi = ids.data_as<int64_t>(), *pm = mask.data_as<int64_t>(), *pt = types.data_as<int64_t>();
    for (int64_t r = 0; r < B; ++r) {
      const Row& row = rows[order[start + static_cast<size_t>(r)]];
      for (int64_t s = 0; s < S; ++s) {
        bool real = s < static_cast<int64_t>(row.ids->size());
        pi[r * S + s] = real ? (*row.ids)[static_cast<size_t>(s)] : pad_id_;
        pm[r * S + s] = real ? 1 : 0;
        pt[r * S + s] = real && row.types ? (*row.types)[static_cast<size_t>(s)] : 0;
      }
    }
    Tensor y = run(ids, mask, types).contiguous();
    const float* py = y.data_as<float>();
    float* po = out.data_as<float>();
    for (int64_t r = 0; r < B; ++r)
      std::memcpy(po + static_cast<int64_t>(order[start + static_cast<size_t>(r)]) * D, py + r * D, sizeof(float) * static_cast<size_t>(D));
    if (progress) progress(start + n, rows.size());
  }
  return out;
}

}  // namespace rlx::models
