// Reading sentence-transformers layouts and BERT checkpoints: pooling configs, module lists,
// the older 0_Transformer/ layout, and clear errors for what RLX cannot or will not run.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "models/bert.h"
#include "models/sentence_embedder.h"
#include "parity.h"
#include "rlx/error.h"

namespace rlx::models {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::string fixture(const std::string& name) { return std::string(RLX_FIXTURE_DIR) + "/" + name; }

// A scratch copy of a fixture directory, removed at the end of the test.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& from) {
    static int n = 0;
    path_ = fs::temp_directory_path() / ("rlx_bert_" + std::to_string(getpid()) + "_" + std::to_string(n++));
    fs::remove_all(path_);
    fs::copy(fixture(from), path_, fs::copy_options::recursive);
  }
  ~ScratchDir() { fs::remove_all(path_); }
  std::string str() const { return path_.string(); }
  void write(const std::string& rel, const std::string& text) const {
    fs::create_directories((path_ / rel).parent_path());
    std::ofstream(path_ / rel) << text;
  }
  fs::path operator/(const std::string& rel) const { return path_ / rel; }

 private:
  fs::path path_;
};

// Runs `fn` and returns the rlx::Error it throws (failing the test when it throws none).
template <class F>
Error error_of(F fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no rlx::Error thrown";
  return Error(ErrorKind::internal, "");
}

TEST(PoolingConfig, FlagsAndModeNames) {
  PoolingSpec p = parse_pooling_config(R"({"pooling_mode_cls_token": true, "pooling_mode_mean_tokens": true,
                                           "pooling_mode_max_tokens": false, "word_embedding_dimension": 384})", "t");
  EXPECT_EQ(p.modes, (std::vector<PoolingMode>{PoolingMode::cls, PoolingMode::mean}));
  EXPECT_FALSE(p.normalize);  // only a Normalize module turns it on
  EXPECT_EQ(p.dimension, 384);
  EXPECT_EQ(parse_pooling_config(R"({"pooling_mode": "lasttoken"})", "t").modes, std::vector<PoolingMode>{PoolingMode::last_token});
  EXPECT_EQ(error_of([] { parse_pooling_config(R"({"pooling_mode_mean_tokens": false})", "cfg.json"); }).kind(), ErrorKind::format);
  Error e = error_of([] { parse_pooling_config(R"({"pooling_mode_mean_tokens": "yes"})", "cfg.json"); });
  EXPECT_NE(std::string(e.what()).find("pooling_mode_mean_tokens"), std::string::npos) << e.what();
  EXPECT_EQ(error_of([] { parse_pooling_config(R"({"pooling_mode": "median"})", "cfg.json"); }).kind(), ErrorKind::format);
}

TEST(SentenceLayout, MaxPoolingWithoutNormalizeFromTheDirectory) {
  ScratchDir d("st_mean");
  d.write("modules.json", R"([{"idx":0,"name":"0","path":"","type":"sentence_transformers.models.Transformer"},
                              {"idx":1,"name":"1","path":"1_Pooling","type":"sentence_transformers.models.Pooling"}])");
  d.write("1_Pooling/config.json", R"({"word_embedding_dimension": 32, "pooling_mode_max_tokens": true})");
  SentenceEmbedder emb = SentenceEmbedder::open(d.str());
  EXPECT_FALSE(emb.model().layout.pooling.normalize);
  json e = json::parse(std::ifstream(fixture("st_mean") + "/expected.json"));
  const json& c = e["cases"][0];
  Tensor got = emb.embed({c["text"].get<std::string>()});
  double worst = 0;
  for (size_t i = 0; i < 32; ++i) worst = std::max(worst, std::abs(got.data_as<float>()[i] - c["pooled"]["max"][i].get<double>()));
  test::record_error(worst);
  EXPECT_LE(worst, 1e-5);
}

