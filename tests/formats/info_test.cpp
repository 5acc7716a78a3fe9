// `rlx info`: the command-line contract on a sharded safetensors directory and a GGUF file.
// Runs the built CLI when it exists (it needs the whole compiler to link).
#include <gtest/gtest.h>

#include <filesystem>

#include "formats/gguf.h"
#include "formats/inspect.h"
#include "formats/safetensors.h"
#include "rlx/error.h"
#include "test_util.h"

namespace rlx::formats {
namespace {

bool have_cli() { return std::filesystem::exists(RLX_CLI_PATH); }

std::string make_sharded_dir() {
  std::string dir = test::scratch_dir("model");
  std::vector<float> v(8, 1.0f);
  write_safetensors(dir + "/model-00001-of-00002.safetensors",
                    {view_of("model.embed_tokens.weight", Tensor::from_vector(v, {4, 2})),
                     view_of("model.norm.weight", Tensor::from_vector(std::vector<float>{1, 2}, {2}))});
  write_safetensors(dir + "/model-00002-of-00002.safetensors",
                    {view_of("lm_head.weight", Tensor::from_vector(std::vector<int32_t>{1, 2, 3, 4, 5, 6}, {2, 3}))});
  test::write_text(dir + "/model.safetensors.index.json",
                   R"({"metadata": {"total_size": 64}, "weight_map": {
                        "model.embed_tokens.weight": "model-00001-of-00002.safetensors",
                        "model.norm.weight": "model-00001-of-00002.safetensors",
                        "lm_head.weight": "model-00002-of-00002.safetensors"}})");
  test::write_text(dir + "/config.json", R"({"model_type": "qwen3", "hidden_size": 2, "num_attention_heads": 1,
      "num_key_value_heads": 1, "head_dim": 2, "vocab_size": 4, "rope_theta": 1000000})");
  test::write_text(dir + "/tokenizer.json", "{}");
  return dir;
}

TEST(Info, ShardedDirectoryListsEveryTensorOnce) {
  std::string dir = make_sharded_dir();
  nlohmann::json j = inspect_json(inspect(dir));
  EXPECT_EQ(j["format"], "safetensors");
  EXPECT_EQ(j["files"].size(), 2u);
  EXPECT_EQ(j["config"]["rope_theta"], 1000000.0);
  ASSERT_EQ(j["tensors"].size(), 3u);
  if (!have_cli()) GTEST_SKIP() << "the rlx CLI is not built (" << RLX_CLI_PATH << ")";
  std::string out;
  ASSERT_EQ(0, test::run_command(std::string(RLX_CLI_PATH) + " info " + dir + " --json", &out)) << out;
  nlohmann::json cli = nlohmann::json::parse(out);
  EXPECT_EQ(cli["format"], "safetensors");
  std::map<std::string, nlohmann::json> by_name;
  for (const auto& t : cli["tensors"]) {
    EXPECT_TRUE(by_name.emplace(t["name"].get<std::string>(), t).second) << "listed twice: " << t["name"];
  }
  ASSERT_EQ(by_name.size(), 3u);
  EXPECT_EQ(by_name["model.embed_tokens.weight"]["dtype"], "F32");
  EXPECT_EQ(by_name["model.embed_tokens.weight"]["shape"], nlohmann::json({4, 2}));
  EXPECT_EQ(by_name["lm_head.weight"]["dtype"], "I32");
  EXPECT_EQ(by_name["lm_head.weight"]["shape"], nlohmann::json({2, 3}));
  EXPECT_EQ(by_name["model.norm.weight"]["shape"], nlohmann::json({2}));
  EXPECT_EQ(cli["metadata"]["total_size"], "64");

  out.clear();
  ASSERT_EQ(0, test::run_command(std::string(RLX_CLI_PATH) + " info " + dir, &out)) << out;
  EXPECT_NE(out.find("format: safetensors"), std::string::npos) << out;
  EXPECT_NE(out.find("lm_head.weight"), std::string::npos) << out;
  EXPECT_NE(out.find("tensors (3)"), std::string::npos) << out;
}

TEST(Info, GgufFileAndErrors) {
  std::string dir = test::scratch_dir("gguf");
  GgufWriter w;
  w.set("general.architecture", GgufValue("llama"));
  w.set("llama.block_count", GgufValue(uint32_t{2}));
  std::vector<float> x(512, 0.25f);
  w.add_tensor_f32("blk.0.attn_q.weight", {2, 256}, x.data(), WeightType::q6_k);
  w.write(dir + "/m.gguf");
  nlohmann::json j = inspect_json(inspect(dir + "/m.gguf"));
  EXPECT_EQ(j["format"], "gguf");
  EXPECT_EQ(j["metadata"]["llama.block_count"], 2);
  EXPECT_EQ(j["tensors"][0]["dtype"], "Q6_K");
  EXPECT_EQ(j["tensors"][0]["shape"], nlohmann::json({2, 256}));
  test::write_bytes(dir + "/pickle.safetensors", {0x80, 0x02, 'c', 'x', '\n'});
  EXPECT_THROW(inspect(dir + "/pickle.safetensors"), Error);
  if (!have_cli()) GTEST_SKIP() << "the rlx CLI is not built";
  std::string out;
  ASSERT_EQ(0, test::run_command(std::string(RLX_CLI_PATH) + " info " + dir + "/m.gguf --json", &out)) << out;
  EXPECT_EQ(nlohmann::json::parse(out)["tensors"][0]["dtype"], "Q6_K");
  out.clear();
  int rc = test::run_command(std::string(RLX_CLI_PATH) + " info " + dir + "/pickle.safetensors", &out, true);
  EXPECT_NE(rc, 0);
  EXPECT_NE(out.find("Python pickle"), std::string::npos) << out;
}

}  // namespace
}  // namespace rlx::formats
