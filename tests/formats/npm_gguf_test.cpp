// GGUF written by RLX, read back by the independent npm parser @huggingface/gguf. The package
// is installed by `make setup` into ~/.cache/rlx-npm (outside the clone); when it is missing
// this test tries to install it into the build tree and skips if npm cannot reach a registry.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "formats/gguf.h"
#include "test_util.h"

namespace rlx::formats {
namespace {

namespace fs = std::filesystem;

std::string find_module_dir() {
  std::vector<std::string> dirs;
  if (const char* d = std::getenv("RLX_NPM_DIR")) dirs.push_back(d);
  if (const char* h = std::getenv("HOME")) dirs.push_back(std::string(h) + "/.cache/rlx-npm");
  dirs.push_back(std::string(RLX_BINARY_DIR) + "/npm");
  for (const auto& d : dirs)
    if (fs::exists(d + "/node_modules/@huggingface/gguf/package.json")) return d;
  std::string local = std::string(RLX_BINARY_DIR) + "/npm";
  if (test::run_command("command -v npm >/dev/null && timeout 300 npm install --silent --no-audit --no-fund --prefix " +
                            local + " @huggingface/gguf", nullptr, true) == 0 &&
      fs::exists(local + "/node_modules/@huggingface/gguf/package.json"))
    return local;
  return "";
}

// Our JSON against theirs: 64-bit integers arrive as decimal strings.
bool same(const nlohmann::json& ours, const nlohmann::json& theirs) {
  if (ours.is_number_integer() && theirs.is_string()) return ours.dump() == theirs.get<std::string>();
  if (ours.is_array() && theirs.is_array()) {
    if (ours.size() != theirs.size()) return false;
    for (size_t i = 0; i < ours.size(); ++i)
      if (!same(ours[i], theirs[i])) return false;
    return true;
  }
  return ours == theirs;
}

TEST(NpmGguf, MetadataWrittenByRlxReadsBackInHuggingFaceParser) {
  if (test::run_command("command -v node >/dev/null", nullptr) != 0) GTEST_SKIP() << "node is not installed";
  std::string modules = find_module_dir();
  if (modules.empty()) GTEST_SKIP() << "@huggingface/gguf is not installed and npm could not install it";

  GgufWriter w;
  std::vector<GgufValue> nested = {gguf_array_of<int32_t>(GgufType::i32, {1, -2}),
                                   gguf_array_of<int32_t>(GgufType::i32, {7})};
  std::vector<std::pair<std::string, GgufValue>> kvs = {
      {"general.architecture", GgufValue("llama")},
      {"general.name", GgufValue(std::string("RLX \xe2\x9c\x93 test"))},
      {"llama.context_length", GgufValue(uint32_t{4096})},
      {"llama.rope.freq_base", GgufValue(500000.0f)},
      {"t.u8", GgufValue(uint8_t{200})},
      {"t.i8", GgufValue(int8_t{-5})},
      {"t.u16", GgufValue(uint16_t{60000})},
      {"t.i16", GgufValue(int16_t{-600})},
      {"t.i32", GgufValue(int32_t{-70000})},
      {"t.f32", GgufValue(-0.375f)},
      {"t.bool", GgufValue(false)},
      {"t.u64", GgufValue(uint64_t{18446744073709551000ull})},
      {"t.i64", GgufValue(int64_t{-9000000000000000000ll})},
      {"t.f64", GgufValue(2.718281828459045)},
      {"tokenizer.ggml.tokens", gguf_array(std::vector<std::string>{"<s>", "</s>", "\xc4\xa0the", "\xe4\xb8\xad"})},
      {"tokenizer.ggml.scores", gguf_array_of<float>(GgufType::f32, {0.0f, -1.5f, -2.25f, -3.0f})},
      {"tokenizer.ggml.token_type", gguf_array_of<int32_t>(GgufType::i32, {3, 3, 1, 1})},
      {"t.nested", gguf_array(nested)},
  };
  for (const auto& [k, v] : kvs) w.set(k, v);
  std::vector<float> x(2 * 3 * 256, 0.5f);
  w.add_tensor_f32("token_embd.weight", {6, 256}, x.data(), WeightType::q4_k);
  w.add_tensor_f32("blk.0.ffn.weight", {2, 3, 256}, x.data(), WeightType::q8_0);
  w.add_tensor_f32("output_norm.weight", {256}, x.data(), WeightType::f32);
  std::string dir = test::scratch_dir("npm");
  w.write(dir + "/rlx.gguf");

  std::string out;
  ASSERT_EQ(0, test::run_command("node " + test::source_path("tests/fixtures/formats/read_gguf.mjs") + " " + modules +
                                     " " + dir + "/rlx.gguf", &out, true))
      << out;
  nlohmann::json j = nlohmann::json::parse(out);
  for (const auto& [k, v] : kvs) {
    ASSERT_TRUE(j["metadata"].contains(k)) << k;
    EXPECT_TRUE(same(v.to_json(), j["metadata"][k])) << k << ": ours " << v.to_json() << ", theirs " << j["metadata"][k];
  }
  EXPECT_EQ(j["metadata"]["version"], 3);
  const auto& infos = j["tensorInfos"];
  ASSERT_EQ(infos.size(), 3u);
  EXPECT_EQ(infos[0]["name"], "token_embd.weight");
  EXPECT_EQ(infos[0]["shape"], nlohmann::json({"256", "6"}));  // innermost first, as stored
  EXPECT_EQ(infos[0]["dtype"], 12);                             // Q4_K
  EXPECT_EQ(infos[1]["shape"], nlohmann::json({"256", "3", "2"}));
  EXPECT_EQ(infos[1]["dtype"], 8);                              // Q8_0
  EXPECT_EQ(infos[2]["dtype"], 0);
}

}  // namespace
}  // namespace rlx::formats
