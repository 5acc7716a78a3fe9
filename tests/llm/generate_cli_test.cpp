// `rlx generate` (the CLI binary) against the PyTorch reference's greedy ids, and its errors.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "models/qwen3_model.h"
#include "models/qwen3_weights.h"

namespace {

using json = nlohmann::json;

struct CliRun {
  int code = 0;
  std::string out;
};

CliRun run(const std::string& args) {
  std::string cmd = std::string(RLX_CLI) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  CliRun r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string fixture(const std::string& name) { return std::string(RLX_FIXTURE_DIR) + "/" + name; }

json expected(const std::string& name) {
  std::ifstream f(fixture(name) + "/expected.json");
  return json::parse(f);
}

std::string ids_arg(const json& ids) {
  std::string s;
  for (const auto& id : ids) s += (s.empty() ? "" : ",") + std::to_string(id.get<int>());
  return s;
}

class GenerateCli : public ::testing::TestWithParam<const char*> {};

TEST_P(GenerateCli, GreedyIdsMatchTheReference) {
  json e = expected(GetParam());
  std::string common = "generate --model " + fixture(GetParam()) + " --temperature 0 --max-tokens 64 --ignore-eos --json";
  CliRun r = run(common + " --prompt-ids " + ids_arg(e["prompt_ids"]));
  ASSERT_EQ(r.code, 0) << r.out;
  json j = json::parse(r.out);
  EXPECT_EQ(j["ids"], e["greedy"]);
  EXPECT_EQ(j["prompt_tokens"], e["prompt_ids"].size());
  EXPECT_EQ(j["generated_tokens"], 64);
  EXPECT_EQ(j["stop_reason"], "length");
  EXPECT_GT(j["decode_tokens_per_second"].get<double>(), 0);
  // The same prompt as text goes through the model's tokenizer.
  std::string text = e["prompt_text"].get<std::string>();
  r = run(common + " --prompt '" + text + "'");
  ASSERT_EQ(r.code, 0) << r.out;
  j = json::parse(r.out);
  EXPECT_EQ(j["prompt_ids"], e["prompt_ids"]);
  EXPECT_EQ(j["ids"], e["greedy"]);
}

TEST_P(GenerateCli, GgufFileWithItsTokenizerGivesTheSameIds) {
  // F32 GGUF written by RLX (llama: Q/K rows permuted as llama.cpp's converter does), tokenizer
  // from tokenizer.ggml.*.
  using namespace rlx::models;
  json e = expected(GetParam());
  LlamaModel m = load_llama_model(fixture(GetParam()));
  std::string path = (std::filesystem::temp_directory_path() / (std::string("rlx_cli_") + GetParam() + ".gguf")).string();
  GgufExportOptions o;
  o.matrix_type = rlx::formats::WeightType::f32;
  o.tokenizer_json = fixture(GetParam()) + "/tokenizer.json";
  write_llama_gguf(path, m.spec, m.weights, o);
  CliRun r = run("generate --model " + path + " --prompt '" + e["prompt_text"].get<std::string>() +
                 "' --temperature 0 --max-tokens 64 --ignore-eos --json");
  ASSERT_EQ(r.code, 0) << r.out;
  json j = json::parse(r.out);
  EXPECT_EQ(j["prompt_ids"], e["prompt_ids"]);
  EXPECT_EQ(j["ids"], e["greedy"]);
  // rlx tokenize reads the GGUF's tokenizer without its weights: the same ids as tokenizer.json
  CliRun t = run("tokenize --model " + path + " --text '" + e["prompt_text"].get<std::string>() + "' --json");
  CliRun d = run("tokenize --model " + fixture(GetParam()) + " --text '" + e["prompt_text"].get<std::string>() + "' --json");
  ASSERT_EQ(t.code, 0) << t.out;
  ASSERT_EQ(d.code, 0) << d.out;
  EXPECT_EQ(json::parse(t.out)["ids"], json::parse(d.out)["ids"]);
  std::filesystem::remove(path);
}

INSTANTIATE_TEST_SUITE_P(Tiny, GenerateCli, ::testing::Values("qwen3_tiny", "llama_tiny", "qwen2_tiny"));

TEST(GenerateCliOptions, StreamsTextAndSamples) {
  // Streamed text, the chat template, and seeded sampling from generation_config.json.
  CliRun a = run("generate --model " + fixture("qwen3_tiny") + " --prompt hi --chat --no-think --max-tokens 8 --seed 3 --json");
  CliRun b = run("generate --model " + fixture("qwen3_tiny") + " --prompt hi --chat --no-think --max-tokens 8 --seed 3 --json");
  ASSERT_EQ(a.code, 0) << a.out;
  json ja = json::parse(a.out), jb = json::parse(b.out);
  EXPECT_EQ(ja["ids"], jb["ids"]);
  EXPECT_DOUBLE_EQ(ja["sampling"]["temperature"].get<double>(), 0.6);
  EXPECT_EQ(ja["prompt_ids"][0], 495);  // <|im_start|>
  CliRun s = run("generate --model " + fixture("qwen3_tiny") + " --prompt hi --max-tokens 5 --temperature 0");
  EXPECT_EQ(s.code, 0) << s.out;
  EXPECT_NE(s.out.find("[rlx generate: "), std::string::npos) << s.out;
}

TEST(GenerateCliOptions, ChatTemplateFromAFileReplacesTheModels) {
  // A jinja2-checked fixture template (chat_templates/): the prompt fed to the model is its
  // rendering, as Python jinja2 gave it, tokenized by the model's tokenizer.
  std::string dir = std::string(RLX_FIXTURE_DIR) + "/../chat_templates/";
  json cases = json::parse(std::ifstream(dir + "cases.json"));
  const json* c = nullptr;
  for (const auto& x : cases)
    if (x["name"] == "chatml_single_user_gen") c = &x;
  ASSERT_NE(c, nullptr);
  std::string user = (*c)["context"]["messages"][0]["content"].get<std::string>();
  CliRun r = run("generate --model " + fixture("qwen3_tiny") + " --prompt '" + user + "' --chat --chat-template " + dir +
                 "templates/chatml_thinking.jinja --max-tokens 1 --temperature 0 --json");
  ASSERT_EQ(r.code, 0) << r.out;
  rlx::models::LlamaModel m = rlx::models::load_llama_model(fixture("qwen3_tiny"));
  std::vector<int32_t> want = m.tokenizer->encode((*c)["expected"].get<std::string>(), false).ids;
  EXPECT_EQ(json::parse(r.out)["prompt_ids"].get<std::vector<int32_t>>(), want);
  // a template with a syntax error is refused up front, naming the file and line
  std::string bad = (std::filesystem::temp_directory_path() / "rlx_bad_template.jinja").string();
  std::ofstream(bad) << "line one\n{% if x %}never closed";
  r = run("generate --model " + fixture("qwen3_tiny") + " --prompt hi --chat --chat-template " + bad);
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("rlx_bad_template.jinja"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("endif"), std::string::npos) << r.out;
  std::filesystem::remove(bad);
}

TEST(GenerateCliOptions, BadInputIsOneParagraphAndNonZero) {
  CliRun r = run("generate --model /nonexistent --prompt hi");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("/nonexistent"), std::string::npos) << r.out;
  r = run("generate --model " + fixture("qwen3_tiny") + " --prompt hi --prompt-ids 1,2");
  EXPECT_EQ(r.code, 2) << r.out;
  r = run("generate --model " + fixture("qwen3_tiny") + " --prompt-ids 1,x");
  EXPECT_EQ(r.code, 2) << r.out;
  r = run("generate --model " + fixture("qwen3_tiny") + " --prompt-ids 100000");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("outside the vocabulary"), std::string::npos) << r.out;
}

}  // namespace