TEST(SentenceLayout, OlderTransformerSubdirectory) {
  // sentence-transformers 0.x kept the BERT model in 0_Transformer/.
  ScratchDir d("st_mean");
  fs::create_directory(d / "0_Transformer");
  for (const char* f : {"config.json", "model.safetensors", "vocab.txt", "tokenizer_config.json", "sentence_bert_config.json"})
    fs::rename(d / f, d / (std::string("0_Transformer/") + f));
  d.write("modules.json", R"([{"idx":0,"name":"0","path":"0_Transformer","type":"sentence_transformers.models.Transformer"},
                              {"idx":1,"name":"1","path":"1_Pooling","type":"sentence_transformers.models.Pooling"},
                              {"idx":2,"name":"2","path":"2_Normalize","type":"sentence_transformers.models.Normalize"}])");
  BertModel m = load_bert(d.str());
  EXPECT_EQ(fs::path(m.layout.transformer_dir).filename(), "0_Transformer");
  EXPECT_EQ(m.max_tokens, 40);  // its sentence_bert_config.json was read
  EXPECT_TRUE(m.layout.pooling.normalize);
}

TEST(SentenceLayout, UnsupportedModulesAreNamed) {
  ScratchDir d("st_mean");
  d.write("modules.json", R"([{"idx":0,"name":"0","path":"","type":"sentence_transformers.models.Transformer"},
                              {"idx":1,"name":"1","path":"1_Pooling","type":"sentence_transformers.models.Pooling"},
                              {"idx":2,"name":"2","path":"2_Dense","type":"sentence_transformers.models.Dense"}])");
  Error e = error_of([&] { load_bert(d.str()); });
  EXPECT_EQ(e.kind(), ErrorKind::unsupported);
  EXPECT_NE(std::string(e.what()).find("sentence_transformers.models.Dense"), std::string::npos) << e.what();
  d.write("modules.json", R"([{"idx":0,"name":"0","path":"../elsewhere","type":"sentence_transformers.models.Transformer"}])");
  EXPECT_EQ(error_of([&] { load_bert(d.str()); }).kind(), ErrorKind::format);
}

TEST(BertCheckpoint, MissingAndMisshapenWeightsAreNamed) {
  ScratchDir d("st_mean");
  json cfg = json::parse(std::ifstream(d / "config.json"));
  cfg["num_hidden_layers"] = 3;
  d.write("config.json", cfg.dump());
  Error e = error_of([&] { load_bert(d.str()); });
  EXPECT_EQ(e.kind(), ErrorKind::format);
  EXPECT_NE(std::string(e.what()).find("encoder.layer.2."), std::string::npos) << e.what();
  cfg["num_hidden_layers"] = 2;
  cfg["intermediate_size"] = 128;
  d.write("config.json", cfg.dump());
  e = error_of([&] { load_bert(d.str()); });
  EXPECT_NE(std::string(e.what()).find("intermediate.dense.weight"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("[128,32]"), std::string::npos) << e.what();
}

TEST(BertCheckpoint, OtherEncoderLayoutsAreRefusedClearly) {
  ScratchDir d("st_mean");
  json cfg = json::parse(std::ifstream(d / "config.json"));
  cfg["model_type"] = "distilbert";
  d.write("config.json", cfg.dump());
  Error e = error_of([&] { load_bert(d.str()); });
  EXPECT_EQ(e.kind(), ErrorKind::unsupported);
  EXPECT_NE(std::string(e.what()).find("distilbert"), std::string::npos) << e.what();
  cfg["model_type"] = "bert";
  cfg["hidden_act"] = "quick_gelu";
  d.write("config.json", cfg.dump());
  EXPECT_EQ(error_of([&] { load_bert(d.str()); }).kind(), ErrorKind::unsupported);
}

TEST(SentenceEmbedder, RejectsIdsOutsideTheVocabularyAndOverlongRows) {
  SentenceEmbedder emb = SentenceEmbedder::open(fixture("st_mean"));
  EXPECT_EQ(error_of([&] { emb.embed_ids({{2, 977, 3}}); }).kind(), ErrorKind::invalid_argument);
  std::vector<int32_t> row(65, 5);  // the position table holds 64
  EXPECT_EQ(error_of([&] { emb.embed_ids({row}); }).kind(), ErrorKind::invalid_argument);
  // Text longer than max_seq_length is truncated, not refused.
  std::string longer;
  for (int i = 0; i < 200; ++i) longer += "word ";
  EXPECT_EQ(emb.embed({longer}).shape(), (std::vector<int64_t>{1, 32}));
}

}  // namespace
}  // namespace rlx::models
