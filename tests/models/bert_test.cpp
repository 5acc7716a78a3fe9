// BERT sentence encoders against the plain-PyTorch reference (fixtures/bert, made by
// gen_fixtures.py): pooled embeddings within 1e-5 max abs in f32, for both safetensors layouts,
// sharded weights, every pooling mode, token types, truncation and padded batches.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>

#include <nlohmann/json.hpp>

#include "models/bert.h"
#include "models/bert_gguf.h"
#include "models/sentence_embedder.h"
#include "parity.h"
#include "rlx/error.h"
#include "rlx/session.h"

namespace rlx::models {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
constexpr double kTol = 1e-5;

std::string fixture(const std::string& name) { return std::string(RLX_FIXTURE_DIR) + "/" + name; }

json expected(const std::string& model) {
  std::ifstream f(fixture(model) + "/expected.json");
  return json::parse(f);
}

double max_abs_diff(const Tensor& got, int64_t row, const json& want) {
  Tensor c = got.contiguous();
  int64_t D = c.shape().back();
  EXPECT_EQ(static_cast<int64_t>(want.size()), D);
  double worst = 0;
  const float* p = c.data_as<float>() + row * D;
  for (int64_t i = 0; i < D; ++i) worst = std::max(worst, std::abs(static_cast<double>(p[i]) - want[static_cast<size_t>(i)].get<double>()));
  test::record_error(worst);
  return worst;
}

// Right-padded i64[B, S] ids, mask and token types from rows of ids.
struct Batch {
  Tensor ids, mask, types;
};
Batch pad_rows(const std::vector<std::vector<int64_t>>& rows, const std::vector<std::vector<int64_t>>& types = {}) {
  int64_t B = static_cast<int64_t>(rows.size()), S = 0;
  for (const auto& r : rows) S = std::max<int64_t>(S, static_cast<int64_t>(r.size()));
  Batch b{Tensor::zeros(DType::i64, {B, S}), Tensor::zeros(DType::i64, {B, S}), Tensor::zeros(DType::i64, {B, S})};
  for (int64_t i = 0; i < B; ++i)
    for (size_t s = 0; s < rows[static_cast<size_t>(i)].size(); ++s) {
      b.ids.data_as<int64_t>()[i * S + static_cast<int64_t>(s)] = rows[static_cast<size_t>(i)][s];
      b.mask.data_as<int64_t>()[i * S + static_cast<int64_t>(s)] = 1;
      if (!types.empty()) b.types.data_as<int64_t>()[i * S + static_cast<int64_t>(s)] = types[static_cast<size_t>(i)][s];
    }
  return b;
}

CompiledModel compile(const ir::Graph& g) { return Session("cpu").compile(Graph(std::make_shared<ir::Graph>(g))); }

std::vector<std::string> texts_of(const json& e) {
  std::vector<std::string> t;
  for (const auto& c : e["cases"]) t.push_back(c["text"].get<std::string>());
  return t;
}

TEST(Bert, SentenceTransformersDirectoryMatchesReference) {
  json e = expected("st_mean");
  SentenceEmbedder emb = SentenceEmbedder::open(fixture("st_mean"));
  EXPECT_FALSE(emb.model().layout.defaulted);
  EXPECT_TRUE(emb.model().layout.pooling.normalize);
  EXPECT_EQ(emb.model().weight_prefix, "");
  EXPECT_EQ(emb.model().max_tokens, e["max_tokens"].get<int64_t>());
  EXPECT_EQ(emb.dim(), e["dim"].get<int64_t>());
  // Batches of 4 mix lengths from 2 to 40 tokens: padding must not change any vector.
  Tensor got = emb.embed(texts_of(e), 4);
  for (size_t i = 0; i < e["cases"].size(); ++i) {
    const json& c = e["cases"][i];
    std::vector<int32_t> ids = emb.tokenizer().encode(c["text"].get<std::string>()).ids;
    EXPECT_EQ(ids, c["ids"].get<std::vector<int32_t>>()) << c["name"];
    EXPECT_LE(max_abs_diff(got, static_cast<int64_t>(i), c["embedding"]), kTol) << c["name"];
  }
}

// The oneapi device (every op a oneDNN primitive, data movement borrowed from cpu) runs the
// whole encoder — padded batches, masks, pooling — to the PyTorch reference's vectors.
TEST(Bert, OneapiDeviceMatchesReference) {
  json e = expected("st_mean");
  SentenceEmbedder emb = SentenceEmbedder::open(fixture("st_mean"), "oneapi");
  Tensor got = emb.embed(texts_of(e), 4);
  for (size_t i = 0; i < e["cases"].size(); ++i)
    EXPECT_LE(max_abs_diff(got, static_cast<int64_t>(i), e["cases"][i]["embedding"]), kTol) << e["cases"][i]["name"];
}

// The same model as a llama.cpp-layout GGUF (write_bert_gguf; llama.cpp's names, pooling and
// phantom-space WordPiece): loaded back, its tokenizer and vectors are the reference's (for the
// texts the directory's max_seq_length does not cut: GGUF does not record it).
TEST(Bert, GgufFileMatchesReference) {
  json e = expected("st_mean");
  SentenceEmbedder from_dir = SentenceEmbedder::open(fixture("st_mean"));
  std::string path = (fs::temp_directory_path() / "rlx_bert_st_mean.gguf").string();
  write_bert_gguf(path, from_dir.model(), from_dir.tokenizer());
  SentenceEmbedder emb = SentenceEmbedder::open(path);
  EXPECT_EQ(emb.dim(), e["dim"].get<int64_t>());
  EXPECT_TRUE(emb.model().layout.pooling.normalize);
  Tensor got = emb.embed(texts_of(e), 4);
  size_t compared = 0;
  for (size_t i = 0; i < e["cases"].size(); ++i) {
    const json& c = e["cases"][i];
    // GGUF keeps no sentence-transformers max_seq_length: texts the directory truncates run whole
    if (static_cast<int64_t>(c["ids"].size()) >= e["max_tokens"].get<int64_t>()) continue;
    EXPECT_EQ(emb.tokenizer().encode(c["text"].get<std::string>()).ids, c["ids"].get<std::vector<int32_t>>()) << c["name"];
    EXPECT_LE(max_abs_diff(got, static_cast<int64_t>(i), c["embedding"]), kTol) << c["name"];
    ++compared;
  }
  EXPECT_GE(compared + 3, e["cases"].size());
  fs::remove(path);
}

TEST(Bert, BatchSizeDoesNotChangeResults) {
  json e = expected("st_mean");
  SentenceEmbedder emb = SentenceEmbedder::open(fixture("st_mean"));
  Tensor one = emb.embed(texts_of(e), 1), all = emb.embed(texts_of(e), 64);
  for (size_t i = 0; i < e["cases"].size(); ++i) {
    EXPECT_LE(max_abs_diff(one, static_cast<int64_t>(i), e["cases"][i]["embedding"]), kTol);
    EXPECT_LE(max_abs_diff(all, static_cast<int64_t>(i), e["cases"][i]["embedding"]), kTol);
  }
}

TEST(Bert, LastHiddenStateMatchesReference) {
  json e = expected("st_mean");
  BertModel m = load_bert(fixture("st_mean"));
  const json& c = e["cases"][0];
  ASSERT_TRUE(c.contains("last_hidden_state"));
  std::vector<int64_t> ids = c["ids"].get<std::vector<int64_t>>();
  Batch b = pad_rows({ids});
  auto out = compile(m.graph({.hidden_states = true})).run({b.ids, b.mask, b.types});
  ASSERT_EQ(out.size(), 2u);
  Tensor h = out[1].reshape({static_cast<int64_t>(ids.size()), m.spec.hidden_size});
  for (size_t s = 0; s < ids.size(); ++s) EXPECT_LE(max_abs_diff(h, static_cast<int64_t>(s), c["last_hidden_state"][s]), kTol) << s;
}

TEST(Bert, EveryPoolingModeMatchesReference) {
  json e = expected("st_mean");
  BertModel m = load_bert(fixture("st_mean"));
  std::vector<std::vector<int64_t>> rows;
  std::vector<const json*> cases;
  for (const auto& c : e["cases"])
    if (c.contains("pooled")) {
      rows.push_back(c["ids"].get<std::vector<int64_t>>());
      cases.push_back(&c);
    }
  ASSERT_GE(rows.size(), 2u);
  Batch b = pad_rows(rows);
  const std::pair<PoolingMode, const char*> modes[] = {
      {PoolingMode::cls, "cls"},          {PoolingMode::max, "max"},
      {PoolingMode::mean, "mean"},        {PoolingMode::mean_sqrt_len, "mean_sqrt_len"},
      {PoolingMode::weighted_mean, "weightedmean"}, {PoolingMode::last_token, "lasttoken"}};
  for (const auto& [mode, key] : modes)
    for (bool normalize : {false, true}) {
      PoolingSpec p{{mode}, normalize, std::nullopt};
      Tensor got = compile(build_bert_graph(m.spec, p, m.weights)).run({b.ids, b.mask, b.types})[0];
      for (size_t i = 0; i < cases.size(); ++i)
        EXPECT_LE(max_abs_diff(got, static_cast<int64_t>(i), (*cases[i])[normalize ? "pooled_normalized" : "pooled"][key]), kTol)
            << key << (normalize ? " normalized" : "") << " " << (*cases[i])["name"];
    }
  // Several modes concatenate in sentence-transformers' order, then normalize together.
  PoolingSpec p{{PoolingMode::cls, PoolingMode::max, PoolingMode::mean}, true, std::nullopt};
  Tensor got = compile(build_bert_graph(m.spec, p, m.weights)).run({b.ids, b.mask, b.types})[0];
  EXPECT_EQ(got.shape()[1], 3 * m.spec.hidden_size);
  for (size_t i = 0; i < cases.size(); ++i)
    EXPECT_LE(max_abs_diff(got, static_cast<int64_t>(i), (*cases[i])["cls_max_mean_normalized"]), kTol);
}

TEST(Bert, TokenTypesOfASentencePair) {
  json e = expected("st_mean");
  SentenceEmbedder emb = SentenceEmbedder::open(fixture("st_mean"));
  const json& p = e["pair"];
  Batch b = pad_rows({p["ids"].get<std::vector<int64_t>>()}, {p["type_ids"].get<std::vector<int64_t>>()});
  EXPECT_LE(max_abs_diff(emb.run(b.ids, b.mask, b.types), 0, p["embedding"]), kTol);
}

TEST(Bert, PlainShardedPrefixedDirectoryDefaultsToMeanNormalize) {
  json e = expected("bert_plain");
  SentenceEmbedder emb = SentenceEmbedder::open(fixture("bert_plain"));
  const BertModel& m = emb.model();
  EXPECT_TRUE(m.layout.defaulted);
  EXPECT_NE(m.layout.description.find("mean pooling + L2 normalize"), std::string::npos);
  EXPECT_EQ(m.weight_prefix, "bert.");
  EXPECT_EQ(m.max_tokens, e["max_tokens"].get<int64_t>());
  Tensor got = emb.embed(texts_of(e), 3);
  for (size_t i = 0; i < e["cases"].size(); ++i) {
    const json& c = e["cases"][i];
    EXPECT_EQ(emb.tokenizer().encode(c["text"].get<std::string>()).ids, c["ids"].get<std::vector<int32_t>>()) << c["name"];
    EXPECT_LE(max_abs_diff(got, static_cast<int64_t>(i), c["embedding"]), kTol) << c["name"];
  }
}

TEST(Bert, RobertaPositionsGammaBetaAndClsPooling) {
  json e = expected("roberta_cls");
  BertModel m = load_bert(fixture("roberta_cls"));
  EXPECT_EQ(m.spec.position_offset, 2);
  EXPECT_EQ(m.weight_prefix, "roberta.");
  EXPECT_FALSE(m.layout.pooling.normalize);
  EXPECT_EQ(m.max_tokens, e["max_tokens"].get<int64_t>());
  std::vector<std::vector<int64_t>> rows;
  for (const auto& c : e["cases"]) rows.push_back(c["ids"].get<std::vector<int64_t>>());
  Batch b = pad_rows(rows);
  Tensor got = compile(m.graph()).run({b.ids, b.mask, b.types})[0];
  for (size_t i = 0; i < rows.size(); ++i) EXPECT_LE(max_abs_diff(got, static_cast<int64_t>(i), e["cases"][i]["embedding"]), kTol);
}

}  // namespace
}  // namespace rlx::models
